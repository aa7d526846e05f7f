"""A native library's panic during an evaluation, on a real Celery worker process: the panic
(``PanicException``, which does not pickle) is recorded in words on the evaluation in the
worker's pool process, the evaluation ends failed (never left running), and the worker goes on
to the next task."""

import pytest

from tests.registry.services.test_evaluations import panicking_version
from tokenizers_app.models import Evaluation
from tokenizers_app.services.corpora import set_evaluation
from tokenizers_app.services.runs import start_training_run

from .helpers import import_text, sample_text, wait_for_run, wait_until

pytestmark = pytest.mark.slow


def test_a_library_panic_fails_the_evaluation_in_words_and_the_worker_goes_on(worker):
    held_out = import_text(sample_text(3_000) + "x" * 40 + "\n", "held-out")
    set_evaluation(corpus=held_out, is_evaluation=True)
    panics = Evaluation.objects.get(version=panicking_version(), corpus=held_out)

    wait_until(lambda: Evaluation.objects.get(pk=panics.pk).status == "failed", 60,
               f"the evaluation to fail\n{worker.log()}")

    panics.refresh_from_db()
    assert panics.error.startswith("the tokenizer's library failed")  # in its sandbox's words:
    assert "PanicException" in panics.error  # the child caught the panic
    assert "pickle" not in worker.log() and worker.process.poll() is None
    # the worker trains the next run itself (executing it here too raced with the worker: the
    # loser found the run taken and the version not yet written)
    run = start_training_run(corpora=[import_text(sample_text(20_000), "prose")],
                             tokenizer_name="fine", vocab_size=400)
    fine = wait_for_run(run, worker=worker).versions.get()
    wait_until(lambda: Evaluation.objects.get(version=fine, corpus=held_out).status == "succeeded",
               60, f"the next evaluation\n{worker.log()}")
