import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.reference import reference_encode
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import Tokenizer, load_tokenizer, train_bpe
from tokenizers_app.bpe.pretokenize import GPT2_PATTERN

ENDOFTEXT = "<|endoftext|>"


def _gpt2_byte_alphabet() -> dict[str, int]:
    """GPT-2's printable spelling of bytes, written out here as an independent oracle."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    spelling, extra = {}, 0
    for b in range(256):
        if b in printable:
            spelling[chr(b)] = b
        else:
            spelling[chr(256 + extra)] = b
            extra += 1
    return spelling


@pytest.fixture(scope="module")
def gpt2_dir():
    return gpt2_fixture_dir()


@pytest.fixture(scope="module")
def ours(gpt2_dir):
    return load_tokenizer(gpt2_dir)


@pytest.fixture(scope="module")
def tiktoken_gpt2(gpt2_dir):
    tiktoken = pytest.importorskip("tiktoken")
    alphabet = _gpt2_byte_alphabet()
    vocab = json.loads((gpt2_dir / "vocab.json").read_text(encoding="utf-8"))
    ranks = {bytes(alphabet[c] for c in token): i for token, i in vocab.items() if token != ENDOFTEXT}
    return tiktoken.Encoding("gpt2-from-fixture", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={ENDOFTEXT: vocab[ENDOFTEXT]})


@pytest.fixture(scope="module")
def hf_gpt2(gpt2_dir):
    hf = pytest.importorskip("tokenizers")
    model = hf.models.BPE.from_file(str(gpt2_dir / "vocab.json"), str(gpt2_dir / "merges.txt"))
    tok = hf.Tokenizer(model)
    tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = hf.decoders.ByteLevel()
    tok.add_special_tokens([ENDOFTEXT])
    return tok


@pytest.fixture(scope="module")
def big_text():
    text = varied_text()
    assert len(text.encode()) >= 1_000_000
    return text


def _documents(text: str, size: int = 20_000) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def test_gpt2_encodes_exactly_like_tiktoken_over_a_megabyte(ours, tiktoken_gpt2, big_text):
    for document in _documents(big_text):
        assert ours.encode_ordinary(document) == tiktoken_gpt2.encode_ordinary(document)


def test_gpt2_encodes_exactly_like_hugging_face_over_a_megabyte(ours, hf_gpt2, big_text):
    documents = _documents(big_text)
    expected = hf_gpt2.encode_batch(documents, add_special_tokens=False)
    for document, encoding in zip(documents, expected):
        assert ours.encode_ordinary(document) == encoding.ids


def test_a_long_run_of_one_letter_encodes_like_the_peers(ours, tiktoken_gpt2, hf_gpt2):
    text = "a" * 100_000
    assert ours.encode(text) == tiktoken_gpt2.encode(text) == hf_gpt2.encode(text).ids


def test_special_tokens_encode_like_the_peers(ours, tiktoken_gpt2, hf_gpt2):
    text = f"Hello{ENDOFTEXT} world{ENDOFTEXT}{ENDOFTEXT}\n  x"
    ids = ours.encode(text, allowed_special="all")
    assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
    assert ids == hf_gpt2.encode(text, add_special_tokens=False).ids
    assert ids.count(50256) == 3


def test_disallowed_special_text_raises_like_tiktoken(ours):
    with pytest.raises(ValueError, match="not allowed"):
        ours.encode(f"a {ENDOFTEXT} b")
    assert 50256 not in ours.encode_ordinary(f"a {ENDOFTEXT} b")
    assert 50256 not in ours.encode(f"a {ENDOFTEXT} b", disallowed_special=())


def test_encode_iterable_equals_encoding_the_whole_text(ours, big_text):
    text = big_text[:200_000]
    lines = text.splitlines(keepends=True)
    assert list(ours.encode_iterable(lines)) == ours.encode(text, disallowed_special=())


def test_encode_iterable_over_a_file_runs_in_constant_memory(ours, tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("one line of text\nanother line\n" * 200_000, encoding="utf-8")
    code = (
        "import sys, resource; from tokenizers_app.bpe import load_tokenizer;"
        "tok = load_tokenizer(sys.argv[1]); before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss;"
        "n = sum(1 for _ in tok.encode_iterable(open(sys.argv[2], encoding='utf-8')));"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; print(n, after - before)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(gpt2_fixture_dir()), str(path)],
                         check=True, capture_output=True, text=True).stdout.split()
    tokens, grown_kb = int(out[0]), int(out[1])
    assert tokens == 200_000 * len(ours.encode("one line of text\nanother line\n"))
    assert grown_kb < 40_000, f"peak memory grew by {grown_kb} KB while streaming a 6 MB file"


@pytest.fixture(scope="module")
def trained():
    text = ENDOFTEXT.join(SAMPLES.values())
    return train_bpe([text], 256 + 1 + 300, special_tokens=[ENDOFTEXT]).tokenizer()


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_decode_inverts_encode_for_any_text(trained, text):
    assert trained.decode(trained.encode_ordinary(text)) == text
    assert trained.decode(trained.encode(text, allowed_special="all", disallowed_special=())) == text


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_encode_ordinary_equals_the_plain_encoder_for_any_text(trained, text):
    tokens = [trained.vocab[i] for i in trained.encode_ordinary(text)]
    assert tokens == reference_encode(trained.merges, trained.pattern, text)


@settings(max_examples=200, deadline=None)
@given(left=st.text(max_size=40), right=st.text(max_size=40))
def test_special_tokens_are_never_split_or_merged_into(trained, left, right):
    ids = trained.encode(left + ENDOFTEXT + right, allowed_special="all")
    special = trained.special_ids[ENDOFTEXT]
    assert special in ids
    assert trained.decode(ids) == left + ENDOFTEXT + right
    assert ids.count(special) == (left + ENDOFTEXT + right).count(ENDOFTEXT)
    assert all(trained.vocab[i] == ENDOFTEXT.encode() for i in ids if i == special)


@settings(max_examples=100, deadline=None)
@given(left=st.text(max_size=20), right=st.text(max_size=20))
def test_encode_raises_on_special_text_that_is_not_allowed(trained, left, right):
    with pytest.raises(ValueError, match="not allowed"):
        trained.encode(left + ENDOFTEXT + right)


def test_token_spans_cover_the_text_bytes(trained):
    text = "héllo <|endoftext|> 字 🙂"
    spans = trained.token_spans(text)
    assert spans[0][1] == 0 and spans[-1][2] == len(text.encode())
    assert all(a[2] == b[1] for a, b in zip(spans, spans[1:]))
    assert b"".join(trained.token_bytes(i) for i, _s, _e in spans) == text.encode()


def test_decoding_an_unknown_id_is_a_value_error(trained):
    with pytest.raises(ValueError, match="token id 999999"):
        trained.decode([999999])


def test_a_vocab_without_every_byte_is_rejected():
    with pytest.raises(ValueError, match="byte 0xff"):
        Tokenizer({i: bytes([i]) for i in range(255)}, [])


def test_a_merge_whose_parts_are_missing_is_rejected():
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="merge 0"):
        Tokenizer(vocab, [(b"a", b"b")])


def test_encode_batch_in_processes_equals_encoding_one_by_one(ours, big_text):
    texts = [""] + _documents(big_text, 50_000) + [big_text[:600_000] + ENDOFTEXT + "tail", ""]
    assert sum(map(len, texts)) > 1 << 20  # large enough to use the worker processes
    expected = [ours.encode(t, allowed_special="all") for t in texts]
    assert ours.encode_batch(texts, allowed_special="all", workers=2) == expected
    with pytest.raises(ValueError, match="not allowed"):
        ours.encode_batch(texts, workers=2)
