"""Files written whole or not at all: tokenizer files, count parts, rendered downloads.

Each file goes to a temporary ``.part`` file beside its target, is flushed and fsynced, and
only when every file of the set is on disk do they replace their targets. A failure (a full
disk, say) removes the temporary files and leaves any existing targets as they were; a killed
process can leave only a ``.part`` file, which the registry's periodic sweep removes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_files(folder: Path, files: dict[str, bytes]) -> list[Path]:
    """Write each ``name: content`` into ``folder``, all of them or none."""
    staged: list[tuple[str, Path]] = []
    try:
        for name, content in files.items():
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".part")
            staged.append((temporary, folder / name))
            with os.fdopen(fd, "wb") as stream:
                stream.write(content)
                stream.flush()
                os.fsync(stream.fileno())
    except BaseException:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise
    for temporary, target in staged:
        os.replace(temporary, target)
    return [target for _, target in staged]

