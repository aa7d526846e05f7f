"""The benchmark scripts run end to end on a small corpus (their figures are not checked here:
timings belong to bench/, not to the test suite)."""

import subprocess
import sys

import pytest

from tests.bpe.corpora import varied_text
from tests.fixtures import REPO, gpt2_fixture_dir

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    text = varied_text(120_000)
    documents = [text[i:i + 6_000] for i in range(0, len(text), 6_000)]
    path = tmp_path_factory.mktemp("bench") / "corpus.txt"
    path.write_text("<|endoftext|>".join(documents), encoding="utf-8")
    return path


def _run(*args) -> str:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_encoding_benchmark_runs_all_encoders_and_checks_their_ids(corpus):
    out = _run("bench/encode.py", "--corpus", str(corpus), "--fixtures", str(gpt2_fixture_dir()),
               "--repeat", "1")
    assert "ours, encode_batch (all cores)" in out and "HF tokenizers, one thread" in out
    assert "identical ids across all encoders: yes" in out


def test_the_training_benchmark_runs_ours_and_the_peer(corpus):
    out = _run("bench/train.py", "--corpus", str(corpus), "--vocab-size", "400")
    assert "ours (Python)" in out and "HF tokenizers (Rust)" in out
    assert "ratio ours/HF: time" in out
