"""Small, varied, deterministic test texts (built from code, not downloaded)."""

import random
import sys
from pathlib import Path

ENGLISH = (
    "The quick brown fox jumps over the lazy dog. It's a dog's life, isn't it? We'll see: "
    "the lower the lowest, the newer the newest, and widest of all.\n"
    "Tokenizers split text into tokens; byte-pair encoding merges the most frequent pair.\n"
) * 8
CHINESE = "我们今天学习字节对编码。这个方法把最常见的相邻符号合并成新的符号，直到词表满了为止。" * 6
JAPANESE = "今日はバイトペア符号化を学びます。ひらがなとカタカナと漢字が混ざった文章です。" * 6
EMOJI = "🙂🙂 👍🏽 family: 👨‍👩‍👧‍👦 flags 🇯🇵🇫🇷 and hearts ❤️❤️❤️ 🎉🎉\n" * 6
WHITESPACE = "  a  b\t\tc \n\n   \r\n  d\u3000e\xa0 f    \n\n\n    g   " * 8

SAMPLES = {"english": ENGLISH, "chinese": CHINESE, "japanese": JAPANESE, "emoji": EMOJI,
           "whitespace": WHITESPACE}


def _random_cjk(rng: random.Random, n: int) -> str:
    ranges = [(0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7A3)]
    out = []
    for i in range(n):
        lo, hi = rng.choice(ranges)
        out.append(chr(rng.randint(lo, hi)))
        if i % rng.randint(8, 40) == 0:
            out.append(rng.choice("、。，！？ \n"))
    return "".join(out)


def _random_emoji(rng: random.Random, n: int) -> str:
    fragments = ["👍", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "❤️", "🙂", "🎉", "🧑🏿‍🚀", " ", "\n", "🏳️‍🌈", "x"]
    return "".join(rng.choice(fragments) for _ in range(n))


def _random_whitespace(rng: random.Random, n: int) -> str:
    fragments = [" ", "  ", "\t", "\n", "\r\n", "\u3000", "\xa0", "word", "'s", "'ll", "123456",
                 "!!", " ?", "\n\n\n", "    ", "é", "ü"]
    return "".join(rng.choice(fragments) for _ in range(n))


def _random_unicode(rng: random.Random, n: int) -> str:
    chars = []
    while len(chars) < n:
        cp = rng.randint(0x20, 0x2FFFF)
        if not 0xD800 <= cp <= 0xDFFF:
            chars.append(chr(cp))
    return "".join(chars)


def _python_source(limit: int) -> str:
    """Python's own standard library source: code, comments and docstring prose."""
    root = Path(sys.modules["random"].__file__).parent
    out, size = [], 0
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append(text)
        size += len(text)
        if size >= limit:
            break
    return "".join(out)


def varied_text(size: int = 1_100_000, seed: int = 1234) -> str:
    """About ``size`` characters mixing prose, code, CJK, emoji, whitespace runs and rare code
    points, plus ``"a" * 100_000``."""
    rng = random.Random(seed)
    parts = [_python_source(size // 2), "a" * 100_000, " " * 5000, "\n" * 300]
    parts += list(SAMPLES.values())
    while sum(map(len, parts)) < size:
        parts.append(rng.choice([_random_cjk, _random_emoji, _random_whitespace,
                                 _random_unicode])(rng, 2000))
    rng.shuffle(parts)
    return "".join(parts)
