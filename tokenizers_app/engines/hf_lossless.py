"""Lossless lines of a Hugging Face engine (``HFEngine.round_trips``) without asking the library
about a line that cannot come back: ``decode(encode_ordinary(line)) == line`` is false for a line
holding a character that no decoding can give.

Why that is exact. The library decodes ids by taking each id's token string (the model's
vocabulary and the added tokens, special ones too: ``skip_special_tokens=False``) and handing
the list to the decoder, or joining it with spaces when there is none. The decoders named in
``EXTRA`` only take characters away from their tokens (a prefix or suffix, a repeated or pad
token, ``Strip``'s character), join the tokens (``Fuse``), or turn characters into the
characters of ``EXTRA``: a space (``Metaspace``'s mark, ``BPEDecoder``'s suffix, ``CTC``'s word
delimiter, the spaces put between tokens) and the apostrophe that the ``WordPiece`` and ``CTC``
cleanups write (``" do not"`` becomes ``" don't"``); a ``Sequence`` of them only does that
again. So every character of a decoded text is a character of some token string or of
``EXTRA`` (``output_chars``): a line with any other character does not round-trip, whatever its
ids. Any other decoder (``ByteFallback`` and ``ByteLevel`` turn tokens into arbitrary bytes,
``Replace`` writes any text) gives ``None``: every line is asked of the library.

And without a decoder, under the ``"mark"`` pipeline of ``hf_parts`` (``Metaspace``, no
normalizer) over a BPE (no continuing-subword prefix or end-of-word suffix) or a Unigram: a line
that is not empty is pre-tokenized into pieces of which the first starts with the mark (the
line's own, or the one prepended), and each piece is encoded into tokens that start from its
characters: the model's pieces (whose strings concatenate to the piece's text), an unknown
character's unknown token or its bytes' ``<0xNN>`` pieces, and merges of neighbours (spelled as
both). So the first token's string starts with the mark, ``<`` or the unknown token's first
character; decoding writes the tokens' strings joined with spaces (an added token's content for
its id), so the decoded text starts with one of those or an added token's first character
(``first_chars``). A line starting with any other character does not round-trip.

Spaces (``single_spaces``): with no decoder (the tokens joined with spaces) or the
``WordPiece`` one (each token after the first either loses its continuing prefix or gets a
space before it, then its cleanup only turns a space and what follows into that without the
space, or ``" do not"`` into ``" don't"``), when no token string is empty or holds a space, the
decoded text has no space at its start or end and no two spaces in a row. A line with any of
these does not round-trip.
"""

from __future__ import annotations

from itertools import compress

EXTRA = {"WordPiece": " '", "CTC": " '", "Metaspace": " ", "BPEDecoder": " ", "Strip": "",
         "Fuse": ""}
NO_DECODER = " "  # the tokens joined with spaces


def output_chars(doc: dict, tokens) -> frozenset[str] | None:
    """Every character that the ``tokenizer.json`` ``doc`` can decode to, its token strings
    ``tokens`` (all of them, added ones too), or ``None`` when its decoder may write others."""
    extra = _decoder_extra(doc.get("decoder"))
    if extra is None:
        return None
    return frozenset(extra).union(*map(frozenset, tokens))


def first_chars(doc: dict, rule) -> frozenset[str] | None:
    """The characters that a decoded text that is not empty can start with (see the module),
    or ``None`` when not known; ``rule``: ``doc``'s ``hf_parts.line_rule``."""
    model = doc.get("model") or {}
    if doc.get("decoder") is not None or not rule or rule[0] != "mark":
        return None
    if model.get("type") == "BPE" and not model.get("continuing_subword_prefix") \
            and not model.get("end_of_word_suffix"):
        unknown = model.get("unk_token")
    elif model.get("type") == "Unigram":
        unk_id, vocab = model.get("unk_id"), model.get("vocab") or []
        unknown = vocab[unk_id][0] if unk_id is not None and 0 <= unk_id < len(vocab) else None
    else:
        return None
    texts = [rule[1], "<"] + ([unknown] if unknown is not None else [])
    texts += [token.get("content") or "" for token in doc.get("added_tokens") or []]
    return None if "" in texts else frozenset(text[0] for text in texts)


def single_spaces(doc: dict, tokens) -> bool:
    """Whether a decoded text never has a space at its ends or two in a row (see the
    module); ``tokens``: every token string, added ones too."""
    decoder = doc.get("decoder")
    if decoder is not None and decoder.get("type") != "WordPiece":
        return False
    return all(token and " " not in token for token in tokens)


def _decoder_extra(decoder: dict | None) -> str | None:
    if decoder is None:
        return NO_DECODER
    kind = decoder.get("type")
    if kind == "Sequence":
        parts = [_decoder_extra(part) for part in decoder.get("decoders") or []]
        return None if None in parts else NO_DECODER + "".join(parts)
    extra = EXTRA.get(kind)
    return None if extra is None else NO_DECODER + extra


def round_trips(lines: list[str], chars: frozenset[str] | None, encode, decode_batch,
                starts: frozenset[str] | None = None, spaced: bool = False) -> list[bool]:
    """``decode(encode_ordinary(line)) == line`` for each line, ``encode`` giving lines' ids and
    ``decode_batch`` decoding them: a line with a character outside ``chars``, or starting with
    one outside ``starts`` (``None``: none is), or (``spaced``: ``single_spaces``) with a space
    at an end or two in a row, is ``False`` without either."""
    found = [False] * len(lines)
    if chars is None or chars.issuperset("".join(lines)):
        asked = range(len(lines))
    else:
        asked = list(compress(range(len(lines)), map(chars.issuperset, lines)))
    if starts is not None:
        asked = [k for k in asked if not lines[k] or lines[k][0] in starts]
    if spaced:
        asked = [k for k in asked if lines[k][:1] != " " and lines[k][-1:] != " "
                 and "  " not in lines[k]]
    if asked:
        texts = [lines[k] for k in asked]
        for k, text, decoded in zip(asked, texts, decode_batch(encode(texts))):
            found[k] = decoded == text
    return found
