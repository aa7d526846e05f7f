"""Character-level BPE: training against a plain reference trainer, encoding against Hugging
Face ``tokenizers``, and the tokenizer's contract."""


import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers

from tests.bpe.reference import reference_train_char
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, train_char_bpe
from tokenizers_app.bpe.training import TrainingCancelled, train_bpe
from tokenizers_app.bpe.training_loop import learn_merges

ENGLISH = ("The quick brown fox jumps over the lazy dog. The dog sleeps; the fox doesn't! "
           "low lower lowest newer newest wider widest, new news -- the end?\n") * 3
CHINESE = "我们今天去北京。北京的天气很好，我们很高兴。今天 我们 去 上海 吗？ 上海 很 大 。"
JAPANESE = "東京は日本の首都です。 私は 東京 に 住んで います 。 カタカナ と ひらがな 、 漢字 。"
EMOJI = "I ❤️ 🍕 🍕🍕 👍🏽 👨‍👩‍👧 🍕 ❤️ ok 👍 🍕🍕 👍🏽"
WHITESPACE = "a  b\t\tc\n\n\nd   e \u3000 f\u00a0g  \r\n  a b c\n\nab  ab\tabc "
CORPORA = {"english": ENGLISH, "chinese": CHINESE, "japanese": JAPANESE, "emoji": EMOJI,
           "whitespace": WHITESPACE}


def hf_tokenizer(result, split="whitespace", lowercase=False):
    vocab = {text: token_id for token_id, text in result.vocab.items()}
    hf = HFTokenizer(models.BPE(vocab=vocab, merges=result.merges, unk_token="<unk>",
                                end_of_word_suffix="</w>"))
    hf.pre_tokenizer = (pre_tokenizers.WhitespaceSplit() if split == "whitespace"
                        else pre_tokenizers.Whitespace())
    if lowercase:
        hf.normalizer = normalizers.Lowercase()
    return hf


@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_training_equals_the_reference_trainer(name, split):
    result = train_char_bpe([CORPORA[name]], vocab_size=200, split=split)
    alphabet, merges, merge_counts = reference_train_char(CORPORA[name], 200, split=split)
    assert result.merges == merges
    assert result.merge_counts == merge_counts
    assert list(result.vocab.values()) == ["<unk>", *alphabet, *(a + b for a, b in merges)]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="aabbc \n", max_size=80), st.integers(min_value=1, max_value=20))
def test_training_equals_the_reference_trainer_on_random_text(text, vocab_size):
    if not text.split():
        return
    result = train_char_bpe([text], vocab_size)
    alphabet, merges, merge_counts = reference_train_char(text, vocab_size)
    assert (result.merges, result.merge_counts) == (merges, merge_counts)


def test_the_shared_merge_loop_takes_words_as_indices_into_an_alphabet():
    merges, counts = learn_merges({(0, 0, 1): 2}, 5, alphabet=[b"a", b"a</w>"])
    assert merges == [(b"a", b"a</w>"), (b"a", b"aa</w>")] and counts == [2, 2]  # b"a</w>" > b"a"
    merges, _ = learn_merges({(1, 0): 1, (0, 1): 1}, 1, alphabet=["é".encode(), b"z"])
    assert merges == [("é".encode(), b"z")]  # compared as UTF-8 bytes: 0xc3 > "z"
    with pytest.raises(ValueError, match="symbol 2"):
        learn_merges({(0, 2): 1}, 1, alphabet=[b"a", b"b"])


def test_ids_are_special_tokens_then_alphabet_by_utf8_bytes_then_merges():
    result = train_char_bpe(["ba é ab"], vocab_size=9, special_tokens=["<s>", "<unk>"])
    # both pairs occur once: ("b", "a</w>") is the greater pair, so it is merged first
    assert result.vocab == {0: "<s>", 1: "<unk>", 2: "a", 3: "a</w>", 4: "b", 5: "b</w>",
                            6: "é</w>", 7: "ba</w>", 8: "ab</w>"}
    assert result.merges == [("b", "a</w>"), ("a", "b</w>")] and result.merge_counts == [1, 1]


def test_lowercase_folds_training_and_encoding():
    result = train_char_bpe(["Low LOW low lOw"], vocab_size=20, lowercase=True)
    assert all(text == text.lower() for text in result.vocab.values())
    tokenizer = result.tokenizer()
    assert tokenizer.encode_ordinary("LOW") == tokenizer.encode_ordinary("low")
    assert [tokenizer.symbols[i] for i in tokenizer.encode_ordinary("LOW")] == ["low</w>"]


