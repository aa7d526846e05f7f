"""``python -m tokenizers_app.bpe ...``: see ``cli.py``."""

from .cli import main

raise SystemExit(main())
