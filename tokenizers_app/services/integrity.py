"""Checking what the registry holds against what it recorded: every ready version's rows against
its content digest (and, for the standard id layout, its vocab rows against the vocab its merges
make), and every corpus file (in the store: ``MEDIA_ROOT`` or the bucket) against its size and
sha256 (``services.downloads.damaged_downloads`` does the same for rendered downloads).
``manage.py verify`` reports each mismatch; loading a version checks its digest too
(``TokenizerVersion.load_tokenizer``)."""

from __future__ import annotations

import hashlib

from ..engines import FILE
from ..errors import Damaged
from ..models import Corpus, TokenizerVersion, VocabEntry
from ..storage import get_store

BLOCK = 1 << 20


def damaged_versions():
    """``(version label, problem)`` for each ready version whose rows do not check out."""
    for version in TokenizerVersion.objects.ready().select_related("tokenizer").order_by("pk"):
        try:
            tokenizer = version.load_tokenizer()
        except Damaged as exc:
            yield version.label, str(exc)
            continue
        if version.standard_layout or version.kind.stored_in == FILE:
            # the vocab comes from the merges, or from an engine's file: check the rows too
            rows = {token_id: bytes(token) for token_id, token in
                    VocabEntry.objects.filter(version=version).values_list("token_id", "token")}
            if rows != tokenizer.vocab:
                yield version.label, (f"damaged version {version.label}: its {len(rows)} vocab "
                                      f"rows differ from the {len(tokenizer.vocab)} tokens its "
                                      f"merges and special tokens (or its file) make")


def damaged_corpora():
    """``(corpus name, problem)`` for each corpus whose file is missing or not what was stored."""
    for corpus in Corpus.objects.order_by("pk"):
        try:
            digest, size = hashlib.sha256(), 0
            with get_store().open(corpus.object_name) as stream:
                while block := stream.read(BLOCK):
                    digest.update(block)
                    size += len(block)
        except OSError as exc:
            yield corpus.name, f"corpus {corpus.name!r}: its file cannot be read ({exc.strerror})"
            continue
        if (size, digest.hexdigest()) != (corpus.size_bytes, corpus.sha256):
            yield corpus.name, (f"corpus {corpus.name!r}: its file ({size} bytes, sha256 "
                                f"{digest.hexdigest()[:12]}…) is not what was stored "
                                f"({corpus.size_bytes} bytes, sha256 {corpus.sha256[:12]}…)")