def test_words_rarer_than_min_word_frequency_are_dropped_before_training():
    result = train_char_bpe(["aa aa bb"], vocab_size=50, min_word_frequency=2)
    assert list(result.vocab.values()) == ["<unk>", "a", "a</w>", "aa</w>"]
    tokenizer = result.tokenizer()
    assert tokenizer.encode_ordinary("bb") == [0, 0]
    assert tokenizer.unknown_count("bb aa") == 2


def test_min_frequency_stops_the_merges():
    result = train_char_bpe(["ab ab ab cd"], vocab_size=50, min_frequency=2)
    assert result.merges == [("a", "b</w>")] and result.merge_counts == [3]


def test_unseen_characters_and_unseen_word_ends_encode_to_unk_as_in_hugging_face():
    result = train_char_bpe(["wa wa"], vocab_size=3)  # no merges: w, a</w>
    tokenizer = result.tokenizer()
    ids = tokenizer.encode_ordinary("wa aw xa")
    assert [tokenizer.symbols[i] for i in ids] == ["w", "a</w>", "<unk>", "<unk>", "<unk>", "a</w>"]
    assert tokenizer.unknown_count("wa aw xa") == 3
    assert hf_tokenizer(result).encode("wa aw xa", add_special_tokens=False).ids == ids


def test_a_word_over_max_word_bytes_is_refused_in_words_as_byte_level_pre_tokens_are():
    text = "short words " + "é" * 600 + " and more\n"  # one word of 1,200 bytes, 600 characters
    with pytest.raises(ValueError, match=r"^the corpus holds a word of 1,200 bytes, over the "
                                         r"limit of 1,000 \(MAX_PRETOKEN_BYTES\): split "
                                         r"'whitespace' makes every run of text without a space "
                                         r"one word; break the text$"):
        train_char_bpe([text], 300, max_word_bytes=1000)
    with pytest.raises(ValueError, match="split 'word_punct' makes every run of letters"):
        train_char_bpe([text], 300, split="word_punct", max_word_bytes=1000)
    assert train_char_bpe([text], 300, max_word_bytes=1200).merges  # at the limit: trained
    twice = "short words " * 2 + "é" * 600  # the long word is rare: dropped, never merged
    assert train_char_bpe([twice], 300, min_word_frequency=2, max_word_bytes=10).merges


def test_vocab_size_below_the_alphabet_keeps_the_whole_alphabet_and_learns_no_merge():
    result = train_char_bpe(["abc abc"], vocab_size=2)
    assert list(result.vocab.values()) == ["<unk>", "a", "b", "c</w>"]
    assert result.merges == [] and result.merge_counts == []


@pytest.mark.parametrize("kwargs, message", [
    ({"source": [""]}, "empty"),
    ({"source": [" \n\t "]}, "empty"),
    ({"source": ["a"], "special_tokens": ["<s>"]}, "'<unk>'"),
    ({"source": ["a"], "special_tokens": ["<unk>", "<unk>"]}, "twice"),
    ({"source": ["a"], "special_tokens": ["<unk>", ""]}, "non-empty"),
    ({"source": ["a"], "split": "gpt2"}, "'gpt2'"),
    ({"source": ["a"], "vocab_size": 0}, "vocab size 0 is out of bounds"),
    ({"source": ["a"], "vocab_size": True}, "vocab size True is out of bounds"),
    ({"source": ["a"], "min_frequency": 0}, "min frequency must be an integer >= 1"),
    ({"source": ["a a b"], "min_word_frequency": 3}, "min_word_frequency=3"),
    ({"source": ["a"], "end_of_word_suffix": ""}, "end_of_word_suffix"),
    ({"source": [b"a"]}, "bytes"),
])
def test_bad_input_raises_value_error_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=regex.escape(message)):
        train_char_bpe(**{"vocab_size": 10, **kwargs})


def test_special_tokens_in_the_corpus_are_cut_out_and_dropped():
    result = train_char_bpe(["ab<s>ab <unk>"], vocab_size=50, special_tokens=["<unk>", "<s>"])
    assert set(result.vocab.values()) == {"<unk>", "<s>", "a", "b</w>", "ab</w>"}


