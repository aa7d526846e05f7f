"""``HFEngine.batch_columns`` for a whole batch at once (numpy): the library's character offsets
of every document made byte spans by array operations over the documents joined, instead of
Python per document and per token; a document that needs more (a byte piece's span to spread,
spans out of order) goes through ``HFEngine.text_columns`` as before.

Why the answers are the same as ``text_columns`` document by document, joined:

- bytes: document ``k`` starts at character ``C_k`` of the joined text and at byte
  ``prefix[C_k]``, ``prefix[c]`` being the UTF-8 length of the joined text's first ``c``
  characters (the cumulative sum of each character's width, from its code point; for ASCII
  text ``prefix[c] == c``); so its character ``c`` is at byte ``prefix[C_k + c] - prefix[C_k]``
  of the document, ``char_to_byte_offsets`` of it, and at ``prefix[C_k + c]`` of the joined text;
- byte pieces: ``text_columns`` takes the spans as they are when every byte piece spans one
  byte and each starts after the previous one's start in its document (``_one_byte_each``),
  checked here on the same arrays, pairs within one document;
- ``tidy_columns``: a token with the next one's span (in its document), not empty, becomes empty
  at its start (decided on the spans before any change, as it does); then when in each
  document every span ends at or before the next one starts and none ends before it starts,
  nothing more changes; a document where that fails is done by ``text_columns``;
- a document's token starts are remembered for ``hf_parts`` when they are in order
  (``text_columns`` remembers them then, and only then, in both of its paths).
"""

from __future__ import annotations

from itertools import chain


def batch_columns(engine, texts: list[str]):
    """``(ids per text, ids, starts, ends, places)`` (see ``HFEngine.batch_columns``)."""
    import numpy as np

    encodings = [engine.encoded(text) for text in texts]
    id_lists = [encoding.ids for encoding in encodings]
    offsets = [encoding.offsets for encoding in encodings]
    del encodings
    n = len(texts)
    counts = np.fromiter(map(len, id_lists), np.int64, n)
    total = int(counts.sum())
    firsts = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=firsts[1:])
    ids = np.fromiter(chain.from_iterable(id_lists), np.int64, total)
    flat = np.fromiter(chain.from_iterable(chain.from_iterable(offsets)), np.int64, 2 * total)
    del offsets
    chars, char_ends = flat[0::2], flat[1::2]
    sizes = np.fromiter(map(len, texts), np.int64, n)
    char_places = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=char_places[1:])
    doc = np.repeat(np.arange(n), counts)
    shift = char_places[:-1][doc]
    joined = "".join(texts)
    if joined.isascii():
        starts, ends, places = chars + shift, char_ends + shift, char_places[:-1]
    else:
        points = np.frombuffer(joined.encode("utf-32-le"), np.uint32)
        prefix = np.zeros(len(joined) + 1, np.int64)
        np.cumsum(1 + (points >= 0x80).view(np.int8) + (points >= 0x800).view(np.int8)
                  + (points >= 0x10000).view(np.int8), out=prefix[1:])
        starts, ends, places = prefix[chars + shift], prefix[char_ends + shift], \
            prefix[char_places[:-1]]
    same_doc = doc[1:] == doc[:-1]  # pairs of tokens (i, i + 1) of one document
    redo = np.zeros(n, bool)
    if engine.byte_ids:
        pieces = np.flatnonzero(np.isin(ids, list(engine.byte_ids)))
        redo[doc[pieces[ends[pieces] - starts[pieces] != 1]]] = True
        pairs = (doc[pieces[1:]] == doc[pieces[:-1]]) & \
            (starts[pieces[1:]] <= starts[pieces[:-1]])
        redo[doc[pieces[1:][pairs]]] = True
    shared = np.flatnonzero(same_doc & (starts[:-1] == starts[1:]) & (ends[:-1] == ends[1:])
                            & (starts[:-1] < ends[:-1]))
    ends[shared] = starts[shared]
    redo[doc[:-1][same_doc & (ends[:-1] > starts[1:])]] = True
    redo[doc[starts > ends]] = True
    unordered = np.zeros(n, bool)
    unordered[doc[:-1][same_doc & (chars[1:] < chars[:-1])]] = True
    char_list, cuts = chars.tolist(), firsts.tolist()
    char_starts = [None if late else char_list[a:b]
                   for late, a, b in zip(unordered.tolist(), cuts, cuts[1:])]
    for k in np.flatnonzero(redo).tolist():
        (_, doc_starts, doc_ends), char_starts[k] = engine.text_columns(texts[k])
        a, b = cuts[k], cuts[k + 1]
        starts[a:b] = np.asarray(doc_starts, np.int64) + places[k]
        ends[a:b] = np.asarray(doc_ends, np.int64) + places[k]
    engine.remember(texts, id_lists, char_starts)
    return id_lists, ids, starts, ends, places.tolist()
