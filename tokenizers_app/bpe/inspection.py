"""Looking inside a tokenizer: how a token was built (its merge tree), how long its tokens are,
and how it cuts a corpus's most frequent words, to compare with other tokenizers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import accumulate

WordTokens = tuple[str, int, list[int]]  # (word, count, ids)


def merge_tree(tokenizer, token_id: int) -> dict:
    """How token ``token_id`` was built, down to single bytes (or a character-level alphabet's
    symbols): ``{"id", "token", "rank", "count", "children": [left, right], "special"}``, where ``rank`` is the merge that made the token (the
    lowest such rank) and ``count`` its count when training chose it; single bytes, special
    tokens and tokens no merge makes are leaves (``rank`` None). Built without recursion, so a
    token of 1000 bytes grown one byte at a time is fine.

    With merges ``[(b"a", b"b"), (b"ab", b"c")]``, ``merge_tree(t, id of b"abc")`` is the node of
    rank 1 with children ``ab`` (rank 0, children ``a`` and ``b``) and ``c``.
    """
    if token_id not in tokenizer.vocab:
        raise ValueError(f"token id {token_id} is not in the vocabulary (ids 0 to "
                         f"{max(tokenizer.vocab)})")
    made_by, id_of = _merge_index(tokenizer)
    special = set(tokenizer.special_ids.values())
    counts = tokenizer.merge_counts

    def node(node_id: int) -> dict:
        token = tokenizer.vocab[node_id]
        rank = None if node_id in special or len(token) == 1 else made_by.get(token)
        count = counts[rank] if rank is not None and counts else None
        return {"id": node_id, "token": token, "rank": rank, "count": count, "children": [],
                "special": node_id in special}

    root = node(token_id)
    stack = [root]
    while stack:
        parent = stack.pop()
        if parent["rank"] is None:
            continue
        left, right = tokenizer.merges[parent["rank"]]
        parent["children"] = [node(id_of[left]), node(id_of[right])]
        stack.extend(parent["children"])
    return root


def _merge_index(tokenizer) -> tuple[dict[bytes, int], dict[bytes, int]]:
    """``(token bytes -> lowest rank that makes it, token bytes -> lowest non-special id)``,
    kept on the tokenizer (it never changes)."""
    index = getattr(tokenizer, "_merge_index", None)
    if index is None:
        made_by: dict[bytes, int] = {}
        for rank, (left, right) in enumerate(tokenizer.merges):
            made_by.setdefault(left + right, rank)
        special = set(tokenizer.special_ids.values())
        id_of: dict[bytes, int] = {}
        for token_id in sorted(tokenizer.vocab):
            if token_id not in special:
                id_of.setdefault(tokenizer.vocab[token_id], token_id)
        index = tokenizer._merge_index = (made_by, id_of)
    return index


def token_length_histogram(tokenizer) -> list[tuple[int, int]]:
    """``(length in bytes, number of tokens)``, shortest first, special tokens left out (a
    character-level token without its end-of-word suffix)."""
    special = set(tokenizer.special_ids.values())
    suffix = getattr(tokenizer, "suffix", "").encode()  # character-level BPE's, left out
    lengths = Counter(len(token.removesuffix(suffix))
                      for token_id, token in tokenizer.vocab.items() if token_id not in special)
    return sorted(lengths.items())


RUNNING_TEXT = "a "  # what comes before each word, as in running text


def frequent_word_tokens(tokenizer, lines: Iterable[str], top: int = 2000) -> list[WordTokens]:
    """The ``top`` most frequent whitespace-separated words of the text (equal counts by the
    word) with their count and their ids. A word is encoded as it mostly occurs in running
    text, after a word and a space (``in_running_text``), so the ids include that space for
    tokenizers that glue it to the word (GPT-2's pattern does), and a SentencePiece model adds
    no second word-start mark of its own.

    ``frequent_word_tokens(byte_tokenizer, ["b a b"], top=1) -> [("b", 2, [32, 98])]``
    """
    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(line.split())
    return ranked_word_tokens(tokenizer, counts, top)


def ranked_word_tokens(tokenizer, counts: Counter[str], top: int = 2000) -> list[WordTokens]:
    """``frequent_word_tokens`` of words already counted (``counting_words``)."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return [(word, count, in_running_text(tokenizer, word)) for word, count in ranked]


def counting_words(blocks: Iterable[str], counts: Counter[str],
                   chunk_chars: int = 1 << 20) -> Iterator[str]:
    """The blocks of a text (``"".join(blocks)``), passed on as they come, its
    whitespace-separated words added to ``counts`` on the way: so an evaluation counts them in
    its own pass over the corpus (for lines that each end in a newline, the words of
    ``frequent_word_tokens``). The
    words are split a chunk of about ``chunk_chars`` at a time, cut only after a block that
    ends in whitespace, so no word is cut: ``counting_words(["a b", "c\n", "a"], counts)``
    counts ``a`` twice, ``bc`` once."""
    kept: list[str] = []
    size = 0
    for block in blocks:
        yield block
        kept.append(block)
        size += len(block)
        if size >= chunk_chars and block[-1:].isspace():
            counts.update("".join(kept).split())
            kept, size = [], 0
    if kept:
        counts.update("".join(kept).split())


def in_running_text(tokenizer, word: str) -> list[int]:
    """The ids of ``word`` in ``"a " + word``: the tokens that end after the word ``a`` (the
    space before the word is the word's where a tokenizer glues it to it)."""
    start = len(RUNNING_TEXT.encode()) - 1
    return [token_id for token_id, _, end in tokenizer.token_spans(RUNNING_TEXT + word, ())
            if end > start]


def words_split_differently(per_version: list[list[WordTokens]],
                            vocabs: list[dict], suffixes: list[str] | None = None
                            ) -> list[tuple[str, int, list]]:
    """The words found in every list whose tokens (as bytes, since ids differ between
    vocabularies) are not the same in every version, most frequent first: ``(word, count,
    [ids of each version])``. Beside a character-level version (``suffixes``: each version's
    end-of-word suffix, "" for byte-level) a word differs where the versions cut it at
    different places: ``low</w>`` and `` low`` cut ``low`` alike."""
    suffixes = suffixes or [""] * len(vocabs)
    by_word = [{word: ids for word, _count, ids in words} for words in per_version]
    differing = []
    for word, count, _ids in per_version[0]:
        if not all(word in found for found in by_word):
            continue
        ids = [found[word] for found in by_word]
        spellings = {tuple(vocab[i] for i in version_ids)
                     for vocab, version_ids in zip(vocabs, ids)}
        if any(suffixes) and len(spellings) > 1:
            spellings = {_cuts([vocab[i] for i in version_ids], suffix)
                         for vocab, version_ids, suffix in zip(vocabs, ids, suffixes)}
        if len(spellings) > 1:
            differing.append((word, count, ids))
    return sorted(differing, key=lambda item: (-item[1], item[0]))


def _cuts(tokens: list, suffix: str) -> tuple:
    """Where tokens cut a word, as byte offsets into it (leading whitespace and end-of-word
    suffixes left out): ``_cuts([b" lo", b"w"], "") -> (2,)``; ``_cuts([b"lo", b"w</w>"],
    "</w>") -> (2,)``."""
    pieces = [bytes(t).removesuffix(suffix.encode()) for t in tokens]
    data = b"".join(pieces)
    lead = len(data) - len(data.lstrip())
    offsets = accumulate(map(len, pieces))
    return tuple(o - lead for o in offsets if lead < o < len(data))
