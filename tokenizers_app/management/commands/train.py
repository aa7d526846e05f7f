"""``manage.py train --corpus NAME[:WEIGHT] --tokenizer NAME --vocab-size N [--wait]
[--user NAME]``;
another kind (``--algorithm``; character-level BPE: ``[--lowercase] [--split word_punct]
[--min-word-frequency N]``); an extension run: ``--extends NAME@REF --corpus NAME --vocab-size N``
(the parent's tokenizer, pattern, split and special tokens are kept)."""

import time

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.engines.registry import DEFAULT_KIND, trained_kind_choices
from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.models import TrainingRun
from tokenizers_app.services.queue import QueueUnavailable
from tokenizers_app.services.extensions import start_extension_run
from tokenizers_app.services.runs import cancel_training_run, start_training_run

WAIT_HINT_SECONDS = 10
PRINT_SECONDS = 5
KEPT_FROM_PARENT = {"special_tokens": "--special-token", "pattern": "--pattern",
                    "lowercase": "--lowercase", "split": "--split",
                    "min_word_frequency": "--min-word-frequency"}


def corpus_argument(value: str):
    """``de`` -> ``"de"``; ``de:2`` -> ``{"name": "de", "weight": 2}`` (a weight that is not a
    whole number is refused in words; the service checks its bounds)."""
    name, colon, weight = value.rpartition(":")
    if not colon:
        return value
    try:
        return {"name": name, "weight": int(weight)}
    except ValueError:
        raise CommandError(f"--corpus {value}: the weight after ':' is a whole number from 1 to "
                           f"100, not {weight!r}") from None


