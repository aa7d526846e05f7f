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
    assert "ours runs the core: " in out and "(spread " in out


def test_the_training_benchmark_runs_ours_and_the_peer(corpus):
    out = _run("bench/train.py", "--corpus", str(corpus), "--vocab-size", "400")
    assert "ours " in out and "HF tokenizers (Rust)" in out
    assert "ratio ours/HF: time" in out and "ours runs the core: " in out and "(spread " in out


def test_the_training_benchmark_runs_char_level_bpe_against_the_peer(corpus):
    out = _run("bench/train.py", "--corpus", str(corpus), "--vocab-size", "600",
               "--algorithm", "char_bpe", "--repeat", "2")
    assert "char_bpe, vocab 600, words split at whitespace" in out
    assert "ours runs the core: " in out and "HF tokenizers (Rust)" in out
    assert "time ratio per round:" in out and "(spread " in out


def test_the_pages_load_benchmark_serves_every_page_under_gunicorn_without_errors():
    out = _run("bench/pages_load.py", "--seconds", "0.5", "--rounds", "1", "--clients", "4")
    assert "registry: 20 versions of load-pages" in out and "40 evaluations" in out
    assert "round page      per s requests  p50 ms  p99 ms errors" in out
    for page in ("home", "version", "compare", "download"):
        assert f"    1 {page:<8} " in out and f"  {page:<8} " in out
    assert "errors: 0 of" in out and "(none)" in out


def test_the_bounded_work_load_benchmark_serves_normal_encodes_beside_quadratic_ones():
    out = _run("bench/load.py", "--seconds", "1", "--heavy", "2", "--normal", "1",
               "--text-chars", "100000")
    assert "--workers 3 --threads 4" in out  # gunicorn as the Dockerfile runs it
    assert "phase load (1 normal + 1 moderate + 2 quadratic clients, 1 s):" in out
    heavy = next(line for line in out.splitlines() if line.startswith("  heavy"))
    assert " x 422" in heavy or " x 429" in heavy
    assert "normal encodes served under load:" in out and "load average after:" in out


def test_the_upload_benchmark_streams_through_the_page_and_the_api():
    out = _run("bench/upload.py", "--megabytes", "2")
    assert "through the page, /corpora/upload/" in out and "answer 302 -> /corpora/big/" in out
    assert "through the API, POST /api/corpora" in out and "answer 201 (corpus 'big-api'" in out
    assert out.count("web process resident memory:") == 2
    assert out.count("stored sha256 equals the sha256 of the bytes sent: yes") == 2


def test_the_runs_load_benchmark_finishes_ten_runs_on_two_workers_one_version_each():
    out = _run("bench/runs_load.py", "--kilobytes", "100")
    assert "2 workers (concurrency 1 each" in out and "10 runs submitted" in out
    assert out.count(" succeeded ") == 10 and "load-runs@10" in out
    assert "wall time, submission to the last run finished:" in out
    assert "all 10 runs succeeded, each with exactly one version of its own" in out


def test_the_sandbox_benchmark_evaluates_both_ways_with_the_same_metrics():
    out = _run("bench/sandbox_overhead.py", "0.05")
    assert "in process" in out and "sandbox child" in out
    assert "the same metrics both ways: yes" in out


def test_the_parity_benchmark_evaluates_a_99_language_set_against_the_library():
    out = _run("bench/parity.py", "--fixtures", str(gpt2_fixture_dir()), "--repeat", "1",
               "--kinds", "gpt2")
    assert "set: 99 languages (pivot en)" in out
    assert "byte_bpe GPT-2 / tiktoken: ours (evaluate, every metric)" in out
    assert "token counts agree in every language: yes" in out


def test_the_evaluation_benchmark_over_two_workers_merges_to_one_process_totals(corpus):
    """``bench/evaluate.py --workers 2``: each kind in parts over two processes, its totals
    equal to one process's and its token count to the library's."""
    out = _run("bench/evaluate.py", "--workers", "2", "--megabytes", "0.12",
               "--part-megabytes", "0.03", "--corpus", str(corpus), "--only", "byte_bpe,char",
               "--fixtures", str(gpt2_fixture_dir()))
    rows = [line for line in out.splitlines() if line.startswith(("byte_bpe", "char_bpe"))]
    assert len(rows) == 2 and all(line.endswith("equal") for line in rows), out
    assert "peak RSS per worker(+child) MB" in out
