"""What a metric means for each kind of tokenizer, in words, for the pages that show it: one
definition per metric (``bpe.metrics``), and these notes where a kind changes its meaning."""

from __future__ import annotations

ENGINE_KINDS = ("hf", "sentencepiece")


def kind_notes(kind: str, pattern: str) -> list[str]:
    """The notes for a version of ``kind`` whose engine's description (as ``hf.describe``
    writes it; ``TokenizerVersion.engine_description``) is ``pattern``:
    ``kind_notes("hf", "WordPiece; normalizer BertNormalizer")`` names the unknown rate's
    ``[UNK]`` (a whole word) and why the lossless rate is below 100 %."""
    if kind == "byte_bpe":
        return ["Byte-fallback rate: multi-byte characters that a token boundary cuts through. "
                "No unknown rate: every byte has a token."]
    if kind not in ENGINE_KINDS:
        return ["Unknown rate: characters that encode to <unk> (outside the alphabet seen in "
                "training). Lossless rate: whitespace runs decode as one space."]
    notes = ["Word coverage counts whitespace-separated words encoded as one token.",
             "Byte-fallback rate (where it has <0xNN> pieces): characters written as byte "
             "pieces instead of a token of their own."]
    if "WordPiece" in pattern:
        notes.append("Unknown rate: a word WordPiece cannot spell is one [UNK], so all its "
                     "characters count as unknown.")
    else:
        notes.append("Unknown rate (where it has an unknown token): characters inside <unk>.")
    if "normalizer" in pattern or "normalization nmt" in pattern:
        rewrite = ("lowercases and strips accents" if "BertNormalizer" in pattern else
                   "rewrites the text (Unicode normalization, whitespace)")
        notes.append(f"Lossless rate below 100 % is expected: its normalizer {rewrite} before "
                     f"encoding, and decoding gives the rewritten text.")
    return notes
