"""Small trained tokenizers and varied texts shared by the format and CLI tests."""

from functools import lru_cache

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import Tokenizer, train_bpe

SPECIALS = ["<|endoftext|>", "<|pad|>", "<|é|>"]
CUSTOM = r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+"
PATTERNS = ["gpt2", "gpt4", "o200k", "none", CUSTOM]
CASES = [(pattern, specials) for pattern in PATTERNS for specials in (False, True)]
CASE_IDS = [f"{'custom' if p == CUSTOM else p}-{'specials' if s else 'plain'}"
            for p, s in CASES]

CODE = '''def count_pairs(ids):
    """Count adjacent pairs."""
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1  # tally
    return counts\n\n\nif __name__ == "__main__":\n\tprint(count_pairs([1, 2, 3, 1, 2]))\n'''

TRAINING_TEXT = "".join(SAMPLES.values()) + CODE * 4


def probe_texts(specials: bool) -> list[str]:
    """Texts to encode: prose, code, CJK, emoji, whitespace runs, special tokens in text."""
    texts = [SAMPLES["english"][:500], CODE, SAMPLES["chinese"][:80], SAMPLES["japanese"][:60],
             SAMPLES["emoji"][:120], SAMPLES["whitespace"][:200], "a" * 300 + " " * 40,
             "Ünïcödé naïve café — «quotes» ½ ∑ 𝔘 \u200b zero\u200dwidth", "", "\n\n\n",
             "unseen words: zymurgy quixotic 12345678 0x7f3a"]
    if specials:
        texts += ["Hello<|endoftext|>world", "<|pad|><|pad|> a<|é|>b <|endoftext|>\n",
                  "<|endoftext|", "x<|endoftext|><|endoftext|>y"]
    return texts


@lru_cache(maxsize=None)
def trained(pattern: str, specials: bool, vocab_size: int = 700) -> Tokenizer:
    """A byte-level tokenizer trained on a few KB of varied text (cached: treat as read-only)."""
    tokens = SPECIALS if specials else []
    return train_bpe([TRAINING_TEXT], vocab_size, tokens, pattern).tokenizer()


def same_tokenizer(a: Tokenizer, b: Tokenizer) -> bool:
    """Same merges, vocab, special tokens and pattern."""
    return (a.merges, a.vocab, a.special_ids, a.pattern) == (b.merges, b.vocab, b.special_ids,
                                                             b.pattern)
