"""Character-level BPE runs: started with their own parameters (the other algorithm's refused),
trained in one task or fanned out, saved as versions that load back to the trained tokenizer."""

import pytest

from tests.registry.helpers import import_text, sample_text, train
from tests.registry.services.test_fanout import fan_out
from tokenizers_app.bpe import train_char_bpe
from tokenizers_app.bpe.canonical import content_digest
from tokenizers_app.errors import Invalid
from tokenizers_app.models import CountPart, TokenizerVersion, TrainingRun, VocabEntry
from tokenizers_app.services.runs import cancel_training_run, start_training_run
from tokenizers_app.services.versions import import_tokenizer

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


def test_a_char_run_keeps_its_algorithm_and_parameters(corpus):
    run = start_training_run(corpora=["prose"], tokenizer_name="c", vocab_size=300,
                             algorithm="char_bpe", lowercase=True, split="word_punct",
                             min_word_frequency=2, min_frequency=3)
    run = TrainingRun.objects.get(pk=run.pk)
    assert (run.algorithm, run.pattern, run.special_tokens, run.min_frequency) == \
        ("char_bpe", "", ["<unk>"], 3)
    assert run.char_options == {"lowercase": True, "split": "word_punct",
                                "min_word_frequency": 2}


@pytest.mark.parametrize("kwargs, field, message", [
    ({"algorithm": "char_bpe", "pattern": "gpt4"}, "pattern",
     "pattern does not apply to char_bpe"),
    ({"lowercase": True}, "lowercase", "lowercase does not apply to byte_bpe"),
    ({"split": "whitespace"}, "split", "split does not apply to byte_bpe"),
    ({"min_word_frequency": 2}, "min_word_frequency", "min_word_frequency does not apply"),
    ({"algorithm": "char_bpe", "special_tokens": ["<s>"]}, "special_tokens",
     "needs the unknown token '<unk>'"),
    ({"algorithm": "char_bpe", "min_word_frequency": 0}, "min_word_frequency",
     "min word frequency must be an integer from 1"),
    ({"algorithm": "char_bpe", "split": "gpt2"}, "split", "split must be one of whitespace, "
                                                          "word_punct"),
    ({"algorithm": "char_bpe", "lowercase": "yes"}, "lowercase", "lowercase must be true or"),
    ({"algorithm": "wordpiece"}, "algorithm", "algorithm must be one of byte_bpe, char_bpe"),
])
def test_bad_char_parameters_are_refused_before_the_run_is_queued(corpus, kwargs, field,
                                                                   message):
    with pytest.raises(Invalid, match=message) as refused:
        start_training_run(corpora=["prose"], tokenizer_name="c", vocab_size=300, **kwargs)
    assert refused.value.field == field
    assert not TrainingRun.objects.exists()


def test_a_char_run_saves_the_tokenizer_the_core_trains(corpus):
    run = train(corpus, "c", vocab_size=200, algorithm="char_bpe", special_tokens=["<unk>", "<s>"],
                split="word_punct", sweep=[180])

    assert run.status == Status.SUCCEEDED, run.error
    small, full = run.versions.order_by("vocab_size")
    expected = train_char_bpe([corpus.path], 200, ["<unk>", "<s>"], split="word_punct").tokenizer()
    loaded = TokenizerVersion.objects.get(pk=full.pk).load_tokenizer()
    assert (loaded.vocab, loaded.merges, loaded.merge_counts) == \
        (expected.vocab, expected.merges, expected.merge_counts)
    assert (full.algorithm, full.split, full.options) == (
        "char_bpe", "word_punct",
        {"lowercase": False, "unk_token": "<unk>", "end_of_word_suffix": "</w>"})
    assert full.digest == content_digest(expected) and full.vocab_size == 200
    text = "Return the value, of x!"
    assert loaded.encode_ordinary(text) == expected.encode_ordinary(text)
    kinds = dict(VocabEntry.objects.filter(version=full).values_list("token_id", "kind"))
    assert [kinds[0], kinds[1], kinds[2], kinds[199]] == ["special", "special", "symbol", "merge"]
    assert bytes(VocabEntry.objects.get(version=full, token_id=199).token) == \
        expected.vocab[199]
    base = 200 - len(expected.merges)  # the special tokens and the alphabet
    assert small.vocab_size == 180 and small.load_tokenizer().merges == \
        expected.merges[:180 - base]


