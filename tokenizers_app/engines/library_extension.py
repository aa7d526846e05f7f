"""Extension of another library's BPE model: a SentencePiece BPE ``.model`` or a Hugging Face BPE
``tokenizer.json`` (Llama-2 / Mistral style, with byte fallback) gains new pieces after every
existing one, so a model trained on the parent only grows its embedding matrix.

The work is split by where the library may run (``sandbox``): the library runs only in a
sandbox child, which segments the new corpus (``segment_counts``) and writes the child's file
(``extended_file``); the worker learns the new pieces in plain Python and our merge loop
(``learn_pieces``), never loading the library.

- **Segmentation** is the library's own: each line encoded by the parent, its pieces cut into
  words before every piece that begins a word (``▁``) and, for a ``tokenizer.json`` with a
  pre-tokenizer, between its pre-tokens. A run of ``<0xNN>`` byte pieces that spells whole
  characters gives those characters as symbols of their own (not pieces yet); an unknown,
  control or special piece, or bytes that spell no whole character, end a word.
- **Learning** is the count-and-tie-break loop of training (``compiled.learn_merges``, with
  ``skip_known``: a pair whose concatenation is a piece already is never learned, and stays
  apart as the parent leaves it) over those words, the parent's normal pieces and the new
  characters as its alphabet. A character spelled by byte pieces becomes a piece of its own
  when a learned merge first takes it as a side, just before that merge's piece: a
  ``tokenizer.json`` merge can only join two pieces of its vocab.
- **The file**: new pieces take the ids after the parent's largest, in learned order;
  SentencePiece scores them below every existing score (the library joins the best-scored
  pair first, so the parent's joins all come before any new one); a ``tokenizer.json`` appends
  its new merges after the existing ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

WORD_START = "\u2581"  # ▁: SentencePiece's and Metaspace's mark of a word's start

Symbol = int | str  # a parent's piece id, or a character it spells with byte pieces


@dataclass(frozen=True)
class Addition:
    """One new piece: ``piece`` made by the merge ``(left, right)``, or a character on its own
    (``left`` and ``right`` None)."""

    piece: str
    left: str | None = None
    right: str | None = None

    def to_json(self) -> list:
        return [self.piece, self.left, self.right]

    @classmethod
    def from_json(cls, row) -> Addition:
        return cls(row[0], row[1], row[2])


# -- in the sandbox child: the library's segmentation, and the child's file -------------------


def segment_counts(engine, texts: list[str]) -> list[list]:
    """The words of ``texts`` as the parent engine (``spm.SentencePieceEngine`` or
    ``hf.HFEngine``, loaded in this child) segments them, counted: ``[[symbols, count], ...]``,
    each symbol a piece id or a character the parent spells with byte pieces. Words of one
    symbol hold no pair and are left out."""
    normal = mergeable_ids(engine)
    byte_ids = engine.byte_ids
    counts: dict[tuple, int] = {}
    for ids, word_ids in _encoded_lines(engine, texts):
        for word in _words(engine, ids, word_ids, normal, byte_ids):
            if len(word) > 1:
                key = tuple(word)
                counts[key] = counts.get(key, 0) + 1
    return [[list(word), count] for word, count in counts.items()]


def mergeable_ids(engine) -> frozenset[int]:
    """The ids of the pieces a learned merge may join: the normal pieces of the model (not
    unknown, control, special or byte pieces, nor a ``tokenizer.json``'s added tokens)."""
    normal = {i for i, _, kind, _ in engine.vocab_kinds() if kind == "normal"}
    added = getattr(engine, "_special", None)
    if added is not None and hasattr(added, "get_added_tokens_decoder"):
        normal -= set(added.get_added_tokens_decoder())
    return frozenset(normal)


def _encoded_lines(engine, texts: list[str]):
    """``(ids, word index of each id or None)`` per text: a ``tokenizer.json``'s pre-tokens
    are its words too."""
    library = getattr(engine, "_ordinary", None)
    if library is None:  # SentencePiece: words by ▁ only, as its trainer splits them
        for ids in engine.encode_ordinary_batch(texts):
            yield ids, None
        return
    for encoding in library.encode_batch(texts, add_special_tokens=False):
        yield encoding.ids, encoding.word_ids


def _words(engine, ids: list[int], word_ids, normal: frozenset[int], byte_ids):
    """The words of one encoded text (lists of symbols)."""
    vocab = engine.vocab
    word: list[Symbol] = []
    pending = bytearray()  # byte pieces not yet spelled into characters
    last_word = None
    for n, token_id in enumerate(ids):
        if token_id in byte_ids:
            if word_ids is not None and word_ids[n] != last_word and not pending:
                yield word
                word = []
            last_word = word_ids[n] if word_ids is not None else None
            pending.append(int(vocab[token_id][3:5], 16))
            try:
                word += pending.decode("utf-8")
                pending.clear()
            except UnicodeDecodeError as exc:  # inside a character, or no character at all
                if exc.reason != "unexpected end of data" or len(pending) >= 4:
                    pending.clear()
                    yield word
                    word = []
            continue
        if pending:  # bytes that spell no whole character: a wall
            pending.clear()
            yield word
            word = []
        if token_id not in normal:
            yield word
            word = []
            continue
        starts = vocab[token_id].startswith(WORD_START.encode())
        if starts or (word_ids is not None and word_ids[n] != last_word):
            yield word
            word = []
        last_word = word_ids[n] if word_ids is not None else None
        word.append(token_id)
    yield word


def extended_file(kind: str, data: bytes, additions: list[Addition]) -> bytes:
    """The child's file: the parent's ``data`` with ``additions`` appended (``sentencepiece``:
    a ``.model`` edited through the library's protobuf; ``hf``: a ``tokenizer.json``)."""
    if kind == "sentencepiece":
        return _extended_model(data, additions)
    if kind == "hf":
        return _extended_json(data, additions)
    raise ValueError(f"a {kind} file is not extended here")


def _extended_model(data: bytes, additions: list[Addition]) -> bytes:
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.ParseFromString(data)
    lowest = min((piece.score for piece in model.pieces), default=0.0)
    for n, addition in enumerate(additions):
        piece = model.pieces.add()
        piece.piece = addition.piece
        piece.score = lowest - 1.0 - n
        piece.type = model_pb2.ModelProto.SentencePiece.NORMAL
    model.trainer_spec.vocab_size = len(model.pieces)
    return model.SerializeToString()


def _extended_json(data: bytes, additions: list[Addition]) -> bytes:
    doc = json.loads(data)
    model = doc["model"]
    vocab: dict[str, int] = model["vocab"]
    added = [token["id"] for token in doc.get("added_tokens") or []]
    next_id = max([*vocab.values(), *added]) + 1
    merges = list(model.get("merges") or [])
    pairs = [a for a in additions if a.left is not None]
    as_lists = (merges and not isinstance(merges[0], str)) or any(
        " " in a.left or " " in a.right for a in pairs)
    if as_lists:  # a piece with a space cannot be written "left right"
        merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in merges]
    for addition in additions:
        vocab[addition.piece] = next_id
        next_id += 1
        if addition.left is not None:
            merges.append([addition.left, addition.right] if as_lists
                          else f"{addition.left} {addition.right}")
    model["merges"] = merges
    return json.dumps(doc, ensure_ascii=False).encode()


