"""``manage.py check``: Django's system checks, after one line naming the BPE core that runs.

``BPE core: compiled (Cython)``, ``BPE core: pure Python (BPE_PURE_PYTHON=1)`` or ``BPE core:
pure Python (no compiled modules)`` (``tokenizers_app.bpe.compiled``). Everything else, options
and exit status included, is Django's own command.
"""

from django.core.management.commands.check import Command as DjangoCheck

from tokenizers_app.bpe.compiled import CORE_PATH


class Command(DjangoCheck):
    def handle(self, *app_labels, **options):
        self.stdout.write(f"BPE core: {CORE_PATH}")
        return super().handle(*app_labels, **options)