def test_a_file_trains_like_its_text_and_bad_utf8_names_the_offset(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(ENGLISH, encoding="utf-8")
    assert train_char_bpe(path, 120).merges == train_char_bpe([ENGLISH], 120).merges
    path.write_bytes(b"ok ok \xff")
    with pytest.raises(ValueError, match="byte offset 6"):
        train_char_bpe(path, 120)


def test_progress_reports_both_stages_and_should_stop_cancels():
    stages = []
    train_char_bpe([ENGLISH], 100, progress=lambda stage, done, total: stages.append(stage))
    assert stages[0] == "count" and stages[-1] == "merge"
    with pytest.raises(TrainingCancelled):
        train_char_bpe([ENGLISH], 100, should_stop=lambda: True)


@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_ids_equal_hugging_face_bpe_with_end_of_word_suffix(name, split):
    result = train_char_bpe([CORPORA[name]], vocab_size=150, split=split)
    hf = hf_tokenizer(result, split)
    for text in [CORPORA[name], ENGLISH + CHINESE + JAPANESE + EMOJI + WHITESPACE]:
        ours = result.tokenizer().encode_ordinary(text)
        assert ours == hf.encode(text, add_special_tokens=False).ids
    assert 0 in ours  # the mixed text holds unknown characters: both map them to <unk>


def test_lowercased_ids_equal_hugging_face_with_a_lowercase_normalizer():
    result = train_char_bpe([ENGLISH], vocab_size=150, lowercase=True)
    text = ENGLISH.upper() + " Ünïcödé ΣΊΣΥΦΟΣ"
    hf_ids = hf_tokenizer(result, lowercase=True).encode(text, add_special_tokens=False).ids
    assert result.tokenizer().encode_ordinary(text) == hf_ids


def test_decode_turns_suffixes_into_single_spaces():
    tokenizer = train_char_bpe([ENGLISH], vocab_size=150).tokenizer()
    text = "the  lazy\n\tdog  "
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == "the lazy dog"
    assert tokenizer.decode_bytes(tokenizer.encode_ordinary(text)) == b"the lazy dog"
    assert tokenizer.decode([]) == ""
    hf = hf_tokenizer(train_char_bpe([ENGLISH], vocab_size=150))
    hf.decoder = decoders.BPEDecoder(suffix="</w>")
    assert hf.decode(tokenizer.encode_ordinary(text)) == "the lazy dog"


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="abcdéf漢🍕 \t\n", max_size=60))
def test_decode_of_encode_is_the_words_joined_by_single_spaces(text):
    corpus = " ".join(char * 2 for char in "abcdéf漢🍕") + " abc abd éf 漢🍕 ab 🍕a"
    tokenizer = train_char_bpe([corpus], 60).tokenizer()  # every character ends a word or not
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == " ".join(text.split())


def test_encode_follows_allowed_special_as_tiktoken_does():
    result = train_char_bpe(["hi hi"], vocab_size=20, special_tokens=["<unk>", "<s>"])
    tokenizer = result.tokenizer()
    with pytest.raises(ValueError, match="'<s>'"):
        tokenizer.encode("hi<s>")
    hi = tokenizer.encode_ordinary("hi")
    assert tokenizer.encode("hi<s>", allowed_special={"<s>"}) == [*hi, 1]
    assert tokenizer.encode("hi<s>", disallowed_special=()) == tokenizer.encode_ordinary("hi<s>")
    assert tokenizer.encode_ordinary("<s>") == [0, 0, 0]  # "<", "s", ">" were never seen


def test_a_disallowed_special_token_raises_as_in_byte_level_bpe():
    char_level = train_char_bpe(["hi <s>"], 20, special_tokens=["<unk>", "<s>"]).tokenizer()
    byte_level = train_bpe(["hi <s>"], 260, special_tokens=["<s>"]).tokenizer()
    messages = []
    for tokenizer in (char_level, byte_level):
        with pytest.raises(ValueError) as error:
            tokenizer.encode("hi <s>", allowed_special=set())
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "'<s>'" in messages[0]


def test_token_spans_cover_the_characters_each_token_stands_for():
    tokenizer = train_char_bpe([ENGLISH + EMOJI], vocab_size=150).tokenizer()
    text = "the  quick 🍕x <unk> lazy\n"
    data = text.encode()
    spans = tokenizer.token_spans(text, allowed_special=())
    assert [token_id for token_id, _, _ in spans] == tokenizer.encode_ordinary(text)
    for token_id, start, end in spans:
        if token_id == 0:
            assert len(data[start:end].decode()) == 1
        else:
            assert data[start:end].decode() == tokenizer.symbols[token_id].removesuffix("</w>")
    assert (0, 17, 22) in tokenizer.token_spans(text)  # "<unk>" as the special token


