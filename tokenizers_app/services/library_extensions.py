"""The work of an extension run of a SentencePiece or ``tokenizer.json`` BPE version in a worker
(``engines.library_extension``): the parent's library, in the worker's sandbox child, segments
the run's corpus files line by line and writes the child's file; this process learns the new
pieces with the training loop and checks that the child keeps every parent id."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..bpe.corpus import iter_documents
from ..bpe.training import CountProgress, Ticker
from ..engines.library_extension import Learned, learn_pieces
from ..engines.sandbox import unb64
from ..models import TrainingRun
from ..models.engine_versions import read_engine_files_checked

BATCH_CHARS = 256 * 1024  # text per request to the child: well within its time per request


@dataclass
class LibraryExtensionResult:
    """What ``save_training_result`` saves: the child as an engine (its file checked as an
    import's is), the new merges (for the run's rate) and why fewer pieces than asked."""

    engine: object
    merges: list
    stop_reason: str

    def tokenizer(self):
        return self.engine


def extend_library_files(*, run: TrainingRun, paths, reporter) -> LibraryExtensionResult:
    """The result of an extension run of a library's BPE version over its corpus files."""
    parent_version = run.extends
    parent = parent_version.load_engine()
    ticker = Ticker(reporter.progress, reporter.should_stop)
    counted = CountProgress(ticker, sum(os.path.getsize(path) for path in paths))
    words: dict[tuple, int] = {}
    for texts, size in line_batches(paths):
        for word, count in parent._ask("segment", texts=texts)["words"]:
            key = tuple(word)
            words[key] = words.get(key, 0) + count
        counted.add(size)
    counted.add(force=True)
    wanted = run.vocab_size - len(parent.vocab)
    learned = learn_pieces(words, parent.vocab, wanted, run.min_frequency, ticker)
    data = unb64(parent._ask("extend_file", additions=[a.to_json()
                                                        for a in learned.additions])["data"])
    kind = run.kind
    child = read_engine_files_checked({kind.file_name: data}, kind.name)
    check_keeps_parent(parent, child, learned)
    merges = [(a.left, a.right) for a in learned.additions if a.left is not None]
    return LibraryExtensionResult(child, merges, learned.stop_reason)


def line_batches(paths) -> Iterator[tuple[list[str], int]]:
    """The files' lines (without their ends; empty ones left out) in batches of about
    ``BATCH_CHARS`` characters, each with its size in UTF-8 bytes (for progress)."""
    batch: list[str] = []
    chars = size = 0
    for _, blocks in iter_documents(list(paths)):
        carry = ""
        for block in blocks:
            lines = (carry + block).split("\n")
            carry = lines.pop()
            for line in lines:
                size += len(line.encode()) + 1
                if line.strip():
                    batch.append(line)
                    chars += len(line)
                if chars >= BATCH_CHARS:
                    yield batch, size
                    batch, chars, size = [], 0, 0
        if carry.strip():
            batch.append(carry)
            size += len(carry.encode())
    if batch or size:
        yield batch, size


def check_keeps_parent(parent, child, learned: Learned) -> None:
    """``ValueError`` unless every parent id names the same piece in the child and the new ids
    follow the parent's largest, one per addition, in learned order."""
    if any(child.vocab.get(i) != piece for i, piece in parent.vocab.items()):
        raise ValueError("the extended file changed a parent piece: nothing was saved")
    first = max(parent.vocab) + 1
    expected = {first + n: a.piece.encode() for n, a in enumerate(learned.additions)}
    if {i: t for i, t in child.vocab.items() if i not in parent.vocab} != expected:
        raise ValueError("the extended file's new ids do not follow the parent's largest in "
                         "learned order: nothing was saved")
