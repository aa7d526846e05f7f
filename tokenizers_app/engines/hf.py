"""``HFEngine``: any ``tokenizer.json`` that Hugging Face ``tokenizers`` loads (BPE with byte
fallback and Metaspace, WordPiece, Unigram, byte-level BPE with normalizers our core does not
read), encoded and decoded by that library.

``HFEngine(tokenizer_json_bytes)`` keeps the library's own serialization as the canonical file
(``canonical``: ``Tokenizer.to_str()``, so the same tokenizer written with other spacing or key
order is the same content). ``encode_ordinary`` gives the ids of ``encode(text,
add_special_tokens=False)`` with special-token text encoded as plain text (the library's
``encode_special_tokens``): no ``[CLS]``/``<s>`` template and no special ids.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Iterable
from itertools import compress
from operator import itemgetter, le, lt, sub

from ..bpe.special_tokens import check_allowed_special, special_regex, split_special
from ..errors import Unencodable
from .hf_columns import batch_columns
from .hf_lossless import first_chars, output_chars, round_trips, single_spaces
from .hf_parts import LineParts, line_rule
from .hf_words import ascii_rule, covers, model_pieces, one_token_mark
from .library import LibraryEngine
from .spans import char_to_byte_offsets, span_columns, tidy_columns, tidy_spans, with_ids

BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
MODEL_TYPES = ("BPE", "WordPiece", "Unigram", "WordLevel")


def load_hf(data: bytes):
    """The library's ``Tokenizer`` of a ``tokenizer.json``; ``ValueError`` saying why when the
    library cannot read it."""
    import tokenizers

    try:
        return tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"the tokenizer.json is not UTF-8 text (byte {exc.start})") from None
    except Exception as exc:  # the library's own error type, with its message
        raise ValueError(f"Hugging Face tokenizers cannot load this tokenizer.json: "
                         f"{str(exc)[:200]}") from None


class HFEngine(LibraryEngine):
    """A ``tokenizer.json`` behind the app's ``Engine`` protocol."""

    algorithm = "hf"
    merge_counts = None

    def __init__(self, data: bytes):
        self._special = load_hf(data)  # splits special tokens out of the text, as HF does
        self.canonical = self._special.to_str().encode()
        self._ordinary = load_hf(self.canonical)
        self._ordinary.encode_special_tokens = True  # special-token text is plain text
        doc = json.loads(self.canonical)
        model = doc.get("model") or {}
        self.model_type = model.get("type", "")
        self.pattern = describe(doc)
        rule = line_rule(doc)
        # through a weak reference: no cycle, so an engine a child forgets is freed at once
        # (a cycle kept each forgotten version's library memory until the collector ran)
        batch = weakref.WeakMethod(self.encode_ordinary_batch)
        self._parts = (LineParts(rule, self._ordinary, lambda texts: batch()(texts)) if rule
                       else None)
        pieces = self._special.get_vocab(with_added_tokens=True)
        _check_ids(json.loads(data).get("model") or {}, pieces)  # as given: the library dedups
        self.vocab = {token_id: piece.encode() for piece, token_id in pieces.items()}
        self._output_chars = output_chars(doc, pieces)  # what decoding can write (or None)
        self._first_chars = first_chars(doc, rule)  # what it can start with (or None)
        self._single_spaces = single_spaces(doc, pieces)  # never two spaces in a row
        added = self._special.get_added_tokens_decoder()
        self.special_ids = {added[i].content: i for i in sorted(added) if added[i].special}
        self.special_tokens = list(self.special_ids)
        special = set(self.special_ids.values())  # which words may be one token (``hf_words``)
        self._one_token = (one_token_mark(doc, rule, special, pieces), model_pieces(doc),
                           ascii_rule(doc, special, pieces))
        self.unk_id = _unk_id(model, pieces)
        self.byte_ids = frozenset(pieces[p] for p in pieces if BYTE_PIECE.fullmatch(p)) \
            if model.get("byte_fallback") else frozenset()
        self.merges = [(left.encode(), right.encode()) for left, right in _merges(model)]

    def vocab_kinds(self):
        """``(id, piece bytes, kind, score)`` by id: ``unknown``, ``special`` (an added special
        token), ``byte`` (a ``<0xNN>`` piece of a byte-fallback model) or ``normal``; no
        scores."""
        for token_id, token in sorted(self.vocab.items()):
            kind = ("unknown" if token_id == self.unk_id else
                    "special" if token_id in self.special_ids.values() else
                    "byte" if token_id in self.byte_ids else "normal")
            yield token_id, token, kind, None

    def encode_ordinary(self, text: str) -> list[int]:
        return self._encode(self._ordinary, text).ids

    def encode_ordinary_batch(self, texts: list[str]) -> list[list[int]]:
        try:
            return [e.ids for e in self._ordinary.encode_batch(texts, add_special_tokens=False)]
        except Exception as exc:  # the library's own error: a text it cannot spell
            raise self._unencodable("".join(texts), exc) from None

    def _encode(self, library, text: str):
        """``library.encode(text)``; ``Unencodable`` naming the characters it cannot spell
        when the library refuses (a Unigram without an unknown token)."""
        try:
            return library.encode(text, add_special_tokens=False)
        except Exception as exc:  # the library's own error type
            raise self._unencodable(text, exc) from None

    def _unencodable(self, text: str, exc: Exception) -> Exception:
        """The characters of ``text`` that this tokenizer cannot encode alone, in words (the
        first with its place); the library's error when every character encodes alone."""
        bad, first = [], None
        for char in dict.fromkeys(text):
            try:
                self._ordinary.encode(char, add_special_tokens=False)
            except Exception:
                bad.append(char)
                first = text.index(char) if first is None else first
        if not bad:
            return ValueError(f"Hugging Face tokenizers cannot encode this text: {exc}")
        named = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        return Unencodable(
            f"this {self.model_type or 'tokenizer'} cannot encode {len(bad)} character"
            f"{'s' if len(bad) != 1 else ''} of the text, first {bad[0]!r} (U+{ord(bad[0]):04X}) "
            f"at character {first}: {named}{more}. No piece of its vocabulary spells "
            f"{'them' if len(bad) != 1 else 'it'} and it has no unknown token to stand in",
            field="text")

    def _encoded(self, text: str, allowed_special, disallowed_special):
        allowed = check_allowed_special(self.special_tokens, allowed_special, disallowed_special,
                                        text)
        if not allowed or set(allowed) == set(self.special_tokens):
            library = self._special if allowed else self._ordinary
            return self._spans_of(text, self._encode(library, text), 0)
        found, offset = [], 0
        for segment, is_special in split_special(text, special_regex(allowed)):
            size = len(segment.encode())
            if is_special:
                found.append((self.special_ids[segment], offset, offset + size))
            else:
                encoding = self._encode(self._ordinary, segment)
                found += self._spans_of(segment, encoding, offset)
            offset += size
        return found

    def span_columns(self, texts: list[str]) -> list[tuple[list, list, list]]:
        """``evaluation.span_columns(token_spans(text, ()))`` for each text, built as columns
        (no tuple per token) where no byte piece needs spreading; the texts and their ids are
        kept for ``encode_parts`` (until the next call)."""
        found, char_starts = [], []
        for text in texts:
            columns, starts = self.text_columns(text)
            found.append(columns)
            char_starts.append(starts)
        self.remember(texts, [ids for ids, _, _ in found], char_starts)
        return found

    def text_columns(self, text: str) -> tuple[tuple[list, list, list], list[int] | None]:
        """``(span_columns(token_spans(text, ())), its tokens' start characters or None when
        they are not in order)``."""
        encoding = self.encoded(text)
        ids, offsets = encoding.ids, encoding.offsets
        chars, ends = list(map(itemgetter(0), offsets)), list(map(itemgetter(1), offsets))
        if text.isascii():  # (an ASCII text's characters are its bytes)
            starts, before = chars[:], chars
        else:
            to_bytes = char_to_byte_offsets(text)
            starts = list(map(to_bytes.__getitem__, chars))
            ends = list(map(to_bytes.__getitem__, ends))
            before = starts[:]
        if not self.byte_ids.isdisjoint(ids) and not _one_byte_each(
                ids, starts, ends, self.byte_ids):
            return (span_columns(self._spans_of(text, encoding, 0)),
                    chars if all(map(le, chars, chars[1:])) else None)
        columns = (ids, *tidy_columns(starts, ends))
        # tidying leaves the starts as they were only when they were in order already
        return columns, (chars if starts == before or all(map(le, chars, chars[1:])) else None)

    def encoded(self, text: str):
        """The library's ``Encoding`` of ``text`` (special-token text as plain text)."""
        return self._encode(self._ordinary, text)

    def remember(self, texts: list[str], ids: list[list[int]], char_starts) -> None:
        """Keep the documents for ``encode_parts`` (``hf_parts.LineParts.remember``)."""
        if self._parts:
            self._parts.remember(texts, ids, char_starts)

    def batch_columns(self, texts: list[str]):
        """``(ids per text, ids, starts, ends, places)`` as ``SentencePieceEngine.batch_columns``
        gives them: each text's ``span_columns`` joined into arrays (numpy) over the texts
        joined, ``places`` the byte where each text starts, so a batch is counted at once
        (``batch_totals``); made for the whole batch at once (``hf_columns``)."""
        return batch_columns(self, texts)

    def encode_parts(self, texts: list[str]) -> list[list[int]]:
        """``encode_ordinary_batch(texts)``: the lines of the documents last given to
        ``span_columns`` from their ids where the pipeline allows (``hf_parts``)."""
        return self._parts.encode(texts) if self._parts else self.encode_ordinary_batch(texts)

    def words_covered(self, words: list[str]) -> list[bool]:
        """Whether each word is one token, not special (``hf_words``: only the words that may
        be are asked, of ``encode_parts``)."""
        mark, pieces, lowercase = self._one_token
        return covers(words, mark, pieces, self.encode_parts, set(self.special_ids.values()),
                      lowercase)

    def round_trips(self, lines: list[str]) -> list[bool]:
        """``decode(encode_ordinary(line)) == line`` for each line, the ids from
        ``encode_parts``; a line with a character no decoding writes is not asked
        (``hf_lossless``)."""
        return round_trips(lines, self._output_chars, self.encode_parts, self.decode_batch,
                           self._first_chars, self._single_spaces)

    def _spans_of(self, text: str, encoding, offset: int) -> list[tuple[int, int, int]]:
        ids, spans = encoding.ids, encoding.offsets
        if not text.isascii():  # characters to bytes (an ASCII text's offsets are both)
            to_bytes = char_to_byte_offsets(text)
            spans = [(to_bytes[s], to_bytes[e]) for s, e in spans]
        spans = tidy_spans(spans, [i in self.byte_ids for i in ids])
        return with_ids(ids, spans, offset)

    def decode(self, ids: Iterable[int]) -> str:
        ids = self._known(ids)
        return self._special.decode(ids, skip_special_tokens=False)

    def decode_batch(self, batch: list[list[int]]) -> list[str]:
        return self._special.decode_batch(batch, skip_special_tokens=False)

    def __repr__(self) -> str:
        return f"HFEngine({self.model_type}, vocab_size={self.vocab_size})"


