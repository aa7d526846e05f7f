"""The plain, obviously-correct versions of the core's fast paths: the oracles they are tested
against (as tiktoken keeps ``_educational.py``).

- ``reference_train``: pre-tokenize each text whole; then, for every merge, recount all pairs
  from scratch, take the pair with the highest count (ties: the lexicographically greatest pair
  of byte strings), merge it everywhere, repeat. Twin of ``training.train_bpe`` and
  ``training_loop.learn_merges``.
- ``reference_train_char``: the same for character-level BPE with ``</w>``. Twin of
  ``char_bpe.train_char_bpe``.
- ``reference_extend``: continued training: the parent's merges applied to each pre-token of
  the new texts (``reference_bpe``), then the same textbook loop, where a pair whose merged
  token is already a token is never chosen. Twin of ``extension.extend_bpe``.
- ``reference_bpe`` / ``reference_encode``: within each pre-token, merge the pair of lowest rank
  present (leftmost on a tie) until none is left. Twin of ``encoding_loop.MergeTable`` and
  ``Tokenizer.encode_ordinary``.
- ``reference_evaluate``: every metric on the whole text at once, with every token's span. Twin of
  ``evaluation.evaluate`` (``totals``, ``pretoken_totals``).
"""

import re
from collections import Counter

import regex

from tokenizers_app.bpe.metrics import (
    BYTE_LEVEL,
    count_cut_characters,
    count_split_words,
    metrics_of,
    word_spans,
)
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
            pretokens = [segment] if source is None else regex.findall(source, segment)
            for pretoken in pretokens:
                if pretoken:
                    words[pretoken.encode()] = words.get(pretoken.encode(), 0) + 1
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


def reference_extend(parent_vocab, parent_merges, special_tokens, pattern, texts, vocab_size,
                     min_frequency=1):
    """Returns (vocab, merges, merge counts) of the child: the parent's vocab, then one id per
    new merge after the parent's largest id."""
    words = {}
    for word, count in reference_words(texts, special_tokens, pattern).items():
        parts = tuple(reference_bpe(parent_merges, word))
        words[parts] = words.get(parts, 0) + count
    known = set(parent_vocab.values()) - {t.encode() for t in special_tokens}
    merges, counts = [], []
    while len(parent_vocab) + len(merges) < vocab_size:
        pairs: dict[tuple[bytes, bytes], int] = {}
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                if pair[0] + pair[1] not in known:
                    pairs[pair] = pairs.get(pair, 0) + count
        if not pairs:
            break
        best = max(pairs, key=lambda pair: (pairs[pair], pair))
        if pairs[best] < min_frequency:
            break
        merges.append(best)
        counts.append(pairs[best])
        known.add(best[0] + best[1])
        words = _merge_everywhere(words, best)
    vocab = dict(parent_vocab)
    first = max(vocab) + 1
    vocab.update((first + n, left + right) for n, (left, right) in enumerate(merges))
    return vocab, list(parent_merges) + merges, counts


def reference_bpe(merges: list[tuple[bytes, bytes]], pretoken: bytes) -> list[bytes]:
    """The tokens of one pre-token: merge the pair of lowest rank present (leftmost on a tie)
    until no pair has a rank. ``reference_bpe([(b"a", b"b")], b"abab") -> [b"ab", b"ab"]``"""
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    parts = [bytes([b]) for b in pretoken]
    while True:
        ranked = [(ranks[pair], i) for i, pair in enumerate(zip(parts, parts[1:])) if pair in ranks]
        if not ranked:
            return parts
        _rank, i = min(ranked)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def reference_encode(merges: list[tuple[bytes, bytes]], pattern: str, text: str) -> list[bytes]:
    """The tokens of a text (no special tokens): pre-tokenize with ``regex``, then
    ``reference_bpe`` each pre-token. Twin of ``Tokenizer.encode_ordinary``."""
    source = NAMED_PATTERNS.get(pattern, pattern)
    pretokens = [text] if source is None else regex.findall(source, text)
    return [token for pretoken in pretokens if pretoken
            for token in reference_bpe(merges, pretoken.encode())]


def reference_evaluate(tokenizer, blocks) -> dict:
    """The plain computation on the whole text ``"".join(blocks)`` at once, with every token's
    span: the oracle for the fast ``evaluate``, which streams the text in pieces and counts each
    distinct pre-token or run once. The lossless rate is per line (ending after each newline),
    each without its line end."""
    special_ids = set(tokenizer.special_ids.values())
    text = "".join(blocks)
    lines = re.findall(r"[^\n]*\n|[^\n]+", text)
    totals, covered = Counter(), {}
    ids = tokenizer.encode_ordinary(text)
    words = word_spans(text)
    spans = [(start, end) for _id, start, end in tokenizer.token_spans(text, ())]
    totals.update(bytes=len(text.encode()), chars=len(text), tokens=len(ids), words=len(words),
                  lines=len(lines), split_words=count_split_words(words, spans),
                  lossless_lines=sum(tokenizer.decode(tokenizer.encode_ordinary(bare)) == bare
                                     for bare in (re.sub(r"\r?\n$", "", line)
                                                  for line in lines)))
    id_counts = Counter(ids)
    if tokenizer.algorithm == "byte_bpe":
        own_words = [w for w in tokenizer.pretokenizer.split(text) if not w.isspace()]
    else:
        own_words = tokenizer.split_words(text)
    for word in own_words:
        if word not in covered:
            word_ids = tokenizer.encode_ordinary(word)
            covered[word] = len(word_ids) == 1 and word_ids[0] not in special_ids
        totals.update(own_words=1, covered_words=covered[word])
    if tokenizer.algorithm in BYTE_LEVEL:
        multibyte, cut = count_cut_characters(text, {b for span in spans for b in span})
        totals.update(multibyte_chars=multibyte, cut_chars=cut)
    else:
        totals.update(unknown_chars=tokenizer.unknown_count(text))
    totals.update(distinct_own_words=len(covered), distinct_covered_words=sum(covered.values()))
    return metrics_of(tokenizer, totals, id_counts, seconds=1.0)


