"""Where the shared GPT-2 fixture files are, for the tests that need them."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def gpt2_fixture_dir() -> Path:
    """The folder with GPT-2's vocab.json and merges.txt; skips (or fails in CI) when absent."""
    candidates = [os.environ.get("TOKENIZER_FIXTURES"), REPO.parent / "shared" / "fixtures"]
    for base in filter(None, candidates):
        folder = Path(base) / "gpt2" if (Path(base) / "gpt2").is_dir() else Path(base)
        if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
            return folder
    reason = ("GPT-2 fixtures not found: set TOKENIZER_FIXTURES or place them in "
              "../shared/fixtures/gpt2")
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
