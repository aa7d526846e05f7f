"""Staging a corpus: its bytes taken block by block into a temporary object of the store
(``corpora/incoming/*.part``: a file under ``MEDIA_ROOT``, or a multipart upload to the bucket),
checked as strict UTF-8, hashed and counted on the way. ``services.corpora`` then registers it."""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass

from django.conf import settings

from ..bpe.corpus import StrictUtf8
from ..bpe.corpus_stats import CorpusStats
from ..errors import Invalid, TooLarge, room_checked
from ..storage import get_store

log = logging.getLogger(__name__)

READ_BYTES = 1 << 20
NOT_STORED = "the corpus was not stored and nothing of it was kept"


@dataclass
class StagedCorpus:
    """A validated upload in a temporary object of the store (``corpora/incoming/*.part``),
    with what was learned while streaming it."""

    name: str
    sha256: str
    size_bytes: int
    line_count: int
    char_count: int
    scripts: dict


def stage_corpus(stream) -> StagedCorpus:
    """Copy a binary stream to a temporary object of the store, validating as it goes."""
    stager = CorpusStager()
    try:
        while data := stream.read(READ_BYTES):
            if not isinstance(data, bytes):
                raise TypeError("the corpus stream must be binary: open the file with mode 'rb'")
            stager.write(data)
        return stager.finish()
    except BaseException:
        stager.discard()
        raise


class CorpusStager:
    """Takes a corpus's bytes block by block into a temporary object of the store (a file under
    ``MEDIA_ROOT``, or a multipart upload to the bucket): checked as strict UTF-8, hashed and
    counted on the way, refused past ``CORPUS_MAX_BYTES``. Nothing exists under its name until
    ``finish``; the caller discards it on any error (an aborted upload leaves no object)."""

    def __init__(self):
        self.name = f"corpora/incoming/{uuid.uuid4().hex}.part"
        self.out = get_store().writer(self.name)
        self.decoder = StrictUtf8("the corpus",
                                  hint="; convert the file to UTF-8 and import it again")
        self.digest, self.stats, self.size = hashlib.sha256(), CorpusStats(), 0
        self.has_text = False

    def write(self, data: bytes) -> None:
        cap = settings.CORPUS_MAX_BYTES
        if self.size + len(data) > cap:
            raise TooLarge(f"the corpus is larger than the limit of {cap} bytes (setting "
                           f"CORPUS_MAX_BYTES): split it, or raise the limit", field="file")
        if self.size == 0:
            self._check_start(data)
        if (nul := data.find(b"\x00")) >= 0:
            raise Invalid(f"the corpus holds a NUL byte at byte offset {self.size + nul}: it "
                          f"looks like a binary file, not text", field="file")
        self.has_text = self.has_text or bool(data.strip())
        self.stats.add(self.decoder.decode(data))
        self.digest.update(data)
        with room_checked(NOT_STORED):
            self.out.write(data)
        self.size += len(data)

    @staticmethod
    def _check_start(data: bytes) -> None:
        """Refuse what is recognisably not UTF-8 text from its first bytes, saying what it is."""
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise Invalid("the corpus is UTF-16 (it starts with a UTF-16 byte-order mark), "
                          "not UTF-8: convert it to UTF-8 and import it again", field="file")
        if data[:2] == b"\x1f\x8b" or data[:4] == b"PK\x03\x04":
            raise Invalid("the corpus is a compressed file (gzip or zip), which is not "
                          "taken: upload the text itself", field="file")

    def finish(self) -> StagedCorpus:
        self.decoder.decode(b"", final=True)
        if self.size == 0:
            raise Invalid("the corpus is empty: the file holds no bytes", field="file")
        if not self.has_text:
            raise Invalid("the corpus holds only whitespace: there is no text to train on",
                          field="file")
        with room_checked(NOT_STORED):
            self.out.commit()
        self.finished = True
        return StagedCorpus(self.name, self.digest.hexdigest(), self.size, **self.stats.summary())

    finished = False

    def discard(self) -> None:
        self.out.abort()
        if self.finished:  # committed, and not moved into place by a registration
            forget_staged(self.name)


def forget_staged(name: str) -> None:
    """Remove a staged object that was not stored; a store that does not answer leaves it to
    the sweep (``.part`` objects go once old enough)."""
    try:
        get_store().delete(name)
    except Exception as exc:
        log.warning("staged corpus %s kept for the sweep: %s", name, exc)
