"""An evaluation's words counted across its batches (``word_tally``): the compiled tally against
its plain twin and against ``whitespace_words`` (Unicode White_Space, not ``str.split``'s
``\\x1c``-``\\x1f``), batch by batch: the words' count, the new words in order, and every word
with its count in the order first seen."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tests.bpe.test_pretoken_tally import VARIED
from tests.real_text import django_messages
from tokenizers_app.bpe import compiled
from tokenizers_app.bpe.baselines import whitespace_words
from tokenizers_app.bpe.word_tally import PlainWordTally

needs_compiled = pytest.mark.skipif(
    compiled.WordTally is PlainWordTally, reason="the compiled loops were not built: pure path only")

# every White_Space character, the separators str.split cuts at and White_Space does not, and
# word characters of each string width (Latin-1, the rest of the first plane, beyond it)
SPACES = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"
LETTERS = "ab\x1c\x1d\x1e\x1féÿ東—\u200b😀\U0010ffff"


def random_texts(seed: int, count: int, size: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = SPACES + LETTERS
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(size))) for _ in
            range(count)]


def tallied(tally, texts: list[str]):
    answers = [tally.add(text) for text in texts]
    return answers, list(tally.counter().items()), len(tally)


def expected(texts: list[str]):
    seen: Counter = Counter()
    answers = []
    for text in texts:
        words = whitespace_words(text)
        known = len(seen)
        seen.update(words)
        answers.append((len(words), list(seen)[known:]))
    return answers, list(seen.items()), len(seen)


BATCHES = {
    "varied": [VARIED, VARIED[::-1], VARIED],
    "random": random_texts(5, 40, 400),
    "widths": ["ab é 東", "😀 ab", "ab\U0010ffff ab", "é東 ab é", "ab"],  # one word, each width
    "real": [django_messages("multi")[k:k + 20_000] for k in range(0, 200_000, 20_000)],
    "empty": ["", " ", "\n\n", "\x1c"],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_the_plain_tally_counts_white_space_words(name):
    assert tallied(PlainWordTally(), BATCHES[name]) == expected(BATCHES[name])


@needs_compiled
@pytest.mark.parametrize("name", list(BATCHES))
def test_the_compiled_tally_equals_its_plain_twin(name):
    assert tallied(compiled.WordTally(), BATCHES[name]) == tallied(PlainWordTally(),
                                                                   BATCHES[name])


@needs_compiled
def test_the_compiled_tally_grows_past_many_distinct_words():
    """Some 10^5 distinct words (its table grows several times), each seen again later."""
    words = [f"w{k}" for k in range(100_000)]
    texts = [" ".join(words[k:k + 7_000]) for k in range(0, 100_000, 5_000)]
    fast = tallied(compiled.WordTally(), texts)
    assert fast == tallied(PlainWordTally(), texts)
    assert fast[2] == 100_000 and sum(n for _, n in fast[1]) == sum(a for a, _ in fast[0])


def test_the_plain_twins_white_space_is_unicodes():
    import sys

    import regex

    from tokenizers_app.bpe.word_tally import WHITE_SPACE

    assert set(WHITE_SPACE) == {chr(c) for c in range(sys.maxunicode + 1)
                                if regex.match(r"\p{White_Space}", chr(c))}
