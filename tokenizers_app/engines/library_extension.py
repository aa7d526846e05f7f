"""Extension of another library's BPE model: a SentencePiece BPE ``.model`` or a Hugging Face BPE
``tokenizer.json`` (Llama-2 / Mistral style, with byte fallback) gains new pieces after every
existing one, so a model trained on the parent only grows its embedding matrix.

The work is split by where the library may run (``sandbox``): the library runs only in a
sandbox child, which segments the new corpus (``segment_counts``) and writes the child's file
(``FileKind.extended_file``); the worker learns the new pieces in plain Python and our merge
loop (``learn_pieces``), never loading the library.

- **Segmentation** is the library's own: each line encoded by the parent, its pieces cut into
  words before every piece that begins a word (``▁``) and, for a ``tokenizer.json`` with a
  pre-tokenizer, between its pre-tokens. A run of ``<0xNN>`` byte pieces that spells whole
  characters gives those characters as symbols of their own (not pieces yet), written as one
  string per run (``[12, "日本語", 45]`` is five symbols); an unknown, control or special
  piece, or bytes that spell no whole character, end a word.
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

import re
import sys
from array import array
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

from ..bpe.words import FlatWords

WORD_START = "\u2581"  # ▁: SentencePiece's and Metaspace's mark of a word's start

Symbol = int | str  # a parent's piece id, or a run of characters it spells with byte pieces


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
    ``hf.HFEngine``, loaded in this child) segments them, counted: ``[[word, count], ...]``,
    each word a list of piece ids and of runs of characters the parent spells with byte pieces
    (a string, each of its characters one symbol; two runs are never side by side). Words of
    one symbol hold no pair and are left out."""
    pieces = getattr(engine, "_extension_pieces", None)
    if pieces is None:  # once per engine: a run's corpus comes in many requests
        pieces = engine._extension_pieces = _Pieces(engine)
    counts: dict[tuple, int] = {}
    for ids in _pretokens(engine, texts):
        for word in pieces.words(ids):
            if len(word) > 1 or (word and isinstance(word[0], str) and len(word[0]) > 1):
                key = tuple(word)
                counts[key] = counts.get(key, 0) + 1
    return [[list(word), count] for word, count in counts.items()]


WALL = "\u0100"  # the code of an id that ends a word (``_Pieces.codes``)
FIRST_CODE = 0x101  # the codes of normal pieces start here, those that begin a word first


class _Pieces:
    """What ``words`` needs of the parent's vocab, built once per engine: each id as one
    character (``codes``), so a text's ids become one string in C and its runs are found by a
    regular expression: a ``<0xNN>`` byte piece is ``chr(NN)``, an id that is a wall (unknown,
    control, special) is ``WALL``, and the normal pieces (those a merge may join) are
    ``chr(FIRST_CODE + k)``, those that begin a word (``▁``) taking the lowest ``k`` (code
    points in the surrogate range are fine in a ``str`` and a pattern). ``piece_of`` maps a
    normal piece's code back to its id. With pieces ``<0xE6>`` (id 3), ``▁a`` (id 5) and ``b``
    (id 6), the ids ``[5, 6, 3]`` are ``"\u0101\u0102\xe6"``: one word start and its piece,
    then a run of bytes."""

    def __init__(self, engine):
        normal = mergeable_ids(engine)
        mark = WORD_START.encode()
        starts = sorted(i for i in normal if engine.vocab[i].startswith(mark))
        others = sorted(normal.difference(starts))
        size = max(engine.vocab, default=-1) + 1
        self.codes = [WALL] * size
        for i in engine.byte_ids:
            self.codes[i] = chr(int(engine.vocab[i][3:5], 16))
        self.piece_of = {}
        for k, i in enumerate(starts + others):
            self.codes[i] = code = chr(FIRST_CODE + k)
            self.piece_of[code] = i
        self.last_start = chr(FIRST_CODE + len(starts) - 1)
        starts_class = f"{chr(FIRST_CODE)}-{self.last_start}" if starts else ""
        others_class = (f"{chr(FIRST_CODE + len(starts))}-{chr(FIRST_CODE + len(normal) - 1)}"
                        if others else "")
        self.runs = re.compile("|".join(
            ["[\x00-\xff]+", WALL]
            + ([f"[{starts_class}][{others_class}]*" if others else f"[{starts_class}]"]
               if starts else [])
            + ([f"[{others_class}]+"] if others else []))).findall

    def words(self, ids: list[int]):
        """The words of one pre-token's ids (lists of piece ids and runs of characters): cut
        before each piece that begins a word and at each wall; a run of byte pieces gives the
        characters it spells, as one string, and bytes that spell none are a wall."""
        word: list[Symbol] = []
        for run in self.runs("".join(map(self.codes.__getitem__, ids))):
            first = run[0]
            if first < WALL:  # byte pieces
                text = run.encode("latin-1").decode("utf-8", "replace")
                first, *others = text.split("\ufffd")
                if first:
                    word.append(first)
                for part in others:
                    yield word
                    word = [part] if part else []
            elif first == WALL:
                yield word
                word = []
            elif first <= self.last_start:  # a piece that begins a word, and those after it
                yield word
                word = list(map(self.piece_of.__getitem__, run))
            else:
                word += map(self.piece_of.__getitem__, run)
        yield word


