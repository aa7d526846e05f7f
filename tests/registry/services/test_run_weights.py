"""Runs on weighted corpora (issue 32, training toward parity): the weights are stored with the
run, shown in its lineage, and multiply each corpus's counts, in one task and fanned out alike."""

import pytest

from tests.registry.helpers import import_text, made_up_words, sample_text
from tokenizers_app.bpe import train_bpe, train_char_bpe
from tokenizers_app.errors import Invalid
from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import execute_training_run, start_training_run

from .test_fanout import fan_out

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status
CHAR = {"algorithm": "char_bpe", "lowercase": True}


@pytest.fixture
def two():
    return (import_text(sample_text(12_000), "en"),
            import_text(made_up_words(9_000, seed=3), "xx"))


def _one_task(run) -> TrainingRun:
    execute_training_run(run_id=run.pk)
    run = TrainingRun.objects.get(pk=run.pk)
    assert run.status == Status.SUCCEEDED, run.error
    return run


def _merges(run):
    return run.versions.get().load_tokenizer().merges


@pytest.mark.parametrize("kind", [{}, CHAR], ids=["byte_bpe", "char_bpe"])
def test_a_weighted_run_counts_a_corpus_as_if_given_so_many_times(two, kind):
    en, xx = two
    vocab = 400 if not kind else 120
    run = _one_task(start_training_run(corpora=["en", {"name": "xx", "weight": 3}],
                                       tokenizer_name="w", vocab_size=vocab, **kind))

    assert run.corpus_weights == {"xx": 3}
    if kind:
        expected = train_char_bpe([en.path, xx.path, xx.path, xx.path], vocab,
                                  lowercase=True).tokenizer()
    else:
        expected = train_bpe([en.path, xx.path, xx.path, xx.path], vocab, workers=1)
    assert _merges(run) == expected.merges
    lineage = run.versions.get().lineage()["training_run"]["corpora"]
    assert [(c["name"], c["weight"]) for c in lineage] == [("en", 1), ("xx", 3)]


@pytest.mark.parametrize("kind", [{}, CHAR], ids=["byte_bpe", "char_bpe"])
def test_weight_one_everywhere_makes_the_version_of_a_plain_list(two, kind):
    plain = _one_task(start_training_run(corpora=["en", "xx"], tokenizer_name="plain",
                                         vocab_size=350, **kind))
    ones = _one_task(start_training_run(
        corpora=[{"name": "en", "weight": 1}, {"name": "xx"}], tokenizer_name="ones",
        vocab_size=350, **kind))

    assert ones.corpus_weights == plain.corpus_weights == {}
    assert ones.versions.get().digest == plain.versions.get().digest


@pytest.mark.parametrize("kind", [{}, CHAR], ids=["byte_bpe", "char_bpe"])
def test_a_fanned_out_weighted_run_equals_one_task(settings, two, kind):
    corpora = [{"name": "en", "weight": 2}, {"name": "xx", "weight": 5}]
    one = _one_task(start_training_run(corpora=corpora, tokenizer_name="one", vocab_size=380,
                                       **kind))
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 3000
    spread = fan_out(start_training_run(corpora=corpora, tokenizer_name="spread",
                                        vocab_size=380, **kind).pk)

    assert spread.status == Status.SUCCEEDED, spread.error
    assert spread.fanout_parts > 4
    assert one.fanout_parts == 0
    assert spread.versions.get().digest == one.versions.get().digest


@pytest.mark.parametrize("corpora, words", [
    ([{"name": "en", "weight": 0}], "corpus 'en': a corpus weight is a whole number from 1 to 100"),
    ([{"name": "en", "weight": 101}], "from 1 to 100, not 101"),
    ([{"name": "en", "weight": 1.5}], "not 1.5"),
    ([{"name": "en", "weight": "2"}], "not '2'"),
    ([{"name": "en", "weight": 2, "share": 1}], "share is not a field of a weighted corpus"),
    ([{"weight": 2}], "corpus 1 of the list is neither a name nor"),
    (["en", {"name": "en", "weight": 2}], "corpus 'en' is given twice"),
])
def test_bad_weights_are_refused_in_words_and_nothing_is_saved(two, corpora, words):
    with pytest.raises(Invalid, match=words):
        start_training_run(corpora=corpora, tokenizer_name="w", vocab_size=300)
    assert not TrainingRun.objects.exists()


def test_a_weighted_run_on_a_sets_languages_is_evaluated_on_the_set():
    import json

    from tokenizers_app.models import Evaluation
    from tokenizers_app.services.parallel import import_parallel_set

    lines = [{"en": f"The {n} red houses stand by the river.",
              "de": f"Die {n} roten Häuser stehen am Fluss."} for n in range(60)]
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    import_parallel_set(data=data, name="pair")
    run = _one_task(start_training_run(corpora=["pair.en", {"name": "pair.de", "weight": 4}],
                                       tokenizer_name="toward-parity", vocab_size=300))

    version = run.versions.get()
    evaluated = Evaluation.objects.filter(version=version).values_list("corpus__name", flat=True)
    assert {"pair.en", "pair.de"} <= set(evaluated)
    assert run.corpus_weights == {"pair.de": 4}
