"""The ids of a document's lines and words, known from the document's own encoding, for the
Hugging Face engine's evaluation (``HFEngine.encode_parts``): the lossless rate decodes each
distinct line alone and the word coverage encodes each distinct word alone, and asking the
library for them all again costs more than encoding the corpus.

The library encodes a text in steps: the normalizer, the pre-tokenizer cutting the normalized
text into words, then the model encoding each word alone (BPE, WordPiece, Unigram and
WordLevel all do). Where a line's words are words of its document too, the line's ids of those
words are the document's ids at the same place. Two pipelines are known to allow it (any other
is asked of the library, text by text):

- ``"whitespace"``: a pre-tokenizer that cuts at every whitespace character and drops it
  (``BertPreTokenizer``, ``Whitespace``, ``WhitespaceSplit``) behind no normalizer or one that
  maps each character alone (``BertNormalizer``, ``Lowercase``, ``NFD``, ``NFKD``,
  ``StripAccents``): a line ends at a newline, so its ids are its document's ids that start
  inside it; a word standing between spaces, tabs, carriage returns or newlines has the ids
  that start inside it;
- ``"mark"``: ``Metaspace`` with ``split``, a prepend scheme ``always`` or ``first`` and no
  normalizer: each space (and each literal mark ``▁``) starts a word, and a text is marked at
  its start unless it starts with the mark (``"w"``, ``" w"`` and ``"▁w"`` are all ``▁w``); a
  line's words between its first and last space are its document's words; its first word
  (unless the line starts its document) and its last word, and a word, have the ids of a place
  where they stand between two spaces (from the space before), or are encoded.

What is left is encoded in one library call (``LineParts.joined``): the texts joined, each
after a newline or a space, which the pipeline cuts at as it would at the text's ends. Texts
asked that are few (fewer characters than a tenth of the documents') are all encoded so, before
the documents' places are found: finding them would cost more. Neither rule applies when the
file truncates or pads, has a BPE dropout, or has an added token that is not special
(special-token text is plain text here: ``encode_special_tokens``).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, repeat
from operator import itemgetter, le

WHITESPACE_CUTS = ("BertPreTokenizer", "Whitespace", "WhitespaceSplit")
HARD_SPACES = str.maketrans("\t\r\n", "   ")  # where a whitespace-cutting pipeline cuts
FEW = 10  # texts of fewer characters than a tenth of the documents' are encoded alone
CHARACTER_NORMALIZERS = ("BertNormalizer", "Lowercase", "NFD", "NFKD", "StripAccents")


def line_rule(doc: dict) -> tuple[str, str] | None:
    """``("whitespace", "")``, ``("mark", "▁")`` or ``None`` (see the module) for a
    ``tokenizer.json``'s content."""
    model = doc.get("model") or {}
    if doc.get("truncation") or doc.get("padding") or model.get("dropout"):
        return None
    if any(not token.get("special") for token in doc.get("added_tokens") or []):
        return None
    normalizer, pre = doc.get("normalizer"), doc.get("pre_tokenizer") or {}
    if pre.get("type") in WHITESPACE_CUTS and _character_local(normalizer):
        return "whitespace", ""
    if pre.get("type") == "Metaspace" and pre.get("split", True) and normalizer is None:
        mark = pre.get("replacement", "▁")
        joinable = pre.get("prepend_scheme") in ("always", "first")  # "w" alone is "▁w"
        return ("mark", mark) if len(mark) == 1 and joinable else None
    return None


def _character_local(normalizer: dict | None) -> bool:
    if normalizer is None:
        return True
    if normalizer.get("type") == "Sequence":
        return all(map(_character_local, normalizer.get("normalizers") or [None]))
    return normalizer.get("type") in CHARACTER_NORMALIZERS


