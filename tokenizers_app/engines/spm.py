"""``SentencePieceEngine``: a SentencePiece ``.model`` (BPE or Unigram), encoded and decoded by
the ``sentencepiece`` library.

The model bytes as the library serializes them are the canonical file (``canonical``). Control
pieces (``<s>``, ``</s>``) are the special tokens: the library never makes them from text, so
``encode_ordinary`` gives the text's ids alone (no BOS/EOS); ``encode`` with an allowed special
token cuts the text there and encodes each side, as a SentencePiece user who adds ``<s>`` does.
A BPE model's merges are read from its pieces (``pieces_merges``), as Hugging Face's converter
reads them; they are shown, never used to encode (the library encodes).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate, chain

from ..bpe.special_tokens import check_allowed_special, special_regex, split_special
from .batch_totals import texts_with
from .library import LibraryEngine
from .spm_lines import LineRoundTrip
from .spm_offsets import NormalizedOffsets, varint as _varint
from .spm_words import WordCoverage
from .spans import flat_cuts, tidy_columns, tidy_spans, with_ids

# what the model's trainer spec calls its model types
MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "Word", 4: "Char"}


def load_sentencepiece(data: bytes):
    """The library's processor of a ``.model``; ``ValueError`` when the bytes are not one."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(data)
    except Exception as exc:  # the library's parse error
        raise ValueError(f"sentencepiece cannot load this model: {str(exc)[:200]}") from None
    if processor.get_piece_size() == 0:
        raise ValueError("sentencepiece read a model without pieces")
    return processor


def is_sentencepiece(data: bytes) -> bool:
    """Whether the bytes are a SentencePiece model (by their content, whatever the file's
    name): a protobuf that the library loads."""
    if not data or data.lstrip()[:1] in (b"{", b"[") or data.startswith(b"minbpe"):
        return False
    try:
        load_sentencepiece(data)
    except ValueError:
        return False
    return True


