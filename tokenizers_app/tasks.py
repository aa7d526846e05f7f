"""Celery tasks. Each takes ids, imports its service inside the body, and calls it: job state
lives in the database, so a task that is delivered twice finds its work done or taken. The tasks
are the worker's interface, as the commands are the shell's: they stand on the services, which
send them by name (``services/queue.py``) and never import this module."""

from celery import shared_task


@shared_task
def execute_training_run(run_id: int) -> None:
    from .services.runs import execute_training_run

    execute_training_run(run_id=run_id)


@shared_task(bind=True)
def count_corpus_part(self, part_id: int) -> None:
    from .services.fanout import count_corpus_part

    count_corpus_part(part_id=part_id, worker=self.request.hostname or "")


@shared_task
def merge_counted_run(run_id: int, attempt: int) -> None:
    from .services.fanout import merge_counted_run

    merge_counted_run(run_id=run_id, attempt=attempt)


@shared_task
def run_evaluation(evaluation_id: int) -> None:
    from .services.evaluations import run_evaluation

    run_evaluation(evaluation_id=evaluation_id)


@shared_task(bind=True)
def evaluate_corpus_part(self, part_id: int) -> None:
    from .services.evaluation_fanout import evaluate_corpus_part

    evaluate_corpus_part(part_id=part_id, worker=self.request.hostname or "")


@shared_task
def merge_evaluation_parts(evaluation_id: int, attempt: int) -> None:
    from .services.evaluation_fanout import merge_evaluation_parts

    merge_evaluation_parts(evaluation_id=evaluation_id, attempt=attempt)


@shared_task
def reap_runs() -> None:
    from .services.evaluations import reap_evaluations
    from .services.runs import reap_runs

    reap_runs()
    reap_evaluations()


@shared_task
def sweep_leftovers() -> None:
    from .services.sweep import sweep_leftovers

    sweep_leftovers()
