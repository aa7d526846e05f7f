"""The Celery app: no result backend, late acknowledgement, prefetch 1, tasks registered."""

from registry.celery import app


def test_the_app_acknowledges_late_and_keeps_no_results():
    conf = app.conf
    assert (conf.task_acks_late, conf.task_reject_on_worker_lost) == (True, True)
    assert (conf.worker_prefetch_multiplier, conf.task_ignore_result) == (1, True)
    assert conf.result_backend is None


def test_the_registry_tasks_and_the_reaper_schedule_are_registered():
    app.loader.import_default_modules()
    names = {"execute_training_run", "count_corpus_part", "merge_counted_run", "run_evaluation",
             "reap_runs"}
    assert {f"tokenizers_app.tasks.{name}" for name in names} <= set(app.tasks)
    assert app.conf.beat_schedule["reap-stale-runs"]["task"] == "tokenizers_app.tasks.reap_runs"
