"""What each kind of tokenizer is, in words, for the pages that show one: what its vocabulary
holds, what its tokens are built from, whether merges made them, its unknown token's name and
what each of its downloads is. ``describe(tokenizer)`` asks the loaded tokenizer (our core's or
an engine), so a page never guesses a kind from its label. Each kind of the registry
(``registry.KINDS``) picks its description here: ``registry.describe(tokenizer)``."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

FORMAT_TEXT = {  # what each download holds
    "hf": "tokenizer.json for Hugging Face tokenizers",
    "gpt2": "vocab.json + merges.txt",
    "tiktoken": "rank file + sidecar JSON",
    "minbpe": "minbpe's .model",
    "transformers": "a folder that AutoTokenizer.from_pretrained loads",
    "tekken": "Mistral's tekken.json, for mistral-common",
    "subword-nmt": "codes.txt for subword-nmt apply-bpe -c (+ vocab.json, the ids)",
    "native": "ours, with merge counts",
    "sentencepiece": "the .model as the sentencepiece library wrote it",
}


@dataclass(frozen=True)
class KindDescription:
    """``name``: the kind as people call it; ``holds``: what its vocabulary holds, as counted
    phrases; ``base``: what its tokens are built down to (bytes, characters, pieces);
    ``base_tokens``: the tokens that are not learned; ``merges``: how its tokens are made when
    not by merges with counts (empty for a BPE trained here); ``unk_token``: its unknown
    token's text, if it has one."""

    name: str
    holds: list[str]
    base: str
    base_tokens: str
    merges: str = ""
    unk_token: str | None = None
    has_merges: bool = True
    leaves: dict[str, str] = field(default_factory=dict)

    def leaf(self, token_id: int, token) -> str:
        """What a token no merge makes is: ``special token``, ``byte``, ``character``,
        ``piece``, ``unknown token``, ``byte piece``; ``no merge`` for a byte-level token of
        several bytes that no merge makes."""
        if token_id in self.leaves:
            return self.leaves[token_id]
        if self.base == "bytes":
            return "byte" if len(token) == 1 else "no merge"
        return "character" if self.base == "characters" else "piece"


def unknown_token(tokenizer) -> str | None:
    """The text of the tokenizer's unknown token (``[UNK]``, ``<unk>``), or None."""
    unk_id = getattr(tokenizer, "unk_id", None)
    return _text(tokenizer.vocab.get(unk_id)) if unk_id is not None else None


def _counted(count: int, what: str) -> str:
    return f"{count:,} {what}"


def _leaves(tokenizer) -> dict[int, str]:
    leaves = {i: "special token" for i in tokenizer.special_ids.values()}
    if tokenizer.unk_id is not None:
        leaves[tokenizer.unk_id] = "unknown token"
    for token_id in getattr(tokenizer, "byte_ids", ()):
        leaves[token_id] = "byte piece"
    return leaves


def byte_level(tokenizer) -> KindDescription:
    special = len(tokenizer.special_ids)
    return KindDescription(
        "byte-level BPE", [_counted(special, "special"), "256 bytes",
                           _counted(len(tokenizer.merges), "merges")], "bytes",
        "the special tokens and the 256 bytes", _counts_note(tokenizer),
        leaves=_leaves(tokenizer))


def char_level(tokenizer) -> KindDescription:
    special = set(tokenizer.special_ids.values())
    alphabet = len(tokenizer.vocab) - len(special) - len(tokenizer.merges)
    return KindDescription(
        "character-level BPE", [_counted(len(special), "special"),
                                _counted(alphabet, "characters (the alphabet)"),
                                _counted(len(tokenizer.merges), "merges")], "characters",
        "the special tokens and the alphabet's characters", _counts_note(tokenizer),
        unk_token=unknown_token(tokenizer), leaves=_leaves(tokenizer))


def _counts_note(tokenizer) -> str:
    if tokenizer.merge_counts is None and tokenizer.merges:
        return "Its merges were imported: counts not recorded."
    return ""


def library(tokenizer, library: str) -> KindDescription:
    """A model of another library (``library``: "Hugging Face", "SentencePiece"): pieces, by
    what the library marks them as."""
    model = getattr(tokenizer, "model_type", "") or "?"
    kinds = Counter(kind for _, _, kind, _ in tokenizer.vocab_kinds())
    special = kinds["special"] + kinds["control"]
    unk = unknown_token(tokenizer)
    holds = [_counted(special, "special")]
    if unk is not None:
        holds.append(f"1 unknown ({unk})")
    if kinds["byte"]:
        holds.append(_counted(kinds["byte"], "byte pieces (<0xNN>)"))
    holds += _pieces(tokenizer, model, kinds["normal"])
    merges = _merges_note(tokenizer, model, library)
    if tokenizer.merges:
        holds.append(_counted(len(tokenizer.merges), "merges"))
    base = ["the special tokens"] + (["the unknown token"] if unk is not None else []) + (
        ["the byte pieces"] if kinds["byte"] else [])
    base_tokens = ", ".join(base[:-1]) + " and " + base[-1] if len(base) > 1 else base[0]
    return KindDescription(f"{library} {model}", holds, "pieces", base_tokens, merges, unk,
                           leaves=_leaves(tokenizer))


def _pieces(tokenizer, model: str, normal: int) -> list[str]:
    """The normal pieces: WordPiece's word starts and ``##`` continuations; pieces that begin a
    word (``▁``) for SentencePiece and Metaspace models."""
    if model == "WordPiece":
        prefix = _continuing_prefix(tokenizer).encode()
        inside = sum(1 for i, token in tokenizer.vocab.items()
                     if token.startswith(prefix) and i not in _leaves(tokenizer))
        return [_counted(normal - inside, "word-start pieces"),
                _counted(inside, f"{prefix.decode()} continuations")]
    starts = sum(1 for token in tokenizer.vocab.values() if token.startswith("▁".encode()))
    if starts:
        return [_counted(normal, "pieces"), _counted(starts, "of them begin a word (▁)")]
    return [_counted(normal, "pieces")]


def _continuing_prefix(tokenizer) -> str:
    try:
        model = json.loads(tokenizer.canonical).get("model") or {}
    except ValueError:
        return "##"
    return model.get("continuing_subword_prefix") or "##"


def _merges_note(tokenizer, model: str, library: str) -> str:
    if model == "WordPiece":
        return ("WordPiece has no merges: it spells each word with the longest pieces of its "
                "vocabulary from the word's start, a piece inside a word written with ##.")
    if model == "Unigram":
        return ("Unigram has no merges: it splits each word into the pieces whose scores add "
                "up highest.")
    if model == "WordLevel":
        return "WordLevel has no merges: each token is a whole word."
    if library == "SentencePiece" and model == "BPE":
        return ("Its merges are read from its pieces and scores (each piece made of two others, "
                "in the order of its score): counts not recorded.")
    return "Its merges were imported with the file: counts not recorded."


def _text(token: bytes | None) -> str | None:
    return None if token is None else token.decode("utf-8", errors="replace")
