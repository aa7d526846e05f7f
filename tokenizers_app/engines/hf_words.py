"""Word coverage of a Hugging Face engine (``HFEngine.words_covered``) without asking the library about a
word that cannot be one token: ``len(encode_ordinary(word)) == 1`` and that token not special.

Where it holds: the ``"mark"`` pipeline of ``hf_parts`` (``Metaspace`` with ``split``, a prepend
scheme ``always`` or ``first``, no normalizer, no added token that is not special) over a BPE
(without a continuing-subword prefix or an end-of-word suffix) or a Unigram model whose unknown
token, when it has one, is special, and whose merges (BPE) never take the unknown token or a
``<0xNN>`` byte piece. A word (no whitespace in it) is then pre-tokenized as ``p``: the word
itself when it starts with the mark, else the mark and the word; ``p`` is cut before each mark
after its first character, and each piece is encoded alone into at least one token. So a word
with the mark after ``p``'s first character has 2+ tokens. Otherwise ``p`` is encoded alone:

- BPE starts from ``p``'s characters (an unknown one as the unknown token, or as its UTF-8 bytes'
  pieces with byte fallback) and merges neighbours into the token spelled by both; no merge
  takes an unknown token or a byte piece, so one token at the end is the merge of all of
  ``p``'s characters, spelled ``p``, or ``p`` has one character;
- Unigram's one token covers all of ``p``: the piece ``p``, the unknown token (special: not
  covering) or, with byte fallback, one byte piece (``p`` of one character).

So a word is covered only when ``p`` is a piece of the model's vocabulary or ``p`` has one
character: only those are asked of the library (``covers``).

And a BERT pipeline (``ascii_rule``): ``BertNormalizer`` (or none), ``BertPreTokenizer``, a
WordPiece model whose unknown token is special. A word of printable ASCII characters (``!`` to
``~``) is normalized to itself, lowercased when the normalizer lowercases (no such character is
a control character, whitespace, a CJK character or accented); the pre-tokenizer makes each
punctuation character a word of its own, and every printable ASCII character is a letter, a
digit or punctuation, so a word with punctuation and another character is 2+ words, each 1+
tokens. A word alone is one token when it is a vocabulary entry, else WordPiece takes a shorter
first piece and more, or gives the unknown token (special). So such a word is covered only when
its normalized text is in the vocabulary; other words are asked.
"""

from __future__ import annotations

import re
from itertools import compress

BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")


def one_token_mark(doc: dict, rule, special: set[int], pieces: dict[str, int]) -> str | None:
    """The mark when ``doc`` (a ``tokenizer.json``'s content, ``rule`` its ``hf_parts`` rule)
    allows the filter (see the module), else ``None``; ``pieces``: every token string's id."""
    model = doc.get("model") or {}
    if not rule or rule[0] != "mark":
        return None
    kind = model.get("type")
    if kind == "BPE":
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            return None
        unknown = model.get("unk_token")
        for merge in model.get("merges") or []:
            pair = merge.split(" ", 1) if isinstance(merge, str) else merge
            if any(part == unknown or BYTE_PIECE.fullmatch(part) for part in pair):
                return None
        unk_id = pieces.get(unknown) if unknown is not None else None
    elif kind == "Unigram":
        unk_id = model.get("unk_id")
    else:
        return None
    if unk_id is not None and unk_id not in special:
        return None
    return rule[1]


def ascii_rule(doc: dict, special: set[int], pieces: dict[str, int]) -> bool | None:
    """Whether a BERT pipeline (see the module) lowercases, or ``None`` when ``doc`` is no
    such pipeline."""
    model, normalizer = doc.get("model") or {}, doc.get("normalizer")
    if model.get("type") != "WordPiece" or doc.get("truncation") or doc.get("padding") \
            or (doc.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer" \
            or any(not token.get("special") for token in doc.get("added_tokens") or []):
        return None
    if normalizer is not None and normalizer.get("type") != "BertNormalizer":
        return None
    if pieces.get(model.get("unk_token") or "") not in special:
        return None
    return bool(normalizer and normalizer.get("lowercase", True))


def model_pieces(doc: dict) -> frozenset[str]:
    """The model's own pieces (a Unigram's vocab is a list of ``[piece, score]``)."""
    vocab = (doc.get("model") or {}).get("vocab") or {}
    if isinstance(vocab, dict):
        return frozenset(vocab)
    return frozenset(entry[0] for entry in vocab)


def covers(words: list[str], mark: str | None, pieces: frozenset[str], encode,
           special: set[int], lowercase: bool | None = None) -> list[bool]:
    """For each word (no whitespace in it): is it one token, not special; ``encode`` gives the
    ids of the words asked (all of them when ``mark`` and ``lowercase`` are None: ``mark`` for
    a Metaspace pipeline, ``lowercase`` from ``ascii_rule`` for a BERT one)."""
    if mark is None and lowercase is not None:
        asked = list(compress(range(len(words)), map(_maybe_one(lowercase, pieces), words)))
    elif mark is None:
        asked = range(len(words))
    else:
        marked = [word if word[:1] == mark else mark + word for word in words]
        asked = list(compress(range(len(words)), [
            len(p) < 2 or (p in pieces and mark not in p[1:]) for p in marked]))
    found = [False] * len(words)
    if asked:
        for k, ids in zip(asked, encode([words[k] for k in asked])):
            found[k] = len(ids) == 1 and ids[0] not in special
    return found


_PRINTABLE = re.compile(r"[!-~]+")
_LETTERS = re.compile(r"[0-9A-Za-z]+")


def _maybe_one(lowercase: bool, pieces: frozenset[str]):
    """Whether a word may be one token under a BERT pipeline (see the module)."""
    def maybe(word: str) -> bool:
        if not _PRINTABLE.fullmatch(word):
            return True  # (not printable ASCII: asked)
        if len(word) > 1 and not _LETTERS.fullmatch(word):
            return False
        return (word.lower() if lowercase else word) in pieces
    return maybe
