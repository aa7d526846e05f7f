"""Which core runs: the compiled loops, or their pure-Python twins.

The merge loop (``training_loop.learn_merges``) and the per-pre-token BPE of encoding
(``encoding_loop.MergeTable``) each have a compiled twin (``training_loop_compiled.pyx``,
``encoding_loop_compiled.pyx``); the second also scans the gpt2 pattern (``gpt2_split``, equal to
``regex``'s split) and encodes with it in one pass (``MergeTable.encode_gpt2``: scan, look up,
merge) and counts an evaluation's words (``WordTally``, twin of ``word_tally.PlainWordTally``).
The encode answer's writer (``TokenTable.encoding_json``) has one too
(``token_table_compiled.pyx``; ``encoding_json`` here, None without it). They are built by
``pip install`` where a C compiler and the Python headers exist (see setup.py). Both give the
same results to the byte (tests/bpe/test_compiled.py, tests/bpe/test_token_table.py);
the compiled ones are faster. The pure ones run when the compiled ones were not built, or when
the environment sets ``BPE_PURE_PYTHON=1``, read once when this module is imported.

``CORE_PATH`` says which runs, for ``manage.py check``, the run page and ``bench/``:
``"compiled (Cython)"``, ``"pure Python (BPE_PURE_PYTHON=1)"`` or ``"pure Python (no compiled
modules)"``.
"""

from __future__ import annotations

import importlib
import os

from .encoding_loop import MergeTable as PureMergeTable
from .training_loop import learn_merges as pure_learn_merges
from .word_tally import PlainWordTally

PURE_SWITCH = "BPE_PURE_PYTHON"


def _compiled_modules(*names: str):
    """The compiled twins of these names, or None when the switch forbids them or one of them
    was not built."""
    if os.environ.get(PURE_SWITCH) == "1":
        return None
    try:  # by name: extension modules, which import graphs of the sources cannot see
        return tuple(importlib.import_module(f"{__package__}.{name}") for name in names)
    except ImportError:
        return None


_modules = _compiled_modules("training_loop_compiled", "encoding_loop_compiled")
if _modules is not None:
    CORE_PATH = "compiled (Cython)"
    learn_merges = _modules[0].learn_merges
    MergeTable = _modules[1].MergeTable
    gpt2_split = _modules[1].gpt2_split  # the gpt2 pattern scanned in C (pretokenize)
    # an evaluation's counts scanned in C (pretoken_tally); None in a build older than it
    PreTokenTally = getattr(_modules[1], "PreTokenTally", None)
    # an evaluation's words counted in C (word_tally); the plain twin in a build older than it
    WordTally = getattr(_modules[1], "WordTally", PlainWordTally)
else:
    CORE_PATH = (f"pure Python ({PURE_SWITCH}=1)" if os.environ.get(PURE_SWITCH) == "1"
                 else "pure Python (no compiled modules)")
    learn_merges = pure_learn_merges
    MergeTable = PureMergeTable
    gpt2_split = None
    PreTokenTally = None
    WordTally = PlainWordTally
IS_COMPILED = _modules is not None

# the encode answer written in C (token_table), on its own: a build older than this module
# keeps its compiled loops and writes answers in Python until it is built again
_writer = _compiled_modules("token_table_compiled") if IS_COMPILED else None
encoding_json = _writer[0].encoding_json if _writer is not None else None
