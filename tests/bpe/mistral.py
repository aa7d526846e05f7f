"""Real ``tekken.json`` files, as the ``mistral-common`` package ships them (a test dependency),
and that package's own tokenizer of them: the oracle the tekken reader is held to."""

from functools import lru_cache
from pathlib import Path

import pytest


def tekken_files() -> list[Path]:
    """The tekken files in mistral-common's package data (none found fails: it is installed
    with the test extras)."""
    import mistral_common

    found = sorted((Path(mistral_common.__file__).parent / "data").glob("tekken*.json"))
    if not found:
        pytest.fail("mistral-common ships no tekken*.json in its package data: install the "
                    "test extras (pip install -e '.[test]')")
    return found


@lru_cache(maxsize=4)
def mistral_tokenizer(path):
    """mistral-common's own reader of a tekken file (read once per path and test process: a real
    one takes seconds)."""
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return Tekkenizer.from_file(Path(path))
