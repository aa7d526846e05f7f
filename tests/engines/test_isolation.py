import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_engines_import_without_django():
    modules = sorted(f"tokenizers_app.engines.{p.stem}" for p in
                     (REPO / "tokenizers_app" / "engines").glob("*.py") if p.stem != "__init__")
    code = (
        f"import sys, tokenizers_app.engines, {', '.join(modules)};"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'));"
        "print(len(loaded), loaded[:3])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.startswith("0 "), f"the engines loaded Django modules: {out}"
