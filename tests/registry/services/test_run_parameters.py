"""A run's parameters are one object (``bpe.parameters.TrainingParameters``): checked once when
the run starts, stored whole in ``TrainingRun.parameters``, passed whole to the trainer, and
shown in one shape by the run's API answer, its versions' lineage and "Run again with
changes"."""

import pytest

from tests.registry.helpers import train
from tokenizers_app.bpe import parameters as parameters_module
from tokenizers_app.bpe.parameters import TrainingParameters
from tokenizers_app.engines.registry import DEFAULT_KIND, kind_named
from tokenizers_app.services import runs
from tokenizers_app.shapes import RunOut
from tokenizers_app.views.runs import rerun_params

pytestmark = pytest.mark.django_db


@pytest.fixture
def checks(monkeypatch):
    """Every call of ``check_training_parameters``, wherever it is imported from."""
    calls = []
    real = parameters_module.check_training_parameters

    def counted(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    for module in [parameters_module, runs]:
        monkeypatch.setattr(module, "check_training_parameters", counted)
    return calls


@pytest.mark.parametrize("kwargs", [
    {"pattern": "gpt4", "special_tokens": ["<s>"], "min_frequency": 2, "sweep": [300]},
    {"algorithm": "char_bpe", "lowercase": True, "split": "word_punct",
     "min_word_frequency": 2},
])
def test_the_parameters_are_checked_once_stored_whole_and_passed_whole(corpus, monkeypatch,
                                                                       checks, kwargs):
    given = []
    kind = kind_named(kwargs.get("algorithm", DEFAULT_KIND))  # the run's kind trains it
    real_train = type(kind).train

    def trainer(self, source, params, **io):
        given.append(params)
        return real_train(self, source, params, **io)

    monkeypatch.setattr(type(kind), "train", trainer)
    run = train(corpus, vocab_size=400, **kwargs)

    assert run.status == "succeeded", run.error
    assert len(checks) == 1  # at the start; neither the worker nor the trainer checks again
    assert given == [run.params] and isinstance(run.params, TrainingParameters)
    assert run.parameters == run.params.as_json()
    assert run.params.pattern == ("" if kwargs.get("algorithm") == "char_bpe" else "gpt4")


def test_the_run_its_lineage_and_its_rerun_show_the_parameters_alike(corpus):
    run = train(corpus, vocab_size=400, algorithm="char_bpe", lowercase=True,
                split="word_punct", min_word_frequency=2)
    shown = run.params.public()

    answer = RunOut.of(run).model_dump()
    lineage = run.versions.get().lineage()["training_run"]
    again = rerun_params(run, list(run.corpora.all()))

    assert {key: answer[key] for key in shown} == shown
    assert {key: lineage[key] for key in shown} == shown
    assert (again["split"], again["lowercase"], again["min_word_frequency"],
            again["vocab_size"]) == ("word_punct", "on", 2, 400)
    assert shown["pattern"] == "" and shown["split"] == "word_punct"


def test_outcomes_have_columns_of_their_own(corpus):
    run = train(corpus, vocab_size=2000, min_frequency=50)

    assert run.core_path and run.stop_reason.startswith("no pair left with count >= 50")
    assert not run.unsent and "stop_reason" not in run.parameters