WORDS = {"whitespace": r"\S+", "word_punct": r"\w+|[^\w\s]+"}


def reference_train_char(text, vocab_size, lowercase=False, split="whitespace",
                         min_word_frequency=1, min_frequency=1):
    """The plain character-level trainer: recount every pair at each step, take the best by
    count, then by the tie-break on UTF-8 bytes. Twin of ``char_bpe.train_char_bpe``."""
    words = regex.findall(WORDS[split], text)
    counts = Counter(w.lower() if lowercase else w for w in words)
    spelled = {tuple([*w[:-1], w[-1] + "</w>"]): c for w, c in counts.items()
               if c >= min_word_frequency}
    alphabet = sorted({s for word in spelled for s in word}, key=str.encode)
    merges, merge_counts = [], []
    while 1 + len(alphabet) + len(merges) < vocab_size:
        pairs = Counter()
        for word, count in spelled.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], (p[0].encode(), p[1].encode())))
        if pairs[best] < min_frequency:
            break
        merges.append(best)
        merge_counts.append(pairs[best])
        spelled = {merge_symbols(word, best): count for word, count in spelled.items()}
    return alphabet, merges, merge_counts


def merge_symbols(word, pair):
    out, i = [], 0
    while i < len(word):
        if word[i:i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def reference_extend_char(parent_vocab, parent_merges, specials, text, vocab_size,
                          split="whitespace", lowercase=False):
    """The plain character-level extension: new symbols after the parent's largest id (by UTF-8
    bytes), the parent's merges applied lowest rank first, then the textbook loop where a pair
    whose merged token is already a token is never chosen. Twin of
    ``char_extension.extend_char_bpe``. Returns (vocab, merges, merge counts of new merges)."""
    words = regex.findall(WORDS[split], text)
    counts = Counter(w.lower() if lowercase else w for w in words)
    spelled = {}
    for word, count in counts.items():
        symbols = [*word[:-1], word[-1] + "</w>"]
        spelled[tuple(symbols)] = spelled.get(tuple(symbols), 0) + count
    vocab = dict(parent_vocab)
    seen = sorted({s for word in spelled for s in word} - set(vocab.values()), key=str.encode)
    start = max(vocab) + 1
    vocab.update((start + n, s) for n, s in enumerate(seen))
    ranks = {}
    for rank, pair in enumerate(parent_merges):
        ranks.setdefault(pair, rank)
    words = {}
    for word, count in spelled.items():
        parts = list(word)
        while True:
            ranked = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
            if not ranked:
                break
            _rank, i = min(ranked)
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        words[tuple(parts)] = words.get(tuple(parts), 0) + count
    known = set(vocab.values()) - set(specials)
    merges, merge_counts = [], []
    while len(vocab) + len(merges) < vocab_size:
        pairs = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                if pair[0] + pair[1] not in known:
                    pairs[pair] += count
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], (p[0].encode(), p[1].encode())))
        merges.append(best)
        merge_counts.append(pairs[best])
        known.add(best[0] + best[1])
        words = _merge_everywhere(words, best)
    first = max(vocab) + 1
    vocab.update((first + n, left + right) for n, (left, right) in enumerate(merges))
    return vocab, list(parent_merges) + merges, merge_counts


def reference_extend_pieces(parent_pieces, words, wanted, min_frequency=1):
    """The plain extension of another library's BPE model (SentencePiece, ``tokenizer.json``):
    ``words`` maps tuples of pieces (bytes), as the parent's library segments the new corpus, to
    counts; a symbol that is no parent piece is a character the parent spells with byte pieces.
    Recount every pair at each step, take the best by (count, pair), never learn a pair whose
    join is a piece already; a new character becomes a piece just before the first merge that
    takes it; when the next merge and its new characters do not fit in ``wanted``, the last ids
    hold those characters. Returns ``[(piece, left, right)]`` (left and right None for a
    character) in id order."""
    known = set(parent_pieces)
    new_chars = {symbol for word in words for symbol in word} - known
    pieces, placed = [], set()
    while len(pieces) < wanted:
        pairs: dict[tuple[bytes, bytes], int] = {}
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                if pair[0] + pair[1] not in known:
                    pairs[pair] = pairs.get(pair, 0) + count
        if not pairs:
            break
        best = max(pairs, key=lambda pair: (pairs[pair], pair))
        if pairs[best] < min_frequency:
            break
        sides = [side for side in dict.fromkeys(best) if side in new_chars and side not in placed]
        if len(pieces) + len(sides) + 1 > wanted:
            pieces += [(side, None, None) for side in sides][:wanted - len(pieces)]
            break
        for side in sides:
            pieces.append((side, None, None))
            placed.add(side)
        pieces.append((best[0] + best[1], best[0], best[1]))
        known.add(best[0] + best[1])
        words = _merge_everywhere(words, best)
    return pieces
