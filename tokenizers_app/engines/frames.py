"""The frames a sandbox parent and child speak: an 8-byte big-endian length, then JSON (ASCII,
lone surrogates escaped). The child's answer is parsed as data only, never unpickled."""

from __future__ import annotations

import base64
import json
import os
import select
import time

FRAME_MOST = 1024 ** 3  # a frame longer than this is a broken child



def write_frame(stream, message: dict) -> None:
    data = json.dumps(message).encode("ascii")  # lone surrogates as escapes
    stream.write(len(data).to_bytes(8, "big") + data)
    stream.flush()


def read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None) -> dict:
    size = int.from_bytes(read_exact(fd, 8, deadline), "big")
    if size > FRAME_MOST:
        raise EOFError
    message = json.loads(read_exact(fd, size, deadline))
    if not isinstance(message, dict):
        raise EOFError
    return message


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)
