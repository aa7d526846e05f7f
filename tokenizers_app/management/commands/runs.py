"""``manage.py runs [ID] [--json]``"""

from tokenizers_app.errors import NotFound
from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import TrainingRun
from tokenizers_app.shapes import RunOut


class Command(ReadCommand):
    help = "List the latest training runs, or show one run."

    def add_arguments(self, parser):
        parser.add_argument("run_id", nargs="?", type=int)
        parser.add_argument("--limit", type=int, default=50)
        super().add_arguments(parser)

    def handle_read(self, run_id=None, limit=50, **options):
        runs = TrainingRun.objects.select_related("tokenizer").prefetch_related("corpora",
                                                                               "versions")
        if run_id is None:
            return [RunOut.of(run) for run in runs[:limit]]
        run = runs.filter(pk=run_id).first()
        if run is None:
            raise NotFound(f"no training run {run_id}")
        return RunOut.of(run)

    def table(self, data):
        rows = data if isinstance(data, list) else [data]
        lines = columns([[r["id"], r["tokenizer"], r["algorithm"], r["status"], r["stage"],
                          f"{r['progress_done']}/{r['progress_total']}", r["vocab_size"],
                          ",".join(r["corpora"]), ",".join(r["versions"])] for r in rows],
                        ["RUN", "TOKENIZER", "ALGORITHM", "STATUS", "STAGE", "PROGRESS", "VOCAB",
                         "CORPORA", "VERSIONS"])
        return lines + [f"error: {r['error']}" for r in rows if r["error"] and len(rows) == 1]
