"""Evaluating any kind of tokenizer, streamed, in bounded memory: the core's
``evaluate_totals`` for its own kinds; for an engine, the corpus read as documents (its
paragraphs: the lines up to and including a blank line), sent to its library a batch at a time,
each document encoded in one call, and the totals (``bpe.eval_totals.EvalTotals``) of each
batch merged. No encoding of more than one batch is ever held.

Where a cut is safe. A library's normalizer or pre-tokenizer may make any cut inside a document
change a token: a SentencePiece model or a Llama-style ``tokenizer.json`` prepends its word-start
mark ``▁`` at the start of every text it encodes, so ``encode("a\\nb") != encode("a\\n") +
encode("b")``. An engine's documents are therefore cut only at blank lines (the rule
``BLANK_LINES``), and a corpus is cut into parts only there. A document longer than
``DOCUMENT_CHARS`` characters is cut at the first line end past that size, counted from its
start (so the same places in one process and in parts); for a prefixing library each such cut
may change the tokens at its seam.

The definitions are ``bpe.metrics``'s. Where a kind changes a number's meaning:

- words for word coverage are the whitespace-separated words (a word is covered when
  ``encode_ordinary(word)`` is one token that is not special);
- the unknown rate is reported when the tokenizer has an unknown token: the characters inside
  the spans of its ``<unk>`` / ``[UNK]`` tokens (WordPiece's ``[UNK]`` spans a whole word);
- the byte-fallback rate is reported when it has ``<0xNN>`` pieces: the characters they spell;
- the lossless rate is per line, without its line end, ``decode(encode_ordinary(line)) ==
  line``: a lowercasing or normalising tokenizer (BERT's) is lossy.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from bisect import bisect_left, bisect_right
from itertools import compress, filterfalse, repeat
from operator import sub

from ..bpe.baselines import WORD_RE, whitespace_words
from ..bpe.eval_totals import EvalTotals
from ..bpe.corpus import sized_groups
from ..bpe.metrics import word_spans
from . import batch_totals, running_words
from .running_words import COVERED_KEPT
from .document_texts import document_texts, line_count, text_batches
from .totals_wire import to_wire
from .spans import span_columns

DOCUMENT_CHARS = 1 << 20  # a document (paragraph) longer than this is cut at a line end
BATCH_CHARS = 1 << 20  # documents sent to the library per call, about this many characters
LINE_KEPT = 200  # lines up to this many characters are remembered as lossless or not
_ODD_SPACE = re.compile("[\x1c-\x1f]")  # cut by ``str.split``, not White_Space


def library_totals(tokenizer, blocks: Iterable[str], words: Counter | None = None) -> EvalTotals:
    """The mergeable totals of a tokenizer another library encodes (or any that meets the
    protocol) over ``"".join(blocks)``: its documents (``document_texts``), a batch at a time
    (``registry``'s kinds choose this or the core's); ``words``, when given, gets the totals'
    words with their counts."""
    found = EvalTotals()
    ask = getattr(tokenizer, "documents_totals", None)  # a sandboxed engine's child counts,
    session = uuid.uuid4().hex if ask else None  # keeping the words until the end
    memo: dict[str, object] = {"into": found}  # (in one process: the words counted at once)
    try:
        for batch in text_batches(document_texts(blocks, DOCUMENT_CHARS), BATCH_CHARS):
            totals = ask(batch, session) if ask else documents_totals(tokenizer, batch, memo)
            with batch_totals.gc_paused():
                batch_totals.merge_part(found, totals)
    except BaseException:  # (a failed batch: the session ends without its flush)
        if ask:
            tokenizer.forget_session(session)
        raise
    with batch_totals.gc_paused():
        if ask:
            batch_totals.merge_part(found, tokenizer.flush_totals(session))
        running_words.finish(found, memo, words)
    return found


def documents(lines: Iterable[str], most: int = DOCUMENT_CHARS) -> Iterator[list[str]]:
    """The lines of each document: through a blank line, or through the line that takes it
    past ``most`` characters: ``list(documents(["a\\n", "\\n", "b"])) -> [["a\\n", "\\n"],
    ["b"]]``."""
    document: list[str] = []
    size = 0
    for line in lines:
        document.append(line)
        size += len(line)
        if line in ("\n", "\r\n") or size >= most:
            yield document
            document, size = [], 0
    if document:
        yield document


def batches(docs: Iterable[list[str]], most: int = BATCH_CHARS) -> Iterator[list[list[str]]]:
    """Documents (each its lines) up to the one that takes the batch to ``most`` characters
    (``document_texts.text_batches`` of their texts)."""
    return sized_groups(docs, most, lambda doc: sum(map(len, doc)))


def documents_totals(tokenizer, texts: list[str], memo: dict[str, dict]) -> EvalTotals:
    """The totals of a batch of documents (each its text), each encoded in one call; ``memo``
    remembers words' coverage and short lines' round trips between batches (bounded); with
    ``memo["into"]`` (totals), the words are counted for those totals (``running_words``), not
    put in these."""
    with batch_totals.gc_paused():
        return _documents_totals(tokenizer, texts, memo)


def documents_wire(tokenizer, texts: list[str], memo: dict[str, dict]) -> dict:
    """``totals_wire.to_wire(documents_totals(tokenizer, texts, memo))`` (a sandbox child's
    answer), its words' columns made from the batch's ``Counter``, with no list per word."""
    with batch_totals.gc_paused():
        word_columns: list = []
        found = _documents_totals(tokenizer, texts, memo, word_columns)
        return to_wire(found, *word_columns)


def _documents_totals(tokenizer, texts: list[str], memo: dict[str, dict],
                      word_columns: list | None = None) -> EvalTotals:
    found, counts = EvalTotals(), Counter()
    covered = memo.setdefault("words", {})
    joined = "".join(texts)
    started = time.perf_counter()
    if getattr(tokenizer, "batch_columns", None) and batch_totals.numpy_found():
        columns = tokenizer.batch_columns(texts)  # the whole batch's spans as arrays
        found.seconds = time.perf_counter() - started
        _joined_counts(tokenizer, joined, texts, columns, found, counts)
        all_columns = None
    else:
        fast = getattr(tokenizer, "span_columns", None)  # the library's spans as columns
        all_columns = fast(texts) if fast else [span_columns(tokenizer.token_spans(text, ()))
                                                for text in texts]
        found.seconds = time.perf_counter() - started
        for text, (ids, starts, ends) in zip(texts, all_columns):
            data = text.encode()
            words = ([match.span() for match in WORD_RE.finditer(text)]
                     if len(data) == len(text) else _word_spans(text))  # ASCII: chars are bytes
            found.ids.update(ids)
            counts.update(bytes=len(data), chars=len(text), tokens=len(ids),
                          lines=line_count(text), words=len(words),
                          split_words=count_split_words(words, starts, ends))
            _rare_chars(tokenizer, data, ids, starts, ends, counts)
    del all_columns
    # an engine may give its documents' words and lines the ids encode_ordinary_batch gives,
    # known from the documents' encoding (``span_columns``) where its pipeline allows
    encode = getattr(tokenizer, "encode_parts", tokenizer.encode_ordinary_batch)
    if memo.get("into") is not None:
        running_words.count(tokenizer, memo, joined, encode, counts)
    else:
        split = (joined.split() if not _ODD_SPACE.search(joined)
                 else whitespace_words(joined))  # (``str.split`` also cuts at \x1c-\x1f)
        running_words.batch_words(tokenizer, Counter(split), covered, encode, found, counts,
                                  word_columns)
    counts["lossless_lines"] = _lossless_lines(tokenizer, line_counts(joined),
                                               memo.setdefault("lines", {}), encode)
    found.counts.update(counts)
    return found


def _joined_counts(tokenizer, joined: str, texts, columns, found: EvalTotals,
                   counts: Counter) -> None:
    """``documents_totals``' counts from ``batch_columns`` (``batch_totals``): the documents'
    ids, and their spans as arrays over the documents joined."""
    id_lists, ids, starts, ends, places = columns
    data = joined.encode()
    found.ids.update(batch_totals.id_counts(ids))
    word_starts, word_ends = batch_totals.word_bounds(data)
    split = batch_totals.split_count(word_starts, word_ends, starts, ends)
    if split is None:  # spans out of order: document by document
        split, first, words = 0, 0, list(zip(word_starts.tolist(), word_ends.tolist()))
        for doc_ids in id_lists:
            last = first + len(doc_ids)
            split += count_split_words(words, starts[first:last].tolist(),
                                       ends[first:last].tolist())
            first = last
    counts.update(bytes=len(data), chars=len(joined), tokens=len(ids),
                  lines=line_count(joined), words=len(word_starts), split_words=split)
    # (``_rare_chars`` of each text, at once: a count is there when some text has its ids)
    doc = None
    for name, chosen in (("unknown_chars", [tokenizer.unk_id]),
                         ("byte_fallback_chars", list(tokenizer.byte_ids))):
        marked = batch_totals.isin(ids, [i for i in chosen if i is not None])
        if marked.any():
            doc = batch_totals.text_of_tokens(id_lists) if doc is None else doc
            counts[name] += batch_totals.run_chars(data, marked, starts, ends, doc)


def _rare_chars(tokenizer, data: bytes, ids, starts, ends, counts: Counter) -> None:
    """The characters of ``data`` inside unknown and byte-fallback tokens (the character counts
    walk the spans only when they have something)."""
    unknown_id, byte_ids = tokenizer.unk_id, tokenizer.byte_ids
    seen = set(ids)
    if unknown_id in seen:
        counts["unknown_chars"] += _chars_in(data, zip(ids, starts, ends),
                                             lambda i: i == unknown_id)
    if byte_ids and not byte_ids.isdisjoint(seen):
        counts["byte_fallback_chars"] += _chars_in(data, zip(ids, starts, ends),
                                                   byte_ids.__contains__)


def count_split_words(words: list[tuple[int, int]], starts: list[int], ends: list[int]) -> int:
    """Words whose bytes touch 2+ tokens (``metrics.split_flags``), the tokens' spans in order
    and not overlapping (``spans.tidy_spans``): a word ``(a, b)`` touches the tokens that end
    after ``a`` and start before ``b``, those from ``bisect_right(ends, a)`` up to
    ``bisect_left(starts, b)``. ``count_split_words([(0, 5)], [0, 3], [3, 5]) -> 1``."""
    if not words or len(starts) < 2:
        return 0
    word_starts, word_ends = zip(*words)
    touched = map(sub, map(bisect_left, repeat(starts), word_ends),
                  map(bisect_right, repeat(ends), word_starts))
    return sum(map((1).__lt__, touched))


def _word_spans(text: str) -> list[tuple[int, int]]:
    """``metrics.word_spans`` of the whole text, line by line (no word holds a ``"\n"``); an
    ASCII line's character offsets are its byte offsets."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        if line.isascii():
            spans += [(offset + start, offset + end)
                      for start, end in map(_span, WORD_RE.finditer(line))]
            offset += len(line) + 1
        else:
            spans += [(offset + start, offset + end) for start, end in word_spans(line)]
            offset += len(line.encode()) + 1
    return spans


