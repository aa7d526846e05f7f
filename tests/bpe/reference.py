"""A plain, obviously-correct reference trainer: the oracle for the fast one.

Pre-tokenize each text whole; then, for every merge, recount all pairs from scratch, take the pair
with the highest count (ties: the lexicographically greatest pair of byte strings), merge it
everywhere, repeat.
"""

import re

import regex

from tokenizers_app.bpe.pretokenize import NAMED_PATTERNS


def reference_words(texts, special_tokens, pattern) -> dict[bytes, int]:
    source = NAMED_PATTERNS.get(pattern, pattern)
    words: dict[bytes, int] = {}
    for text in texts:
        segments = [text]
        if special_tokens:
            alternatives = sorted(special_tokens, key=len, reverse=True)
            segments = re.split("|".join(map(re.escape, alternatives)), text)
        for segment in segments:
            pieces = [segment] if source is None else regex.findall(source, segment)
            for piece in pieces:
                if piece:
                    words[piece.encode()] = words.get(piece.encode(), 0) + 1
    return words


def reference_train(texts, vocab_size, special_tokens=(), pattern="gpt2", min_frequency=1):
    """Returns (vocab, merges, merge_counts) with the design's id layout."""
    words = {tuple(bytes([b]) for b in word): count
             for word, count in reference_words(texts, special_tokens, pattern).items()}
    merges, counts = [], []
    while 256 + len(special_tokens) + len(merges) < vocab_size:
        pairs: dict[tuple[bytes, bytes], int] = {}
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] = pairs.get(pair, 0) + count
        if not pairs:
            break
        best = max(pairs, key=lambda pair: (pairs[pair], pair))
        if pairs[best] < min_frequency:
            break
        merges.append(best)
        counts.append(pairs[best])
        words = _merge_everywhere(words, best)
    vocab = [t.encode() for t in special_tokens] + [bytes([b]) for b in range(256)]
    vocab += [left + right for left, right in merges]
    return dict(enumerate(vocab)), merges, counts


def _merge_everywhere(words, pair):
    merged = {}
    for word, count in words.items():
        out, i = [], 0
        while i < len(word):
            if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
                out.append(word[i] + word[i + 1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        merged[tuple(out)] = merged.get(tuple(out), 0) + count
    return merged
