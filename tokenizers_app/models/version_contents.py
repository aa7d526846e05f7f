"""A version's contents: writing its merge and vocab rows, and reading them back as the
tokenizer of its kind (``engines.registry``: ``from_rows``, or its canonical file for the kinds
kept as a file), checked against its digest and kept in memory per process.
``TokenizerVersion`` inherits these methods."""

from __future__ import annotations

import threading

from django.conf import settings

from tokenizers_app.bpe.inspection import token_length_histogram
from tokenizers_app.bpe.training import build_vocab
from tokenizers_app.caches import BoundedCache, deep_size
from tokenizers_app.engines.protocol import Engine
from tokenizers_app.engines.registry import FILE, kind_named, kind_of
from tokenizers_app.engines.sandbox import EnginePool
from tokenizers_app.errors import Damaged

from .contents import MergeRule, VocabEntry
from .rows import bulk_insert, fetch_rows, q


def _weigh(tokenizer) -> int:
    """A loaded tokenizer's bytes in this process, measured (its token table built first, as
    encoding on request builds it); an engine's pool of children is not its own."""
    getattr(tokenizer, "token_table", None)
    return deep_size(tokenizer, skip=(EnginePool,))


# digest -> core tokenizer, in this process: at most LOADED_TOKENIZERS of them, and at most
# LOADED_TOKENIZERS_BYTES of memory (measured when each is loaded)
_LOADED: BoundedCache[Engine] = BoundedCache(
    lambda: settings.LOADED_TOKENIZERS, max_bytes=lambda: settings.LOADED_TOKENIZERS_BYTES,
    weigh=_weigh)
_LOADING = threading.Lock()


class VersionContents:
    """The rows of a ``TokenizerVersion`` (``self.pk``, ``algorithm``, ``pattern``, ``options``,
    ``special_tokens``, ``digest``, ``standard_layout``) and the tokenizer they make."""

    def write_contents(self, tokenizer: Engine) -> None:
        """Write the merge rows and vocab rows of ``tokenizer``, as its kind keeps them (call
        inside the transaction that created this version)."""
        pk, kind = self.pk, kind_of(tokenizer)
        counts = getattr(tokenizer, "merge_counts", None) or [None] * len(tokenizer.merges)
        merges = kind.merge_rows(tokenizer)
        merge_rows = ((pk, rank, left, right, count)
                      for rank, ((left, right), count) in enumerate(zip(merges, counts)))
        bulk_insert(MergeRule, ["version_id", "rank", "left", "right", "count"], merge_rows)
        bulk_insert(VocabEntry, ["version_id", "token_id", "token", "kind"],
                    ((pk, *row) for row in kind.vocab_rows(tokenizer)))
        self.standard_layout = kind.standard_layout(tokenizer)
        type(self).objects.filter(pk=pk).update(standard_layout=self.standard_layout)

    def cached_tokenizer(self) -> Engine:
        """This version's core tokenizer, kept in memory in this process and keyed by digest (at
        most ``LOADED_TOKENIZERS`` of them and ``LOADED_TOKENIZERS_BYTES`` of memory; the least
        recently used goes first; one larger than the whole budget is not kept), so that encoding
        on request neither reloads rows nor starts from a cold pre-token cache."""
        tokenizer = _LOADED.get(self.digest)
        if tokenizer is None:
            with _LOADING:  # one load at a time: N threads loading N big versions at once
                tokenizer = _LOADED.get(self.digest)  # would hold N times the budget
                if tokenizer is None:
                    if self.get_deferred_fields():  # looked up by digest alone: one query
                        self.refresh_from_db(fields=list(self.get_deferred_fields()))
                    tokenizer = _LOADED.put(self.digest, self.load_tokenizer(web=True))
        return tokenizer

    def token_length_histogram(self) -> list[tuple[int, int]]:
        """``(length in bytes, number of tokens)``, shortest first, special tokens left out."""
        return token_length_histogram(self.cached_tokenizer())

    def load_tokenizer(self, *, web: bool = False) -> Engine:
        """Rebuild the tokenizer of its kind from the rows (``from_rows``); rows that no longer give the recorded
        digest (a row lost or changed) raise ``Damaged``: a damaged version is never
        served, exported or evaluated. A version of another library's kind is loaded from its
        canonical file instead, in a child process (``load_engine``; ``web``: the web
        process's pool)."""
        kind = kind_named(self.algorithm)
        if kind.stored_in == FILE:
            return self.load_engine(web=web)
        try:
            vocab, merges, counts, special_ids = self.read_contents()
            tokenizer = kind.from_rows(vocab, merges, counts, special_ids, self.shown_pattern,
                                       self.options)
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            raise Damaged(f"damaged version {self.label}: its rows no longer make a "
                                 f"tokenizer ({exc}); it is not served. Run manage.py "
                                 f"verify") from None
        if self.digest and kind.digest(tokenizer) != self.digest:
            raise Damaged(f"damaged version {self.label}: its rows give another digest "
                                 f"than the {self.digest[:12]}… recorded when it was made (a "
                                 f"merge or vocab row was lost or changed); it is not served. "
                                 f"Run manage.py verify")
        return tokenizer

    def read_contents(self):
        """``(vocab, merges, merge counts or None, special ids)`` read from the rows: plain tuples
        in rank order, no ORM objects. A vocab in the standard layout is derived from the merges
        instead of read (its rows hold the same)."""
        merges = fetch_rows(f"SELECT {q('left')}, {q('right')}, {q('count')} FROM "
                            f"{q(MergeRule._meta.db_table)} WHERE version_id = %s "
                            f"ORDER BY {q('rank')}", self.pk)
        counts = [count for _, _, count in merges]
        counts = None if None in counts else counts
        merges = [(left, right) for left, right, _ in merges]
        if self.standard_layout:
            specials = list(self.special_tokens)
            return (build_vocab(merges, specials), merges, counts,
                    {token: i for i, token in enumerate(specials)})
        vocab = dict(fetch_rows(f"SELECT token_id, token FROM {q(VocabEntry._meta.db_table)} "
                                f"WHERE version_id = %s", self.pk))
        if self.kind.stored_in == FILE:  # its special tokens' rows are of the library's kinds
            by_text = {bytes(token).decode("utf-8", "replace"): i for i, token in vocab.items()}
            return vocab, merges, counts, {token: by_text[token] for token in self.special_tokens}
        special = fetch_rows(f"SELECT token, token_id FROM {q(VocabEntry._meta.db_table)} "
                             f"WHERE version_id = %s AND kind = %s", self.pk,
                             VocabEntry.Kind.SPECIAL.value)
        special_ids = {bytes(token).decode(): token_id for token, token_id in special}
        return vocab, merges, counts, {token: special_ids[token] for token in self.special_tokens}
