import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def django_modules_loaded_by(package: str, *more: str) -> str:
    """Import ``tokenizers_app.PACKAGE`` and each of its modules (and ``more``) in a new Python:
    ``"N [first names]"`` of the Django modules that came with them."""
    folder = REPO / "tokenizers_app" / package
    modules = sorted(f"tokenizers_app.{package}.{p.stem}" for p in folder.glob("*.py")
                     if p.stem not in ("__init__", "__main__"))
    code = (
        f"import sys, {', '.join([f'tokenizers_app.{package}', *more, *modules])};"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'));"
        "print(len(loaded), loaded[:3])"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout


def test_the_core_imports_without_django():
    out = django_modules_loaded_by("bpe", "tokenizers_app.bpe.formats")
    assert out.startswith("0 "), f"the BPE core loaded Django modules: {out}"