def mergeable_ids(engine) -> frozenset[int]:
    """The ids of the pieces a learned merge may join: the normal pieces of the model (not
    unknown, control, special or byte pieces, nor a ``tokenizer.json``'s added tokens)."""
    normal = {i for i, _, kind, _ in engine.vocab_kinds() if kind == "normal"}
    added = getattr(engine, "_special", None)
    if added is not None and hasattr(added, "get_added_tokens_decoder"):
        normal -= set(added.get_added_tokens_decoder())
    return frozenset(normal)


def _pretokens(engine, texts: list[str]):
    """The ids of each text, or of each of its pre-tokens for a ``tokenizer.json`` (whose
    pre-tokens are words too; SentencePiece's words are cut by ``▁`` only, as its trainer cuts
    them)."""
    library = getattr(engine, "_ordinary", None)
    if library is None:
        yield from engine.encode_ordinary_batch(texts)
        return
    for encoding in library.encode_batch(texts, add_special_tokens=False):
        for _, run in groupby(zip(encoding.ids, encoding.word_ids), itemgetter(1)):
            yield [token_id for token_id, _ in run]


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
    ``vocab``, or runs of characters it spells with byte pieces, as ``segment_counts`` gives
    them; a word may be counted more than once), learned by the training loop, whose
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
    indexed = _flat_words(words, ids, alphabet)
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


def _flat_words(words: dict[tuple, int], ids: list[int], alphabet: list[bytes]) -> FlatWords:
    """The words as indices into ``alphabet`` (the parent's pieces in ``ids`` order, to which
    each new character is added when first met), laid end to end. Each distinct symbol is
    written once as characters whose code points are its indices (a run of characters through
    one ``str.translate``), each word is joined from those in C, and the codec reads all the
    indices at once: ``_flat_words({(0, "ab"): 2}, [0], [b"x"])`` gives the symbols ``[0, 1,
    2]``, lengths ``[3]`` and counts ``[2]``, ``alphabet`` now ``[b"x", b"a", b"b"]``. (The
    order of the new characters changes no merge: the loop breaks ties by the tokens' bytes.)"""
    table = _CharIndex(alphabet)
    code = {token_id: chr(n) for n, token_id in enumerate(ids)}
    code.update((s, s.translate(table)) for s in set().union(*words) if isinstance(s, str))
    if len(alphabet) > sys.maxunicode + 1:
        raise ValueError(f"an alphabet of {len(alphabet):,} symbols is more than an extension "
                         f"can index")
    coded = ["".join(map(code.__getitem__, word)) for word in words]
    flat = array("i")
    flat.frombytes("".join(coded).encode(_UTF32, "surrogatepass"))
    return FlatWords(flat, array("i", map(len, coded)), list(words.values()))


class _CharIndex(dict):
    """``str.translate``'s table for ``_flat_words``: a character's code point -> the character
    whose code point is its index in ``alphabet``, added to ``alphabet`` when first asked for
    (a character that is a piece already, an added token, is that piece)."""

    def __init__(self, alphabet: list[bytes]):
        super().__init__()
        self.alphabet = alphabet
        self.known = {token: n for n, token in enumerate(alphabet)}

    def __missing__(self, point: int) -> str:
        token = chr(point).encode()
        index = self.known.get(token)
        if index is None:
            index = self.known[token] = len(self.alphabet)
            self.alphabet.append(token)
        self[point] = code = chr(index) if index <= sys.maxunicode else ""
        return code


_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


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
