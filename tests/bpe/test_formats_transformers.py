"""The transformers folder: AutoTokenizer.from_pretrained loads it offline with our ids."""

import os

import pytest

from tests.bpe.corpora import SAMPLES
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import load_tokenizer, save_tokenizer, train_bpe
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer

TEXTS = ["The quick brown fox; naïve café.", "def f(x):\n    return x  # code\n\n\n",
         "字节对编码 バイト対 한국어", "emoji 🙂👍🏽👨‍👩‍👧 and   spaces\t\ttabs", ""]


@pytest.fixture(scope="module")
def auto_tokenizer():
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained


@pytest.mark.parametrize("pattern, specials", [("gpt2", ["<|endoftext|>"]), ("gpt4", []),
                                               ("none", ["<|endoftext|>", "<|pad|>"])])
def test_autotokenizer_loads_the_folder_with_our_ids(auto_tokenizer, tmp_path, pattern,
                                                     specials):
    ours = train_bpe(list(SAMPLES.values()), 600, special_tokens=specials,
                     pattern=pattern).tokenizer()
    folder = tmp_path / "tok"
    save_tokenizer(ours, folder, "transformers")
    theirs = auto_tokenizer(str(folder))
    for text in TEXTS + [t.join(["a", "b"]) for t in specials]:
        ids = ours.encode(text, allowed_special="all")
        assert theirs.encode(text, add_special_tokens=False) == ids, text
        assert theirs.decode(ids) == text
    assert loads_tokenizer(dumps_tokenizer(ours, "transformers")).merges == ours.merges


def test_gpt2_in_the_transformers_folder_encodes_as_ours(auto_tokenizer, tmp_path):
    """(Ours equals tiktoken's GPT-2 on the same files: tests/bpe/test_tokenizer.py.)"""
    ours = load_tokenizer(gpt2_fixture_dir())
    save_tokenizer(ours, tmp_path / "gpt2", "transformers")
    theirs = auto_tokenizer(str(tmp_path / "gpt2"))
    text = "".join(TEXTS) * 3
    assert theirs.encode(text, add_special_tokens=False) == ours.encode_ordinary(text)
    assert theirs.eos_token == "<|endoftext|>"