class LineParts:
    """The documents last encoded (``remember``) and ``encode``: ``encode_batch(texts)``'s
    ids, the lines and words of those documents from their ids where ``rule`` allows (the
    same ids may be one list for two texts: read them, do not change them)."""

    def __init__(self, rule: tuple[str, str], library, encode_batch):
        self.kind, self.mark = rule
        self.library, self.encode_batch = library, encode_batch
        self.docs: list[tuple[str, list[int], list[int] | None]] = []
        self.places: dict[str, tuple[int, int]] | None = None
        self.pieces: dict[str, tuple[int, int]] | None = None
        self.known: dict[str, list[int]] = {}
        self.size = 0  # the documents' characters

    def remember(self, texts: list[str], ids: list[list[int]],
                 starts: list[list[int] | None]) -> None:
        """Each document's text, ids and tokens' start characters, in order (``None``: not in
        order, the document is not used)."""
        self.docs = list(zip(texts, ids, starts))
        self.places = self.pieces = None
        self.known: dict[str, list[int]] = {}
        self.size = sum(map(len, texts))

    def encode(self, texts: list[str]) -> list[list[int]]:
        if self.places is None and sum(map(len, texts)) * FEW < self.size:
            # a few texts: encoded in one call (``joined``) rather than the documents' places
            # found for them (each way gives ``encode_batch``'s ids)
            distinct = list(dict.fromkeys(texts))
            found = dict(zip(distinct, self.joined(distinct)))
            return [found[text] for text in texts]
        if self.places is None:
            self.places = _line_places(self.docs)
            self.pieces = _piece_places(self.docs, self.kind, self.mark)
        plans = [text if place is None else self._plan(text, place)
                 for text, place in zip(texts, map(self.places.get, texts))]
        wanted: dict[str, None] = {}
        for plan in plans:
            if plan.__class__ is str:
                wanted[plan] = None
            elif plan.__class__ is tuple:
                wanted[plan[0]] = wanted[plan[2]] = None
        keys = dict(zip(wanted, map(self._key, wanted) if self.kind == "mark" else wanted))
        known = self.known
        fresh = list(dict.fromkeys(key for key in keys.values() if key not in known))
        found = {key: None if place is None else self._piece(key, place)
                 for key, place in zip(fresh, map(self.pieces.get, fresh))}
        fresh = [key for key, ids in found.items() if ids is None]
        found.update(zip(fresh, self.joined(fresh)) if fresh else ())
        known.update(found)  # (for the next call on the same documents: words, then lines)
        asked = {text: known[key] for text, key in keys.items()}
        return [asked[plan] if plan.__class__ is str else plan if plan.__class__ is list else
                asked[plan[0]] + plan[1] + asked[plan[2]] for plan in plans]

    def joined(self, texts: list[str]) -> list[list[int]]:
        """``encode_batch(texts)`` in one call of the library: the texts joined, each after a
        newline (``"whitespace"``) or a space (``"mark"``: unless it starts with one or with the
        mark, or is empty), so each is a word or words of its own and is marked as alone;
        each text's ids are those that start inside it. ``encode_batch`` when the library
        refuses the text or its offsets are out of order."""
        if self.kind == "whitespace":
            parts = ["\n" + text for text in texts]
        else:
            starting = (" ", self.mark)
            parts = [text if not text or text[0] in starting else " " + text for text in texts]
        try:
            encoding = self.library.encode("".join(parts), add_special_tokens=False)
        except Exception:  # the library's own error: asked text by text, to name the text
            return self.encode_batch(texts)
        ids, starts = encoding.ids, list(map(itemgetter(0), encoding.offsets))
        if not all(map(le, starts, starts[1:])):
            return self.encode_batch(texts)
        cuts = list(map(bisect_left, repeat(starts), accumulate(map(len, parts), initial=0)))
        return list(map(ids.__getitem__, map(slice, cuts, cuts[1:])))

    def _key(self, text: str) -> str:
        """The text whose ids ``text`` has: ``" w"`` and ``"▁w"`` are both ``▁w`` when marked
        alone, as ``"w"`` is (``"mark"``), unless ``w`` is empty or starts with a space or the
        mark."""
        if self.kind == "mark" and text[:1] in (" ", self.mark) \
                and text[1:2] not in ("", " ", self.mark):
            return text[1:]
        return text

    def _piece(self, key: str, place: tuple[int, int]) -> list[int]:
        """The ids of a text without a space or a newline (a word, a line's first or last
        word) from a place of the documents (``_piece_places``) where it stands between spaces
        (``"mark"``) or any of space, tab, carriage return and newline (``"whitespace"``), or
        the documents' ends: its word there is its word alone."""
        doc, at = place
        _, ids, starts = self.docs[doc]
        low = at - 1 if at and self.kind == "mark" else at  # (from the space's ▁)
        return ids[bisect_left(starts, low):bisect_left(starts, at + len(key))]

    def _plan(self, text: str, place: tuple[int, int]):
        """How the ids of ``text``, a line at ``place``, are found: a text to encode alone
        (``text`` itself), its ids from its document (a list), or ``(first, ids, last)``: the
        ids of the text ``first``, the document's ids, the ids of the text ``last``."""
        doc, at = place
        _, ids, starts = self.docs[doc]
        if self.kind == "whitespace":
            return ids[bisect_left(starts, at):bisect_left(starts, at + len(text))]
        first = text.find(" ")
        marked = text.find(self.mark)
        first = marked if first < 0 or 0 <= marked < first else first
        if first < 0:
            return text
        last = max(text.rfind(" "), text.rfind(self.mark))
        middle = ids[bisect_left(starts, at + first if at else 0):bisect_left(starts, at + last)]
        return text[:first] if at else "", middle, text[last:]


def _line_places(docs: list[tuple[str, list[int], list[int]]]) -> dict[str, tuple[int, int]]:
    """Each line text (``totals.line_text``: without ``\n`` or ``\r\n``) of the documents:
    ``(document, character where it starts)``, one of its places."""
    places: dict[str, tuple[int, int]] = {}
    for number, (text, _, starts) in enumerate(docs):
        if starts is None:
            continue
        lines = text.split("\n")
        if "\r" in text:  # (the last line keeps its "\r": no "\n" follows it)
            lines[:-1] = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]]
            ends = [len(line) + 1 for line in text.split("\n")]
        else:
            ends = map((1).__add__, map(len, lines))
        places.update(zip(lines, zip(repeat(number), accumulate(ends, initial=0))))
    return places


def _piece_places(docs: list[tuple[str, list[int], list[int]]], kind: str,
                  mark: str) -> dict[str, tuple[int, int]]:
    """Each text between two spaces (``"mark"``) or two of space, tab, carriage return and
    newline (``"whitespace"``), or a document's ends: ``(document, character where it
    starts)``, one of its places."""
    places: dict[str, tuple[int, int]] = {}
    for number, (text, _, starts) in enumerate(docs):
        if starts is None:
            continue
        pieces = (text.translate(HARD_SPACES) if kind == "whitespace" else text).split(" ")
        keys = pieces
        if kind == "mark" and mark in text:  # ("▁w" after a space is "▁", "▁w": not "w")
            keys = ["" if piece[:1] == mark else piece for piece in pieces]
        ends = map((1).__add__, map(len, pieces))
        places.update(zip(keys, zip(repeat(number), accumulate(ends, initial=0))))
    if kind == "mark":
        places.pop("", None)  # ("" is no word; " " between two spaces is "▁")
    return places
