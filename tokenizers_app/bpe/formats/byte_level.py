"""GPT-2's byte-to-unicode spelling: every byte as one printable character.

GPT-2's ``vocab.json`` and ``merges.txt``, Hugging Face's byte-level ``tokenizer.json`` and our
native format spell each token's bytes with this alphabet, so that a token is readable text and
still exact: printable Latin-1 bytes stand for themselves, the other 68 bytes (controls, space,
``\\x7f``-``\\xa0``, ``\\xad``) are shifted to the characters ``U+0100``... in byte order.

``spell(b" the") -> "Ġthe"``; ``unspell("Ġthe") -> b" the"``; ``spell(b"\\n") -> "Ċ"``.
"""

from __future__ import annotations


def _byte_alphabet() -> list[str]:
    """The character for each byte 0..255."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    alphabet, shifted = [], 0
    for byte in range(256):
        if byte in printable:
            alphabet.append(chr(byte))
        else:
            alphabet.append(chr(256 + shifted))
            shifted += 1
    return alphabet


BYTE_TO_CHAR: list[str] = _byte_alphabet()
CHAR_TO_BYTE: dict[str, int] = {char: byte for byte, char in enumerate(BYTE_TO_CHAR)}
_OUTSIDE = "\uffff"  # not in the alphabet, and not Latin-1: ``unspell``'s mark of a bad character
# ``str.translate`` table of ``unspell``: each character of the alphabet to the Latin-1 character
# of its byte; the characters below U+0100 that are not in the alphabet (space, controls) to
# ``_OUTSIDE``, so that they fail Latin-1 encoding as the characters above it do
_UNSPELL_TABLE: dict[int, str] = {**{code: _OUTSIDE for code in range(256)},
                                  **{ord(char): chr(byte) for char, byte in CHAR_TO_BYTE.items()}}


def spell(token: bytes) -> str:
    """A token's bytes in the byte-level alphabet: ``spell(b"a b") -> "aĠb"``."""
    return "".join(BYTE_TO_CHAR[b] for b in token)


def unspell(text: str) -> bytes:
    """The bytes a byte-level spelling stands for; ``ValueError`` for a character outside the
    alphabet: ``unspell("aĠb") -> b"a b"``. Done in C: each character becomes the Latin-1
    character of its byte (``_UNSPELL_TABLE``), then Latin-1 encoding gives the bytes."""
    try:
        return text.translate(_UNSPELL_TABLE).encode("latin-1")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ValueError(f"token {text!r} is not byte-level spelled: character {bad!r} "
                         f"is not in GPT-2's byte alphabet") from None
