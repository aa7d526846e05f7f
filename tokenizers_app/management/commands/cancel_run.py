"""``manage.py cancel_run RUN_ID [--user NAME]``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import cancel_training_run


class Command(BaseCommand):
    help = ("Cancel a training run: a queued run at once, a running one within a second. With "
            "--user, only as the user who started it or as staff.")

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)
        add_user_argument(parser)

    def handle(self, *args, run_id, user, **options):
        acting = acting_user(user)
        run = TrainingRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"no training run {run_id}")
        if run.is_finished:
            raise nothing_to_cancel(run)
        with refusals_as_command_errors():
            run = cancel_training_run(run=run, user=acting)
        if run.is_finished and run.status != TrainingRun.Status.CANCELLED:
            raise nothing_to_cancel(run)  # it finished on its own in the meantime
        running = run.status == TrainingRun.Status.RUNNING
        self.stdout.write(f"run {run.pk}: {run.status}" + (" (cancel requested)" if running
                                                             else ""))


def nothing_to_cancel(run: TrainingRun) -> CommandError:
    return CommandError(f"run {run.pk} has already finished ({run.get_status_display().lower()}): "
                        f"there is nothing to cancel")