def test_a_token_inside_a_word_that_ends_in_the_suffix_spans_all_its_characters():
    """A word that spells the suffix (``ab</w>cd``) can take a token ending in ``</w>`` before
    its last one: that token stands for all its characters, so the spans tile the word and
    each spells its token (the last without the suffix)."""
    words = "ab</w>cd x</w>y ab</w> ab</w>cd " * 20
    tokenizer = train_char_bpe([words], vocab_size=18).tokenizer()
    text = "ab</w>cd x</w>y\n"
    data = text.encode()
    spans = tokenizer.token_spans(text, allowed_special=())
    inner = [tokenizer.symbols[i] for i, _, _ in spans][:-1]
    assert any(symbol.endswith("</w>") for symbol in inner), inner  # the case in question
    for start, end in [(0, 8), (9, 15)]:
        mine = [(i, s, e) for i, s, e in spans if start <= s < end]
        assert [s for _, s, _ in mine] == [start] + [e for _, _, e in mine[:-1]]
        assert mine[-1][2] == end
        assert [data[s:e].decode() for _, s, e in mine] == \
            [tokenizer.symbols[i] for i, _, _ in mine[:-1]] + \
            [tokenizer.symbols[mine[-1][0]].removesuffix("</w>")]


def test_token_spans_of_a_lowercased_word_end_at_the_word_end():
    tokenizer = train_char_bpe(["i̇i i"], vocab_size=10, lowercase=True).tokenizer()
    spans = tokenizer.token_spans("İİ")  # each "İ" lowercases to two characters
    assert spans[-1][2] == len("İİ".encode()) and spans[0][1] == 0


def test_the_tokenizer_rejects_a_vocab_without_its_special_tokens_or_merge_parts():
    with pytest.raises(ValueError, match="'<unk>'"):
        CharBPETokenizer({0: "a</w>"}, [], ["<unk>"])
    with pytest.raises(ValueError, match="'ab</w>'"):
        CharBPETokenizer({0: "<unk>", 1: "a", 2: "b</w>"}, [("a", "b</w>")], ["<unk>"])
    with pytest.raises(ValueError, match="'<unk>'"):
        CharBPETokenizer({0: "<unk>", 1: "<s>"}, [], ["<s>"])


def test_a_long_word_encodes_and_decodes():
    tokenizer = train_char_bpe(["a aa aaaa aaaaaaaa"], vocab_size=30).tokenizer()
    text = "a" * 100_000
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == text


def test_the_interface_the_formats_and_metrics_use():
    tokenizer = train_char_bpe([ENGLISH], vocab_size=80, split="word_punct").tokenizer()
    assert tokenizer.algorithm == "char_bpe" and tokenizer.pattern == "word_punct"
    assert tokenizer.vocab_size == 80 and tokenizer.special_ids == {"<unk>": 0}
    assert len(tokenizer.merge_counts) == len(tokenizer.merges)
    assert tokenizer.split_words("doesn't!") == ["doesn", "'", "t", "!"]
    last = tokenizer.vocab_size - 1
    assert tokenizer.token_bytes(last) == b"".join(tokenizer.merges[-1])
    with pytest.raises(ValueError, match="80"):
        tokenizer.token_bytes(80)


def test_a_large_file_counted_in_several_processes_gives_the_counts_of_one(tmp_path,
                                                                            monkeypatch):
    from tokenizers_app.bpe import counting
    from tokenizers_app.bpe.char_bpe import count_words, split_regex
    from tokenizers_app.bpe.training import Ticker

    monkeypatch.setattr(counting, "RANGE_BYTES", 2_000)  # the ranges words are counted in too
    monkeypatch.setattr(counting, "MIN_RANGE_BYTES", 1_000)
    text = (ENGLISH + CHINESE + "<unk>" + EMOJI + "\n" + WHITESPACE + "\n") * 40
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    for split in ("whitespace", "word_punct"):
        one = count_words([text], split_regex(split), True, ["<unk>"], Ticker(None, None), 1)
        ranges = []
        several = count_words([path], split_regex(split), True, ["<unk>"],
                              Ticker(lambda stage, done, total: ranges.append(done), None, 0), 2)
        assert several == one and "<unk>" not in several
        assert len(set(ranges)) > 5  # progress after each of many ranges