class Command(BaseCommand):
    help = ("Queue a training run for the workers (`celery -A registry worker`). With --wait, "
            "follow its progress until it ends; Ctrl-C then cancels it. With --user, only into "
            "a new tokenizer or one the user owns (staff: any).")

    def add_arguments(self, parser):
        parser.add_argument("--corpus", action="append", required=True,
                            help="corpus name, or NAME:WEIGHT to multiply its counts by a whole "
                                 "number from 1 to 100 (repeat to train on several)")
        parser.add_argument("--tokenizer", default=None,
                            help="the tokenizer to add a version to (required unless --extends)")
        parser.add_argument("--extends", default=None, metavar="NAME@REF",
                            help="extend this version: continue its merges on the corpora, "
                                 "keeping every id; a new version of the same tokenizer")
        parser.add_argument("--vocab-size", type=int, required=True,
                            help="all tokens: special tokens + 256 bytes (byte-level) or the "
                                 "alphabet (character-level) + merges")
        parser.add_argument("--algorithm", default=DEFAULT_KIND,
                            choices=[name for name, _ in trained_kind_choices()],
                            help="; ".join(f"{name}: {label}" for name, label
                                           in trained_kind_choices())
                            + f" (default {DEFAULT_KIND})")
        parser.add_argument("--special-token", action="append", default=None,
                            dest="special_tokens",
                            help="a special token, e.g. '<|endoftext|>' (repeat for several; "
                                 "character-level: default and required '<unk>')")
        parser.add_argument("--pattern", default=None,
                            help="byte-level: gpt2 (default), gpt4, none, or a custom regex")
        parser.add_argument("--lowercase", action="store_true", default=None,
                            help="character-level: lowercase words before training and "
                                 "encoding")
        parser.add_argument("--split", default=None,
                            help="character-level: whitespace (default) or word_punct")
        parser.add_argument("--min-word-frequency", type=int, default=None,
                            help="character-level: drop words rarer than this (default 1)")
        parser.add_argument("--min-frequency", type=int, default=1)
        parser.add_argument("--sweep", type=int, action="append", default=[],
                            help="also register this smaller vocab size from the same run (repeat)")
        parser.add_argument("--wait", action="store_true", help="wait for the run, show progress")
        add_user_argument(parser)

    def handle(self, *args, **options):
        self.user = acting_user(options["user"])
        with refusals_as_command_errors():
            try:
                run = self.start(options)
            except QueueUnavailable as unsent:  # saved: it is sent when the queue is back
                run = unsent.record
                self.stderr.write(f"warning: {unsent}")
            else:
                extends = f", extends {run.extends.label}" if run.extends_id else ""
                self.stdout.write(f"queued run {run.pk}: {run.tokenizer.name}, {run.algorithm}, "
                                  f"vocab size {run.vocab_size}{extends}")
        if options["wait"]:
            self.follow(run)

    def start(self, options) -> TrainingRun:
        if options["extends"]:
            given = [flag for name, flag in KEPT_FROM_PARENT.items() if options[name] is not None]
            if given or options["algorithm"] != DEFAULT_KIND:
                raise CommandError(f"{(given or ['--algorithm'])[0]} is kept from the parent "
                                   f"{options['extends']}: an extension run takes --corpus, "
                                   f"--vocab-size, --min-frequency and --sweep")
            return start_extension_run(
                extends=options["extends"], corpora=[corpus_argument(c) for c in options["corpus"]],
                vocab_size=options["vocab_size"], min_frequency=options["min_frequency"],
                sweep=options["sweep"], tokenizer_name=options["tokenizer"],
                created_by=self.user)
        if not options["tokenizer"]:
            raise CommandError("give --tokenizer NAME (or --extends NAME@REF)")
        return start_training_run(
            corpora=[corpus_argument(c) for c in options["corpus"]],
            tokenizer_name=options["tokenizer"],
            vocab_size=options["vocab_size"], special_tokens=options["special_tokens"],
            pattern=options["pattern"], min_frequency=options["min_frequency"],
            sweep=options["sweep"], algorithm=options["algorithm"],
            lowercase=options["lowercase"], split=options["split"],
            min_word_frequency=options["min_word_frequency"], created_by=self.user)

    def follow(self, run: TrainingRun) -> None:
        try:
            run = self.wait(run)
        except KeyboardInterrupt:
            self.stdout.write(f"\ncancelling run {run.pk} ...")
            cancel_training_run(run=run, user=self.user)
            run = self.wait(run)
        if run.status != TrainingRun.Status.SUCCEEDED:
            raise CommandError(f"run {run.pk} {run.status}" + (f": {run.error}" if run.error
                                                               else ""))
        for version in run.versions.order_by("number"):
            self.stdout.write(f"version {version.label}: vocab size {version.vocab_size}, "
                              f"{version.merge_count} merges, digest {version.digest[:12]}")

    def wait(self, run: TrainingRun) -> TrainingRun:
        """Poll the run until it ends; on a terminal, redraw one progress line in place,
        otherwise print a line when the stage changes and every few seconds."""
        started, printed, phase = time.monotonic(), float("-inf"), None
        live = self.stdout.isatty()
        while not run.is_finished:
            time.sleep(0.5)
            run.refresh_from_db()
            line = progress_line(run)
            waiting = time.monotonic() - started > WAIT_HINT_SECONDS
            if run.status == TrainingRun.Status.QUEUED and waiting:
                line += " (no worker yet? start one with `celery -A registry worker`)"
            if live:
                self.stdout.write(f"\r{line}\x1b[K", ending="")
            elif (run.status, run.stage) != phase or time.monotonic() - printed > PRINT_SECONDS:
                self.stdout.write(line)
                printed, phase = time.monotonic(), (run.status, run.stage)
        if live:
            self.stdout.write("")
        if phase != (run.status, run.stage):
            self.stdout.write(progress_line(run))
        return run


def progress_line(run: TrainingRun) -> str:
    """``run 3: merge 1200/31744 (2400 merges/s)``, ``run 3: count 45% of 2.6 MB``."""
    if run.status != TrainingRun.Status.RUNNING:
        return f"run {run.pk}: {run.status}"
    if run.stage == TrainingRun.Stage.COUNT:
        percent = 100 * run.progress_done // max(run.progress_total, 1)
        return f"run {run.pk}: count {percent}% of {run.progress_total / 1e6:.1f} MB"
    rate = f" ({run.merges_per_second:.0f} merges/s)" if run.merges_per_second else ""
    return f"run {run.pk}: {run.stage} {run.progress_done}/{run.progress_total}{rate}"
