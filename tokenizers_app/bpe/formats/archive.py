"""Tokenizer files as one download: a single file as it is, several files as a zip that is
byte-identical for identical files (sorted names, fixed time stamps and permissions)."""

from __future__ import annotations

import io
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: no clock in the bytes


def zip_files(files: dict[str, bytes], folder: str) -> bytes:
    """The files in a zip, inside ``folder/``, deterministically:
    ``zip_files({"b": b"2", "a": b"1"}, "t") == zip_files({"a": b"1", "b": b"2"}, "t")``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever machine wrote it
            archive.writestr(info, files[name])
    return buffer.getvalue()


def download_file(files: dict[str, bytes], name: str, format: str) -> tuple[str, bytes]:
    """``(file name, bytes)`` of a tokenizer's files as one download: the file itself when there
    is one (``tokenizer.json`` for ``hf``), else ``NAME-FORMAT.zip`` holding them in a folder."""
    if len(files) == 1:
        [(file_name, data)] = files.items()
        return ("tokenizer.json" if format == "hf" else file_name), data
    return f"{name}-{format}.zip", zip_files(files, f"{name}-{format}")