# -- in the worker: the new pieces, learned by the training loop ------------------------------


@dataclass(frozen=True)
class Learned:
    """What ``learn_pieces`` found: the additions in id order, each merge's count, and why
    fewer than asked (empty when as many as asked)."""

    additions: list[Addition]
    counts: list[int]
    stop_reason: str


def learn_pieces(words: dict[tuple, int], vocab: dict[int, bytes], wanted: int,
                 min_frequency: int = 1, ticker=None) -> Learned:
    """``wanted`` new pieces over counted ``words`` (symbols: piece ids of the parent's
    ``vocab``, or characters it spells with byte pieces), learned by the training loop, whose
    alphabet is every parent piece (so none is made twice) and the new characters; characters a
    merge takes count among the new pieces. Learning more merges gives the same first merges,
    so the loop runs again with room for the characters until ``wanted`` is reached or no pair
    is left.

    ``learn_pieces({(0, 1): 3}, {0: b"a", 1: b"b"}, 1).additions -> [Addition("ab", "a", "b")]``
    """
    from ..bpe.compiled import learn_merges
    from ..bpe.training import stop_reason

    ids = sorted(vocab)
    alphabet = [vocab[i] for i in ids]
    index: dict = {token_id: n for n, token_id in enumerate(ids)}
    known = {token: n for n, token in enumerate(alphabet)}
    chars = sorted({s for word in words for s in word if isinstance(s, str)})
    for char in chars:  # a character that is a piece already (an added token) is that piece
        token = char.encode()
        if token not in known:
            known[token] = index[char] = len(alphabet)
            alphabet.append(token)
        else:
            index[char] = known[token]
    indexed: dict[tuple[int, ...], int] = {}
    for word, count in words.items():
        key = tuple(index[s] for s in word)
        indexed[key] = indexed.get(key, 0) + count
    new_chars = set(alphabet[len(ids):])
    asked = wanted
    while True:
        merges, counts = learn_merges(indexed, asked, min_frequency, ticker, alphabet=alphabet,
                                      skip_known=True)
        additions, kept = _placed(merges, new_chars, wanted)
        if kept < len(merges):  # the ids asked are filled
            return Learned(additions, counts[:kept], "")
        if len(merges) < asked:  # no pair left with the count asked
            return Learned(additions, counts, stop_reason(len(merges), asked, min_frequency))
        if len(additions) == wanted:
            return Learned(additions, counts, "")
        asked += wanted - len(additions)


def _placed(merges, new_chars: set[bytes], wanted: int) -> tuple[list[Addition], int]:
    """The additions of the first merges that fit in ``wanted`` ids (a merge taking a new
    character as a side brings that character first), and how many merges they hold. When the
    next merge does not fit with its characters, the last ids hold those of its characters that
    fit (a character is a piece on its own), so the ids asked are filled."""
    additions: list[Addition] = []
    placed: set[bytes] = set()
    for kept, (left, right) in enumerate(merges):
        sides = [side for side in dict.fromkeys((left, right))
                 if side in new_chars and side not in placed]
        if len(additions) + len(sides) + 1 > wanted:
            additions += [Addition(side.decode()) for side in sides][:wanted - len(additions)]
            return additions, kept
        for side in sides:
            additions.append(Addition(side.decode()))
            placed.add(side)
        additions.append(Addition((left + right).decode(), left.decode(), right.decode()))
    return additions, len(merges)
