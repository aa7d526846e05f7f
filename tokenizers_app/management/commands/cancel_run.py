"""``manage.py cancel_run RUN_ID``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import cancel_training_run


class Command(BaseCommand):
    help = "Cancel a training run: a queued run at once, a running one within a second."

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)

    def handle(self, *args, run_id, **options):
        run = TrainingRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"no training run {run_id}")
        run = cancel_training_run(run=run)
        running = run.status == TrainingRun.Status.RUNNING
        self.stdout.write(f"run {run.pk}: {run.status}" + (" (cancel requested)" if running
                                                             else ""))
