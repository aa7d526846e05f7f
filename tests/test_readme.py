"""The README's examples run as written (its python and bash blocks, in order)."""

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_the_readme_python_examples_run():
    blocks = _blocks("python")
    assert blocks
    for block in blocks:
        subprocess.run([sys.executable, "-c", block], cwd=REPO, check=True)


def test_the_readme_shell_examples_run(tmp_path):
    blocks = _blocks("bash")
    assert len(blocks) >= 5
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(REPO))
    for block in blocks:  # `.venv/bin/python` as the README writes it: this test's Python
        block = block.replace(".venv/bin/python", "python")
        done = subprocess.run(["bash", "-e", "-c", block], cwd=REPO, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"README block failed:\n{block}\n{done.stderr}"
