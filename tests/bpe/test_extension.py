"""Extension of byte-level BPE: continued merges keep every parent id (``bpe/extension.py``),
checked merge for merge against ``reference_extend`` and against tiktoken and HF tokenizers."""

import json
from itertools import accumulate

import pytest
import tiktoken
from tokenizers import Tokenizer as HFTokenizer

from tests.bpe.corpora import CHINESE, ENGLISH, JAPANESE
from tests.bpe.reference import reference_extend
from tokenizers_app.bpe import Tokenizer
from tokenizers_app.bpe.compiled import learn_merges
from tokenizers_app.bpe.extension import (
    extend_bpe,
    extend_from_counts,
    parent_alphabet,
    parent_segmentation,
)
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.formats.tiktoken import pat_str
from tokenizers_app.bpe.parameters import check_training_parameters
from tokenizers_app.bpe.training import train_bpe


def _trained(text, vocab_size, specials=("<|endoftext|>",), pattern="gpt2"):
    return train_bpe([text], vocab_size, list(specials), pattern, workers=1).tokenizer()


def sized(vocab_size: int, min_frequency: int = 1):
    """A run's checked parameters, as the extension trainers take them whole."""
    return check_training_parameters(vocab_size=vocab_size, min_frequency=min_frequency)


def _extended(parent, text, vocab_size):
    return extend_bpe(parent, [text], sized(vocab_size), workers=1)


def _assert_parent_kept(parent, child):
    for token_id, token in parent.vocab.items():
        assert child.vocab[token_id] == token
    assert child.special_ids == parent.special_ids
    assert child.merges[:len(parent.merges)] == parent.merges
    new = sorted(set(child.vocab) - set(parent.vocab))
    assert new == list(range(max(parent.vocab) + 1, max(parent.vocab) + 1 + len(new)))


@pytest.mark.parametrize("new_text", [CHINESE + JAPANESE, ENGLISH.upper() + CHINESE])
def test_extension_equals_the_reference_merge_for_merge(new_text):
    parent = _trained(ENGLISH, 400)
    result = _extended(parent, new_text, 520)
    vocab, merges, counts = reference_extend(parent.vocab, parent.merges, parent.special_tokens,
                                             parent.pattern, [new_text], 520)
    assert result.merges == merges
    assert result.merge_counts[len(parent.merges):] == counts
    assert result.vocab == vocab
    _assert_parent_kept(parent, result.tokenizer())


def test_ties_are_broken_as_training_breaks_them():
    parent = _trained("ab ab cd cd", 260, specials=())
    text = "xy xy zw zw qr qr"  # three pairs of equal count: the greatest pair of bytes wins
    result = _extended(parent, text, len(parent.vocab) + 3)
    _vocab, merges, _counts = reference_extend(parent.vocab, parent.merges, [], "gpt2", [text],
                                               len(parent.vocab) + 3)
    assert result.merges[len(parent.merges):] == merges[len(parent.merges):]
    assert result.merges[len(parent.merges)] == (b"z", b"w")


def test_a_merge_whose_result_is_already_a_token_is_never_learned():
    # the parent makes b"abc" as (ab, c) but merges (b, c) first, so "abc" encodes as a, bc
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"bc", 257: b"ab", 258: b"abc"})
    parent = Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")], [], "none")
    assert parent.encode_ordinary("abc") == [97, 256]
    result = extend_from_counts(parent, {b"abc": 5, b"xy": 2}, sized(260))
    assert result.merges[3:] == [(b"x", b"y")]  # (a, bc) is skipped, though it counts 5
    assert result.vocab[259] == b"xy" and list(result.vocab.values()).count(b"abc") == 1
    assert result.tokenizer().encode_ordinary("abc xy") == [97, 256, 32, 259] or \
        result.tokenizer().encode_ordinary("abcxy") == [97, 256, 259]
    _vocab, merges, _ = reference_extend(vocab, parent.merges, [], "none", ["abc"] * 5 + ["xy"] * 2,
                                         260)
    assert merges[3:] == [(b"x", b"y")]


