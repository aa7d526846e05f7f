"""Tokens laid over the text they spell, for display: consecutive tokens are grouped until they
end on a character boundary, so a character whose bytes are cut between tokens (byte fallback)
is shown once, whole, with the ids of all its tokens."""

from __future__ import annotations


def token_groups(tokenizer, text: str) -> list[dict]:
    """``{"ids": [...], "tokens": [bytes, ...], "text": str, "bytes": bytes}`` per group, in order,
    from the tokenizer's ``token_spans`` (so baselines work too). With byte tokens, ``"a€"`` gives
    ``[{"ids": [97], "tokens": [b"a"], "text": "a", ...}, {"ids": [226, 130, 172], "tokens":
    [b"\\xe2", b"\\x82", b"\\xac"], "text": "€", ...}]``."""
    data = text.encode()
    starts = {0, len(data)}
    offset = 0
    for char in text:
        offset += len(char.encode())
        starts.add(offset)
    groups, current = [], {"ids": [], "tokens": [], "start": 0}
    for token_id, start, end in tokenizer.token_spans(text, ()):
        current["ids"].append(token_id)
        current["tokens"].append(data[start:end])
        if end in starts:
            spelled = data[current["start"]:end]
            groups.append({"ids": current["ids"], "tokens": current["tokens"],
                           "text": spelled.decode(), "bytes": spelled})
            current = {"ids": [], "tokens": [], "start": end}
    return groups