def _one_byte_each(ids: list[int], starts: list[int], ends: list[int], byte_ids) -> bool:
    """Whether the byte pieces' spans are one byte each, each starting after the previous
    one's start (an ASCII text's fallback bytes, a newline's ``<0x0A>``): then
    ``spans.tidy_spans``'s spreading of byte runs changes nothing (a run spanning as many bytes
    as it has pieces already gives each piece its own byte, in order)."""
    chosen = list(map(byte_ids.__contains__, ids))
    low, high = list(compress(starts, chosen)), list(compress(ends, chosen))
    return all(map((1).__eq__, map(sub, high, low))) and all(map(lt, low, low[1:]))


def describe(doc: dict) -> str:
    """What a version page shows as the pattern of an HF tokenizer: its model and the types of
    its normalizer and pre-tokenizer, ``"WordPiece; normalizer BertNormalizer; pre-tokenizer
    BertPreTokenizer"``."""
    parts = [(doc.get("model") or {}).get("type", "?")]
    for key, name in (("normalizer", "normalizer"), ("pre_tokenizer", "pre-tokenizer")):
        part = doc.get(key)
        if part:
            kind = part.get("type", "?")
            if kind == "Sequence":
                inner = part.get("normalizers") or part.get("pretokenizers") or []
                kind = "Sequence(" + ", ".join(p.get("type", "?") for p in inner) + ")"
            parts.append(f"{name} {kind}")
    return "; ".join(parts)


def _check_ids(model: dict, pieces: dict[str, int]) -> None:
    """Each id is one piece's: a file whose vocab gives two pieces one id is refused (the
    library would keep one of them, and the other could never be decoded)."""
    vocab = model.get("vocab")
    ids = list(vocab.values()) if isinstance(vocab, dict) else list(pieces.values())
    if len(set(ids)) < len(ids):
        seen: dict[int, str] = {}
        for piece, token_id in (vocab.items() if isinstance(vocab, dict) else pieces.items()):
            if token_id in seen:
                raise ValueError(f"token id {token_id} is used twice in the vocab (by "
                                 f"{seen[token_id]!r} and {piece!r})")
            seen[token_id] = piece


def _unk_id(model: dict, pieces: dict[str, int]) -> int | None:
    if model.get("type") == "Unigram":
        return model.get("unk_id")
    return pieces.get(model.get("unk_token") or "")


def _merges(model: dict) -> list[tuple[str, str]]:
    """A BPE model's merges, written ``"a b"`` (older files) or ``["a", "b"]``."""
    if model.get("type") != "BPE":
        return []
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else (m[0], m[1])
            for m in model.get("merges", [])]