def test_a_parent_with_holes_and_specials_last_keeps_its_ids():
    base = _trained(ENGLISH, 320, specials=())
    vocab = {(i if i < 300 else i + 7): t for i, t in base.vocab.items()}  # a hole at 300..306
    vocab[1000] = b"<|endoftext|>"
    parent = Tokenizer(vocab, base.merges, {"<|endoftext|>": 1000}, "gpt2")
    child = _extended(parent, CHINESE, len(vocab) + 10).tokenizer()
    _assert_parent_kept(parent, child)
    assert min(set(child.vocab) - set(vocab)) == 1001


def test_the_segmentation_is_the_parents_encoding_as_indices_into_its_alphabet():
    """``parent_segmentation`` merges on a renumbered table; it must give what the parent's own
    encoding gives, each id turned into its index (here with a hole and a special token last)."""
    base = _trained(ENGLISH, 340, specials=())
    vocab = {(i if i < 300 else i + 7): t for i, t in base.vocab.items()}
    vocab[1000] = b"<|endoftext|>"
    parent = Tokenizer(vocab, base.merges, {"<|endoftext|>": 1000}, "gpt2")
    counts = {}
    for pretoken in parent.pretokenizer.split(ENGLISH + CHINESE):
        counts[pretoken.encode()] = counts.get(pretoken.encode(), 0) + 1
    _alphabet, index_of = parent_alphabet(parent)
    expected = [(tuple(index_of[i] for i in parent.encode_ordinary(pretoken.decode())), count)
                for pretoken, count in counts.items()]
    words = parent_segmentation(parent, counts, index_of)
    ends = list(accumulate(words.lengths))
    got = [tuple(words.symbols[end - length:end]) for end, length in zip(ends, words.lengths)]
    assert list(zip(got, words.counts)) == expected
    assert learn_merges(words, 40, alphabet=_alphabet, skip_known=True) == learn_merges(
        dict(expected), 40, alphabet=_alphabet, skip_known=True)


def test_text_the_new_merges_do_not_touch_keeps_the_parents_ids():
    parent = _trained(ENGLISH, 420)
    child = _extended(parent, CHINESE, 480).tokenizer()
    assert child.encode_ordinary(ENGLISH) == parent.encode_ordinary(ENGLISH)
    assert len(child.encode_ordinary(CHINESE)) < len(parent.encode_ordinary(CHINESE))


def test_a_vocab_size_not_above_the_parents_is_refused_in_words():
    parent = _trained(ENGLISH, 300)
    with pytest.raises(ValueError, match="must be above the parent's 300 tokens"):
        _extended(parent, CHINESE, 300)


def test_the_extended_tokenizer_loads_in_tiktoken_with_our_ids():
    parent = _trained(ENGLISH, 420)
    child = _extended(parent, CHINESE + JAPANESE, 520).tokenizer()
    files = dumps_tokenizer(child, "tiktoken", "child")
    sidecar = json.loads(files["child.json"])
    ranks = {__import__("base64").b64decode(token): int(rank) for token, rank in
             (line.split() for line in files["child.tiktoken"].decode().splitlines())}
    peer = tiktoken.Encoding("child", pat_str=sidecar["pat_str"], mergeable_ranks=ranks,
                             special_tokens=sidecar["special_tokens"])
    for text in (ENGLISH, CHINESE, JAPANESE, "新しい text <|endoftext|> 我们"):
        assert peer.encode(text, allowed_special="all") == child.encode(text, "all")


def test_the_extended_tokenizer_loads_in_hf_tokenizers_with_our_ids():
    parent = _trained(ENGLISH, 420)
    child = _extended(parent, CHINESE + JAPANESE, 520).tokenizer()
    peer = HFTokenizer.from_str(dumps_tokenizer(child, "hf", "child")["child.json"].decode())
    for text in (ENGLISH, CHINESE, JAPANESE):
        assert peer.encode(text).ids == child.encode_ordinary(text)
        assert peer.encode(text).ids[:5] == child.encode_ordinary(text)[:5]