class SentencePieceEngine(LibraryEngine):
    """A ``.model`` behind the app's ``Engine`` protocol."""

    algorithm = "sentencepiece"
    merge_counts = None

    def __init__(self, data: bytes):
        self._sp = load_sentencepiece(data)
        self.canonical = self._sp.serialized_model_proto()
        sp, size = self._sp, self._sp.get_piece_size()
        self.vocab = {i: sp.id_to_piece(i).encode() for i in range(size)}
        self.scores = [sp.get_score(i) for i in range(size)]
        self.kinds = [piece_kind(sp, i) for i in range(size)]
        self.special_ids = {sp.id_to_piece(i): i for i in range(size) if sp.is_control(i)}
        self.special_tokens = list(self.special_ids)
        unknown = [i for i in range(size) if sp.is_unknown(i)]
        self.unk_id = unknown[0] if unknown else None
        self.byte_ids = frozenset(i for i in range(size) if sp.is_byte(i))
        self.model_type = model_type(self.canonical)
        self.pattern = (f"SentencePiece {self.model_type}; normalization "
                        f"{normalization_rule(self.canonical)}")
        self.merges = pieces_merges(self.vocab, self.kinds) if self.model_type == "BPE" else []
        self._lengths = None  # each piece's length in bytes (span_columns)

    def vocab_kinds(self):
        """``(id, piece bytes, kind, score)`` by id (``piece_kind``)."""
        for token_id, token in sorted(self.vocab.items()):
            yield token_id, token, self.kinds[token_id], self.scores[token_id]

    def encode_ordinary(self, text: str) -> list[int]:
        return self._sp.encode(text, add_bos=False, add_eos=False)

    def encode_ordinary_batch(self, texts: list[str]) -> list[list[int]]:
        return self._sp.encode(texts, add_bos=False, add_eos=False)

    def _encoded(self, text: str, allowed_special, disallowed_special):
        allowed = check_allowed_special(self.special_tokens, allowed_special, disallowed_special,
                                        text)
        found, offset = [], 0
        for segment, is_special in split_special(text, special_regex(allowed)):
            size = len(segment.encode())
            if is_special:
                found.append((self.special_ids[segment], offset, offset + size))
            elif segment:
                found += self._spans_of(segment, offset)
            offset += size
        return found

    def _spans_of(self, text: str, offset: int) -> list[tuple[int, int, int]]:
        mapped = self._sp.encode(text, add_bos=False, add_eos=False,
                                 return_type="offset_mapping", return_bytes=True)
        ids, spans = mapped["ids"], mapped["offsets"]
        del mapped  # its pieces, one bytes object per token
        return with_ids(ids, tidy_spans(spans, [i in self.byte_ids for i in ids]), offset)

    def span_columns(self, texts: list[str]) -> list[tuple[list, list, list]]:
        """``evaluation.span_columns(token_spans(text, ()))`` for each text, from
        ``batch_columns`` (its arrays cut back into texts)."""
        id_lists, _, starts, ends, places = self.batch_columns(texts)
        found, first = [], 0
        for ids, place in zip(id_lists, places):
            last = first + len(ids)
            found.append((ids, (starts[first:last] - place).tolist(),
                          (ends[first:last] - place).tolist()))
            first = last
        return found

    def batch_columns(self, texts: list[str]):
        """``(ids per text, ids, starts, ends, places)``: the tokens' ids and byte spans as
        arrays (numpy) over the texts joined, ``places`` where each text starts, without the
        library's offset-mapping encode (4-6x its plain encode): the ids of all the texts in
        one call; each token's normalized bytes are its piece's (the normalizer writes ``▁``
        where the piece has it; a byte piece is one byte; an unknown piece is its text, from a
        pieces encode of the texts that have one, in one call), so its span is where the
        normalizer's offsets (``spm_offsets``: computed for a text of plain ASCII, else the
        library's) take the running sum of its pieces' lengths (``spans.flat_cuts``), as the
        library makes its offset mapping; then ``tidy_spans`` for a text with byte pieces,
        ``tidy_columns`` for one whose spans go backwards (spans that follow each other need
        nothing more)."""
        import numpy as np

        encoded = [text.encode() for text in texts]
        id_lists = self.encode_ordinary_batch(texts)
        counts = np.fromiter(map(len, id_lists), np.int64, len(texts))
        ids = np.fromiter(chain.from_iterable(id_lists), np.int64, int(counts.sum()))
        sizes = self._piece_bytes()[ids]
        firsts = np.cumsum(counts) - counts
        places = list(accumulate(map(len, encoded), initial=0))[:-1]

        unknown = texts_with(ids == self.unk_id, firsts) if self.unk_id is not None else []
        if unknown:  # their pieces, in one call: an unknown piece is its normalized text
            for k, pieces in zip(unknown, self._sp.encode([texts[k] for k in unknown],
                                                          add_bos=False, add_eos=False,
                                                          out_type=bytes)):
                sizes[firsts[k]:firsts[k] + counts[k]] = list(map(len, pieces))
        starts, ends = flat_cuts(*self._normalized_offsets()(encoded), sizes, counts, places)
        byte_texts = (texts_with(np.isin(ids, list(self.byte_ids)), firsts) if self.byte_ids
                      else [])
        for k in sorted(set(byte_texts).union(texts_with(starts > ends, firsts))):
            first, last, place = firsts[k], firsts[k] + counts[k], places[k]
            local = (starts[first:last] - place).tolist(), (ends[first:last] - place).tolist()
            if k in byte_texts:
                spans = tidy_spans(list(zip(*local)), [i in self.byte_ids for i in id_lists[k]])
                local = [s for s, _ in spans], [e for _, e in spans]
            else:
                local = tidy_columns(*local)
            starts[first:last], ends[first:last] = (np.asarray(c) + place for c in local)
        return id_lists, ids, starts, ends, places

    def round_trips(self, lines: list[str]) -> list[bool]:
        """``decode(encode_ordinary(line)) == line`` for each line (``spm_lines``)."""
        if getattr(self, "_round_trip", None) is None:
            offsets = self._normalized_offsets()
            self._round_trip = LineRoundTrip(self._sp, self.canonical, self._field,
                                             self.encode_ordinary_batch, self.decode_batch,
                                             (offsets.plain, offsets.space))
        return self._round_trip(lines)

    def words_covered(self, words: list[str]) -> list[bool]:
        """Whether each word is one token that is not special (``spm_words``)."""
        if getattr(self, "_coverage", None) is None:
            self.round_trips([])  # (its one-character pieces)
            offsets, copies = self._normalized_offsets(), ""
            if offsets.plain is not None and self.model_type in ("Unigram", "BPE"):
                copies = "".join(chr(b) for b in range(128) if offsets.plain[b]
                                 and not offsets.space[b])
            self._coverage = WordCoverage(
                {token.decode() for token in self.vocab.values()}, self._round_trip.safe, copies,
                offsets.dummy, self.encode_ordinary_batch, set(self.special_ids.values()))
        return self._coverage(words)

    def _field(self, data: bytes, number: int):
        """``_field``, each of the model's own fields read once (each walks all its pieces)."""
        if data is not self.canonical:
            return _field(data, number)
        fields = self.__dict__.setdefault("_fields", {})
        if number not in fields:
            fields[number] = _field(data, number)
        return fields[number]

    def _normalized_offsets(self) -> NormalizedOffsets:
        if getattr(self, "_offsets", None) is None:
            self._offsets = NormalizedOffsets(self._sp, self.canonical, self._field)
        return self._offsets

    def _piece_bytes(self):
        """Each piece's length in normalized bytes (numpy): a byte piece's is 1."""
        if getattr(self, "_lengths", None) is None:
            import numpy as np

            self._lengths = np.array([1 if i in self.byte_ids else len(self.vocab[i])
                                      for i in range(len(self.vocab))], dtype=np.int64)
        return self._lengths

    def decode(self, ids: Iterable[int]) -> str:
        ids = self._known(ids)
        return self._sp.decode(ids)

    def decode_batch(self, batch: list[list[int]]) -> list[str]:
        return self._sp.decode(batch)

    def __repr__(self) -> str:
        return f"SentencePieceEngine({self.model_type}, vocab_size={self.vocab_size})"


