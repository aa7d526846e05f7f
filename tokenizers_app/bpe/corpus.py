"""Reading a training corpus as a stream: paths or strings in, text blocks out.

A *source* is a path (``str`` or ``os.PathLike``), or an iterable whose items are paths
(``os.PathLike``) or texts (``str``). Each file and each text is one *document*: pre-tokens never
span two documents. Files are decoded as strict UTF-8 while they are read.
"""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

BLOCK_BYTES = 1 << 20

Document = tuple[Path | None, Iterable[str]]  # (the file, or None for a text; text blocks)


def iter_documents(source) -> Iterator[Document]:
    """Yield ``(path, blocks)`` for each document of a source (``path`` is None for a text).

    ``iter_documents(["ab", "cd"]) -> (None, ["ab"]), (None, ["cd"])``
    """
    if isinstance(source, (str, os.PathLike)):
        source = [Path(source)]
    if isinstance(source, (bytes, bytearray)):
        raise ValueError("a corpus source must be text or paths, not bytes")
    for index, item in enumerate(source):
        if isinstance(item, os.PathLike):
            yield Path(item), read_blocks(item)
        elif isinstance(item, str):
            yield None, [item]
        else:
            raise ValueError(f"corpus item {index} is {type(item).__name__}, not a path or a str")


def source_size(source) -> int:
    """Total bytes of a source, for progress; 0 when unknown (an iterable of texts)."""
    if isinstance(source, (str, os.PathLike)):
        return _file_size(source)
    if isinstance(source, (list, tuple)):
        return sum(_file_size(item) if isinstance(item, os.PathLike) else len(item.encode())
                   for item in source if isinstance(item, (str, os.PathLike)))
    return 0


def _file_size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError as exc:
        raise ValueError(f"cannot read corpus file {os.fspath(path)!r}: {exc.strerror}") from None


class StrictUtf8:
    """Decodes a byte stream as strict UTF-8, block by block; a bad byte raises ``ValueError``
    naming ``what`` and the byte offset of the first bad byte in the stream (counted from
    ``offset``): ``StrictUtf8("the corpus").decode(b"ab\\xff", final=True)`` raises "the corpus
    is not valid UTF-8: byte 0xff at byte offset 2"."""

    def __init__(self, what: str, offset: int = 0, hint: str = ""):
        self.what, self.offset, self.hint = what, offset, hint
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")

    def decode(self, data: bytes, final: bool = False) -> str:
        pending = len(self.decoder.getstate()[0])  # bytes of a character cut by the last block
        try:
            text = self.decoder.decode(data, final=final)
        except UnicodeDecodeError as exc:
            where = self.offset - pending + exc.start
            raise ValueError(f"{self.what} is not valid UTF-8: byte 0x{exc.object[exc.start]:02x} "
                             f"at byte offset {where}{self.hint}") from None
        self.offset += len(data)
        return text


def read_blocks(path, block_bytes: int = BLOCK_BYTES) -> Iterator[str]:
    """Decode a file as strict UTF-8, block by block.

    A byte that is not UTF-8 raises ``ValueError`` naming the file and the byte offset.
    """
    decoder = StrictUtf8(f"corpus file {os.fspath(path)!r}")
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ValueError(f"cannot read corpus file {os.fspath(path)!r}: {exc.strerror}") from None
    with handle:
        while True:
            data = handle.read(block_bytes)
            text = decoder.decode(data, final=not data)
            if text:
                yield text
            if not data:
                return


LINE_SLACK = 1 << 16  # characters a line may run past the limit before it is cut


def read_lines(source, max_bytes: int) -> Iterator[str]:
    """The lines of a UTF-8 file (a path, or a binary stream, which is closed at the end), each
    with its newline, up to about ``max_bytes`` bytes: the line that crosses the limit is the
    last, cut if it runs more than ``LINE_SLACK`` characters past it (so one huge line is never
    read whole)."""
    remaining = max_bytes
    if isinstance(source, (str, os.PathLike)):
        handle = open(source, encoding="utf-8", newline="")
    else:
        handle = io.TextIOWrapper(source, encoding="utf-8", newline="")
    with handle:
        while remaining > 0:
            line = handle.readline(remaining + LINE_SLACK)
            if not line:
                return
            yield line
            remaining -= len(line.encode())


def sized_groups(items: Iterable, most: int, size=len) -> Iterator[list]:
    """Consecutive items, each group up to the one that takes its ``size`` to ``most``:
    ``list(sized_groups(["ab", "c", "de", "f"], 3)) -> [["ab", "c"], ["de", "f"]]``."""
    group: list = []
    total = 0
    for item in items:
        group.append(item)
        total += size(item)
        if total >= most:
            yield group
            group, total = [], 0
    if group:
        yield group