def test_extension_is_deterministic():
    parent = _trained(ENGLISH, 400)
    first = _extended(parent, CHINESE, 480)
    second = _extended(parent, CHINESE, 480)
    assert (first.vocab, first.merges, first.merge_counts) == \
        (second.vocab, second.merges, second.merge_counts)


@pytest.mark.parametrize("format", ["native", "hf", "gpt2", "tiktoken", "minbpe",
                                    "transformers"])
def test_every_download_of_the_child_reads_back_with_the_parents_merges_first(format):
    from tokenizers_app.bpe.formats import loads_tokenizer

    parent = _trained(ENGLISH, 420)
    child = _extended(parent, CHINESE + JAPANESE, 520).tokenizer()
    files = dumps_tokenizer(child, format, "child")
    back = loads_tokenizer(files, format, pattern=child.pattern) if format == "gpt2" \
        else loads_tokenizer(files, format)
    assert back.merges[:len(parent.merges)] == parent.merges
    assert back.merges == child.merges
    if format == "minbpe":  # minbpe's own layout puts special tokens last, for parent and child
        return
    assert {i: back.vocab[i] for i in parent.vocab} == parent.vocab
    assert back.encode_ordinary(CHINESE + ENGLISH) == child.encode_ordinary(CHINESE + ENGLISH)


def test_the_extended_tokenizer_loads_in_transformers_with_our_ids(tmp_path):
    import os

    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    from transformers import AutoTokenizer

    from tokenizers_app.bpe import save_tokenizer

    parent = _trained(ENGLISH, 420)
    child = _extended(parent, CHINESE + JAPANESE, 520).tokenizer()
    save_tokenizer(child, tmp_path / "child", "transformers")
    theirs = AutoTokenizer.from_pretrained(str(tmp_path / "child"))
    for text in (ENGLISH, CHINESE, JAPANESE + " <|endoftext|> " + ENGLISH[:40]):
        assert theirs.encode(text, add_special_tokens=False) == child.encode(text, "all")


def test_gpt2_itself_extends_on_cjk_keeping_its_50257_ids_and_tiktoken_agrees():
    from tests.fixtures import gpt2_fixture_dir
    from tokenizers_app.bpe import load_tokenizer

    gpt2 = load_tokenizer(gpt2_fixture_dir())  # imported: GPT-2's own byte order of ids
    child = extend_bpe(gpt2, [(CHINESE + JAPANESE) * 3], sized(len(gpt2.vocab) + 60),
                       workers=1).tokenizer()
    _assert_parent_kept(gpt2, child)
    assert min(set(child.vocab) - set(gpt2.vocab)) == 50257
    ranks = {token: token_id for token_id, token in child.vocab.items()
             if token_id not in child.special_ids.values()}
    peer = tiktoken.Encoding("gpt2-child", pat_str=pat_str(child.pattern), mergeable_ranks=ranks,
                             special_tokens=dict(child.special_ids))
    for text in (ENGLISH, CHINESE, JAPANESE):
        assert peer.encode_ordinary(text) == child.encode_ordinary(text)
    assert child.encode_ordinary(ENGLISH) == gpt2.encode_ordinary(ENGLISH)


def test_extension_reports_progress_and_stops_when_asked():
    from tokenizers_app.bpe.training import TrainingCancelled

    parent = _trained(ENGLISH, 300)
    stages = []
    extend_bpe(parent, [CHINESE], sized(330), workers=1,
               progress=lambda stage, done, total: stages.append(stage))
    assert {"count", "merge"} <= set(stages)
    with pytest.raises(TrainingCancelled):
        extend_bpe(parent, [CHINESE], sized(330), workers=1, should_stop=lambda: True)