def pieces_merges(vocab: dict[int, bytes], kinds: list[str]) -> list[tuple[bytes, bytes]]:
    """The merges a SentencePiece BPE model's pieces imply (its ids follow its scores, best
    first): each normal piece of two or more characters, cut in two where both parts are normal
    pieces, in the order of the piece's id, then of its parts' ids.

    ``pieces_merges({0: b"a", 1: b"b", 2: b"ab"}, ["normal"] * 3) -> [(b"a", b"b")]``
    """
    ids = {token: i for i, token in vocab.items() if kinds[i] == "normal"}
    merges: list[tuple[bytes, bytes]] = []
    for token_id in sorted(vocab):
        if kinds[token_id] != "normal":
            continue
        text = vocab[token_id].decode("utf-8", errors="replace")
        cuts = [(text[:cut].encode(), text[cut:].encode()) for cut in range(1, len(text))]
        found = [(ids[left], ids[right]) for left, right in cuts if left in ids and right in ids]
        merges += [(vocab[left], vocab[right]) for left, right in sorted(found)]
    return merges


def piece_kind(processor, token_id: int) -> str:
    """``unknown``, ``control``, ``byte`` or ``normal`` (user-defined pieces are normal: the
    library makes them from text like any other)."""
    if processor.is_unknown(token_id):
        return "unknown"
    if processor.is_control(token_id):
        return "control"
    if processor.is_byte(token_id):
        return "byte"
    return "normal"


def model_type(proto: bytes) -> str:
    """The model type in the trainer spec (field 2 of the ModelProto, whose field 3 is the
    model type), read without a protobuf library: ``"BPE"`` or ``"Unigram"``."""
    trainer_spec = _field(proto, 2)
    code = _field(trainer_spec, 3) if isinstance(trainer_spec, bytes) else None
    return MODEL_TYPES.get(code if isinstance(code, int) else 1, "Unigram")


def normalization_rule(proto: bytes) -> str:
    """The normalization rule's name (field 1 of the normalizer spec, field 3 of the model):
    ``"nmt_nfkc"``, ``"identity"``."""
    spec = _field(proto, 3)
    name = _field(spec, 1) if isinstance(spec, bytes) else None
    return name.decode("utf-8", errors="replace") if isinstance(name, bytes) else "unknown"


def _field(data: bytes, number: int):
    """The first value of field ``number`` in a protobuf message (bytes for a length-delimited
    field, an int for a varint), or None."""
    index = 0
    while index < len(data):
        key, index = _varint(data, index)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, index = _varint(data, index)
        elif wire == 2:
            size, index = _varint(data, index)
            value, index = data[index:index + size], index + size
        elif wire == 5:
            value, index = data[index:index + 4], index + 4
        elif wire == 1:
            value, index = data[index:index + 8], index + 8
        else:
            return None
        if field == number:
            return value
    return None