def test_lowercase_changes_the_digest(corpus):
    plain = train(corpus, "c", vocab_size=150, algorithm="char_bpe").versions.get()
    folded = train(corpus, "c", vocab_size=150, algorithm="char_bpe",
                   lowercase=True).versions.get()
    assert plain.digest != folded.digest
    assert folded.load_tokenizer().encode_ordinary("THE") == \
        folded.load_tokenizer().encode_ordinary("the")


def test_a_fanned_out_char_run_trains_what_one_task_trains(settings):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    text = sample_text(30_000).replace("\n\n", "<unk>")
    corpus = import_text(text, "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="c", vocab_size=400,
                             algorithm="char_bpe", lowercase=True, min_word_frequency=2)

    run = fan_out(run.pk)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.fanout_parts == CountPart.objects.filter(run=run).count() > 5
    expected = train_char_bpe([text], 400, lowercase=True, min_word_frequency=2).tokenizer()
    loaded = run.versions.get().load_tokenizer()
    assert (loaded.merges, loaded.merge_counts) == (expected.merges, expected.merge_counts)


def test_a_word_over_max_pretoken_bytes_fails_the_char_run_in_words(settings, client):
    settings.MAX_PRETOKEN_BYTES = 1000
    run = train(import_text("a few words\n" + "ab" * 600 + "\n", "one-word"), "c",
                vocab_size=300, algorithm="char_bpe")
    assert run.status == Status.FAILED and not TokenizerVersion.objects.exists()
    assert run.error.startswith("the corpus holds a word of 1,200 bytes, over the limit of "
                                "1,000 (MAX_PRETOKEN_BYTES): split 'whitespace' makes")
    page = client.get(f"/runs/{run.pk}/").content.decode()  # the run page says it
    assert "the corpus holds a word of 1,200 bytes, over the limit of 1,000 " \
           "(MAX_PRETOKEN_BYTES)" in page


def test_a_word_over_max_pretoken_bytes_fails_a_fanned_out_char_run_in_words(settings):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    settings.MAX_PRETOKEN_BYTES = 1000
    text = sample_text(10_000) + "\n" + "x" * 1500 + "\n"
    run = start_training_run(corpora=[import_text(text, "prose")], tokenizer_name="c",
                             vocab_size=400, algorithm="char_bpe")
    run = fan_out(run.pk)
    assert run.status == Status.FAILED and not TokenizerVersion.objects.exists()
    assert "a word of 1,500 bytes, over the limit of 1,000 (MAX_PRETOKEN_BYTES)" in run.error


def test_cancelling_a_queued_char_run(corpus):
    run = start_training_run(corpora=["prose"], tokenizer_name="c", vocab_size=300,
                             algorithm="char_bpe")
    assert cancel_training_run(run=run).status == Status.CANCELLED


@pytest.mark.parametrize("format", ["native", "hf", "gpt2", "subword-nmt"])
def test_a_char_version_imports_back_from_each_of_its_downloads(corpus, format):
    from tokenizers_app.services.downloads import render_tokenizer_files

    version = train(corpus, "c", vocab_size=200, algorithm="char_bpe").versions.get()
    files = render_tokenizer_files(version=version, format=format)

    imported = import_tokenizer(files=files, tokenizer_name="c")

    assert imported.pk == version.pk  # the same content: the same version


@pytest.mark.parametrize("format", ["tiktoken", "minbpe", "transformers"])
def test_a_format_that_cannot_hold_char_bpe_names_those_that_can(corpus, format):
    from tokenizers_app.services.downloads import render_tokenizer_files

    version = train(corpus, "c", vocab_size=200, algorithm="char_bpe").versions.get()
    with pytest.raises(ValueError, match=f"the {format} format cannot hold character-level BPE; "
                                         f"download it as one of native, hf, gpt2, subword-nmt"):
        render_tokenizer_files(version=version, format=format)


def test_char_level_gpt2_files_take_no_pattern_and_their_note_says_what_they_hold(corpus):
    from tokenizers_app.services.downloads import render_tokenizer_files
    from tokenizers_app.services.import_notes import pattern_note

    version = train(corpus, "c", vocab_size=200, algorithm="char_bpe").versions.get()
    files = render_tokenizer_files(version=version, format="gpt2")
    with pytest.raises(ValueError, match="character-level BPE .* it takes no pattern"):
        import_tokenizer(files=files, tokenizer_name="c", pattern="gpt4")
    assert pattern_note(version=import_tokenizer(files=files, tokenizer_name="c"),
                        files=files) == ("vocab.json + merges.txt hold no split and no "
                                         "lowercasing: c@1 splits words at whitespace and keeps "
                                         "their case")
