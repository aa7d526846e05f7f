"""Character-level BPE against subword-nmt itself (its own command line): on real prose with single
spaces, our merges are ``learn-bpe``'s line for line, and ``apply-bpe`` with our codes file cuts
text as our encode does. Ties and the end-of-word rule are where implementations differ."""

import pydoc_data.topics
import subprocess
import sys
from pathlib import Path

import pytest

from tokenizers_app.bpe import load_tokenizer, save_tokenizer
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, count_words, spell_words, train_char_bpe
from tokenizers_app.bpe.char_tokenizer import split_regex
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer
from tokenizers_app.bpe.training import Ticker

BENCH_CORPUS = Path("/work/bench-corpora/en_10M.txt")
SLICE_BYTES = 2_000_000
MERGES = 2000


def stdlib_prose() -> str:
    """About 450 KB of English that ships with every Python (the help topics,
    ``pydoc_data.topics``), words separated by single spaces: on every machine, CI included."""
    text = "".join(pydoc_data.topics.topics[key] for key in sorted(pydoc_data.topics.topics))
    return " ".join(text.split())


def prose() -> str:
    """About 2 MB of English with words separated by single spaces: a slice of the bench corpus
    where it exists, else the help topics that ship with every Python."""
    if BENCH_CORPUS.is_file():
        text = BENCH_CORPUS.read_bytes()[:SLICE_BYTES].decode("utf-8", "ignore")
        return " ".join(text.split())
    return stdlib_prose()


def subword_nmt(*args, stdin: str) -> str:
    command = Path(sys.executable).with_name("subword-nmt")  # its console script, beside python
    done = subprocess.run([str(command if command.exists() else "subword-nmt"), *args],
                          input=stdin.encode(), capture_output=True, check=True, timeout=900)
    return done.stdout.decode()


@pytest.fixture(scope="module")
def text():
    return prose()


@pytest.mark.slow
@pytest.mark.parametrize("source", ["stdlib", "bench"])
def test_our_merges_are_learn_bpes_line_for_line(source, text):
    """On the help topics everywhere, and on a 2 MB slice of the bench corpus where it exists
    (elsewhere the same help topics again: this test never skips)."""
    text = stdlib_prose() if source == "stdlib" else text
    theirs = subword_nmt("learn-bpe", "-s", str(MERGES), "--min-frequency", "2",
                         stdin=text).splitlines()
    counts = count_words([text], split_regex("whitespace"), False, ["<unk>"], Ticker(None, None))
    alphabet, _ = spell_words(counts)
    ours = train_char_bpe([text], 1 + len(alphabet) + MERGES, min_frequency=2).tokenizer()

    codes = dumps_tokenizer(ours, "subword-nmt")["codes.txt"].decode().splitlines()
    assert len(codes) == len(theirs) == MERGES + 1  # the header, then every merge asked for
    first_difference = next((i for i, (a, b) in enumerate(zip(codes, theirs)) if a != b), None)
    assert first_difference is None, (first_difference, codes[first_difference],
                                      theirs[first_difference])


def segmented(tokenizer: CharBPETokenizer, line: str) -> str:
    """A line as ``apply-bpe`` writes it, from our encode: each word's tokens (an ``<unk>`` is
    the character it stands for), ``@@ `` between the tokens of a word."""
    words = []
    for word in line.split(" "):
        if word:
            data = word.encode()
            pieces = [data[start:end].decode() for _, start, end in
                      tokenizer.token_spans(word, ())]
            words.append("@@ ".join(pieces))
    return " ".join(words)


def test_apply_bpe_with_our_codes_cuts_text_as_our_encode(text, tmp_path):
    ours = train_char_bpe([text[:300_000]], 1500, min_frequency=2).tokenizer()
    [codes, _vocab] = save_tokenizer(ours, tmp_path / "snmt", "subword-nmt")
    probe = text[300_000:360_000].split()
    lines = [" ".join(probe[i:i + 40]) for i in range(0, len(probe), 40)]
    lines += ["naïve café — “quoted” 東京 🍕🍕 ok", "a aa aaa aaaa ab abab x"]
    assert any(ours.unk_id in ours.encode_ordinary(line) for line in lines)  # unseen characters

    theirs = subword_nmt("apply-bpe", "-c", str(codes), stdin="\n".join(lines) + "\n")

    assert theirs.splitlines() == [segmented(ours, line) for line in lines]


def test_the_codes_file_reads_back_with_or_without_its_vocab(tmp_path):
    ours = train_char_bpe(["low lower lowest newer newest wider low low"], 30).tokenizer()
    files = dumps_tokenizer(ours, "subword-nmt")
    assert files["codes.txt"].startswith(b"#version: 0.2\n")
    back = loads_tokenizer(files)
    assert (back.vocab, back.merges, back.special_ids) == (ours.vocab, ours.merges,
                                                            ours.special_ids)
    alone = loads_tokenizer({"bpe.codes": files["codes.txt"]})
    for text in ["lowest newer wider", "slower lows"]:
        assert [alone.vocab[i] for i in alone.encode_ordinary(text)] == \
            [ours.vocab[i] for i in ours.encode_ordinary(text)]
    save_tokenizer(ours, tmp_path / "folder", "subword-nmt")
    assert load_tokenizer(tmp_path / "folder").merges == ours.merges


@pytest.mark.parametrize("codes, message", [
    (b"#version: 0.2\n\xc4\xa0 t\n", "no merge with '</w>'"),
    (b"#version: 0.2\nl</w> o</w>\n", "'</w>' may only end a merge's right part"),
    (b"#version: 0.2\nl o</w>\nl o</w>x\n", "'</w>' may only end a merge's right part"),
])
def test_codes_that_are_not_char_level_bpe_are_refused(codes, message):
    with pytest.raises(ValueError, match=message):
        loads_tokenizer({"codes.txt": codes})


def test_byte_level_bpe_cannot_be_written_as_codes():
    from tokenizers_app.bpe import train_bpe

    tokenizer = train_bpe(["hello hello"], 258).tokenizer()
    with pytest.raises(ValueError, match="the subword-nmt format cannot hold byte-level BPE; "
                                         "download it as one of native, hf, gpt2, tiktoken"):
        dumps_tokenizer(tokenizer, "subword-nmt")