def _span(match) -> tuple[int, int]:
    return match.span()


def line_counts(text: str) -> Counter:
    """How many times each line of ``text`` occurs, each without its line end (``line_text``
    of each line, lines ending at ``\n``): ``line_counts("a\r\nb\na\n") -> Counter({"a": 2,
    "b": 1})``."""
    lines = text.split("\n")
    last = lines.pop()  # after the last line end: a line without one, or nothing
    counts = Counter(lines)
    ended = [line for line in counts if line.endswith("\r")]  # "\r\n" ends a line too
    for line, count in [(line[:-1], counts.pop(line)) for line in ended]:
        counts[line] += count
    if last:
        counts[last] += 1
    return counts


def _lossless_lines(tokenizer, counts: Counter, known: dict[str, bool], encode=None) -> int:
    """Lines that decode back to themselves, each without its line end (every SentencePiece
    normalizer drops a newline, which would make every line lossy):
    ``line_text("a b\r\n") -> "a b"``. Each distinct line is checked once; ``known``
    remembers the short ones (blank lines, code's repeated lines) between batches; ``counts``
    from ``line_counts``; ``encode`` (``encode_ordinary_batch`` by default) gives the lines'
    ids."""
    if len(known) > COVERED_KEPT:  # (before the fresh ones are chosen: each is looked up)
        known.clear()
    fresh = list(filterfalse(known.__contains__, counts))
    # the lines known before (``known.get``: None, counted as lossy, for the fresh ones)
    total = sum(compress(counts.values(), map(known.get, counts))) if len(fresh) < len(
        counts) else 0
    check = getattr(tokenizer, "round_trips", None)  # SentencePiece's, mostly from normalize
    if check and fresh:
        checked = check(fresh)
    else:
        encode = encode or tokenizer.encode_ordinary_batch
        decoded = tokenizer.decode_batch(encode(fresh)) if fresh else []
        checked = list(map(str.__eq__, decoded, fresh))
    known.update(compress(zip(fresh, checked), map(LINE_KEPT.__ge__, map(len, fresh))))
    return total + sum(compress(map(counts.__getitem__, fresh), checked))



def _chars_in(data: bytes, spans, chosen) -> int:
    """Characters spelled by runs of consecutive tokens that ``chosen(id)`` picks (each run's
    bytes decoded once, so a character cut into byte pieces counts once)."""
    count, run_start, run_end = 0, None, None
    for token_id, start, end in spans:
        if chosen(token_id):
            run_start = start if run_start is None else run_start
            run_end = end
        elif run_start is not None:
            count += len(data[run_start:run_end].decode("utf-8", errors="replace"))
            run_start = None
    if run_start is not None:
        count += len(data[run_start:run_end].decode("utf-8", errors="replace"))
    return count
