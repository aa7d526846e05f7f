"""Tokens laid over the text they spell, for display: consecutive tokens are grouped until they
end on a character boundary, so a character whose bytes are cut between tokens (byte fallback)
is shown once, whole, with the ids of all its tokens."""

from __future__ import annotations

from itertools import accumulate


def token_groups(tokenizer, text: str) -> list[dict]:
    """``{"ids": [...], "tokens": [bytes, ...], "text": str, "bytes": bytes, "start": int,
    "unknown": bool}`` per group, in order (a token of zero width, as an engine's prepended
    ``▁``, is in the group of the token after it) (``start``: its first byte's offset in the
    text's UTF-8; ``unknown``: a token is the tokenizer's ``<unk>``), from the
    tokenizer's ``token_spans`` (so baselines work too). With byte tokens, ``"a€"`` gives
    ``[{"ids": [97], "tokens": [b"a"], "text": "a", "bytes": b"a", "start": 0}, {"ids": [226, 130,
    172], "tokens": [b"\\xe2", b"\\x82", b"\\xac"], "text": "€", ..., "start": 1}]``."""
    data = text.encode()
    ends = set(range(len(data) + 1)) if len(data) == len(text) else \
        set(accumulate(map(len, map(str.encode, text))))  # where each character ends
    groups, ids, tokens, group_start = [], [], [], 0
    unk_id = getattr(tokenizer, "unk_id", None)  # a character-level BPE's <unk>
    for token_id, start, end in tokenizer.token_spans(text, ()):
        ids.append(token_id)
        tokens.append(data[start:end])
        if end in ends and end > start:  # a zero-width token joins the group that follows
            spelled = data[group_start:end]
            groups.append({"ids": ids, "tokens": tokens, "text": spelled.decode(),
                           "bytes": spelled, "start": group_start,
                           "unknown": unk_id is not None and unk_id in ids})
            ids, tokens, group_start = [], [], end
    if ids and groups:  # zero-width tokens at the very end join the last group
        groups[-1]["ids"] += ids
        groups[-1]["tokens"] += tokens
        groups[-1]["unknown"] = unk_id is not None and unk_id in groups[-1]["ids"]
    elif ids:
        groups.append({"ids": ids, "tokens": tokens, "text": "", "bytes": b"",
                       "start": group_start, "unknown": unk_id is not None and unk_id in ids})
    return groups


def mark_differences(groupings: list[list[dict]]) -> list[int]:
    """Mark each group (``"differs": True``) whose stretch of text, from its start to its end,
    is not one group in every other grouping: there one version cuts the text where another
    does not. Returns the number marked in each grouping; one grouping alone has none.

    Groups ``a|bc`` against ``ab|c``: every group differs (``[2, 2]``); ``a|bc`` against
    ``a|b|c``: ``bc`` in the first, ``b`` and ``c`` in the second (``[1, 2]``)."""
    spans = [{(g["start"], g["start"] + len(g["bytes"])) for g in groups} for groups in groupings]
    marked = []
    for index, groups in enumerate(groupings):
        others = [s for i, s in enumerate(spans) if i != index]
        shared = set.intersection(*others) if others else None
        count = 0
        for group in groups:
            group["differs"] = shared is not None and \
                (group["start"], group["start"] + len(group["bytes"])) not in shared
            count += group["differs"]
        marked.append(count)
    return marked
