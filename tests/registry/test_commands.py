"""The command line: import_corpus, train, evaluate, export_tokenizer, import_tokenizer,
reap_runs, cancel_run, and ``start`` (the README's first command) as a real process."""

import io
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.processes import free_port
from django.core.management import CommandError, call_command

from tokenizers_app.bpe import load_tokenizer, train_bpe
from tokenizers_app.management.commands.start import local_text
from tokenizers_app.management.commands.train import progress_line
from tokenizers_app.models import Corpus, Evaluation, TokenizerVersion, TrainingRun
from tokenizers_app.services.runs import execute_training_run, start_training_run

from .helpers import import_text, sample_text, wait_until

REPO = Path(__file__).resolve().parents[2]


def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def version(db, media_root):
    """A trained version ``prose-bpe@1``, trained here as a worker would."""
    corpus = import_text(sample_text(20_000), "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="prose-bpe",
                             vocab_size=400, special_tokens=["<|endoftext|>"])
    execute_training_run(run_id=run.pk)
    return run.versions.get()


# -- import_corpus --------------------------------------------------------------------------------

def test_import_corpus_imports_a_file_and_reports_it(db, media_root, tmp_path):
    path = tmp_path / "web.txt"
    path.write_text("one line\nanother line\n", encoding="utf-8")

    output = run_command("import_corpus", str(path), "--name", "web", "--evaluation")

    corpus = Corpus.objects.get()
    assert (corpus.name, corpus.original_filename, corpus.is_evaluation) == ("web", "web.txt", True)
    assert f"corpus 'web': {path.stat().st_size} bytes, 2 lines" in output


def test_import_corpus_says_when_the_bytes_are_already_a_corpus(db, media_root, tmp_path):
    path = tmp_path / "web.txt"
    path.write_text("same\n", encoding="utf-8")
    run_command("import_corpus", str(path), "--name", "web")

    output = run_command("import_corpus", str(path), "--name", "web-again")

    assert "already the corpus 'web'" in output
    assert Corpus.objects.count() == 1


def test_import_corpus_reports_bad_input_without_creating_rows(db, media_root, tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9")

    with pytest.raises(CommandError, match="not valid UTF-8: byte 0xe9 at byte offset 3"):
        run_command("import_corpus", str(path), "--name", "latin1")
    with pytest.raises(CommandError, match="cannot read .*missing.txt: No such file"):
        run_command("import_corpus", str(tmp_path / "missing.txt"), "--name", "missing")
    assert not Corpus.objects.exists()


@pytest.mark.parametrize("over", [1, 10 << 20], ids=["1 byte over", "10 MB over"])
def test_import_corpus_says_a_corpus_over_the_limit_is_too_large(db, media_root, tmp_path,
                                                                 settings, over):
    settings.CORPUS_MAX_BYTES = 1000
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (1000 + over))

    with pytest.raises(CommandError, match=r"the corpus is larger than the limit of 1000 bytes "
                                           r"\(setting CORPUS_MAX_BYTES\)"):
        run_command("import_corpus", str(path), "--name", "big")
    assert not Corpus.objects.exists()


# -- train ----------------------------------------------------------------------------------------

def test_train_queues_a_run_with_the_given_parameters(db, media_root):
    import_text(sample_text(5_000), "prose")

    output = run_command("train", "--corpus", "prose", "--tokenizer", "t", "--vocab-size", "300",
                         "--special-token", "<s>", "--special-token", "</s>", "--pattern", "gpt4",
                         "--sweep", "280")

    run = TrainingRun.objects.get()
    assert f"queued run {run.pk}: t, byte_bpe, vocab size 300" in output
    assert (run.special_tokens, run.pattern, run.sweep) == (["<s>", "</s>"], "gpt4", [280])


def test_train_queues_a_char_level_run_and_runs_lists_its_algorithm(db, media_root):
    import_text(sample_text(5_000), "prose")

    output = run_command("train", "--corpus", "prose", "--tokenizer", "c", "--vocab-size", "300",
                         "--algorithm", "char_bpe", "--lowercase", "--split", "word_punct",
                         "--min-word-frequency", "2")

    run = TrainingRun.objects.get()
    assert f"queued run {run.pk}: c, char_bpe, vocab size 300" in output
    assert (run.algorithm, run.special_tokens, run.pattern) == ("char_bpe", ["<unk>"], "")
    assert run.char_options == {"lowercase": True, "split": "word_punct",
                                "min_word_frequency": 2}
    listing = run_command("runs")
    assert "ALGORITHM" in listing and "char_bpe" in listing
    assert '"split": "word_punct"' in run_command("runs", str(run.pk), "--json")


@pytest.mark.parametrize("args, message", [
    (["--corpus", "nope", "--vocab-size", "300"], "no corpus named 'nope'"),
    (["--corpus", "prose", "--vocab-size", "100"], "vocab size 100 is out of bounds"),
    (["--corpus", "prose", "--vocab-size", "300", "--special-token", ""],
     "special tokens must be non-empty strings"),
    (["--corpus", "prose", "--vocab-size", "300", "--algorithm", "char_bpe", "--pattern", "gpt4"],
     "pattern does not apply to char_bpe"),
    (["--corpus", "prose", "--vocab-size", "300", "--lowercase"],
     "lowercase does not apply to byte_bpe"),
    (["--corpus", "prose", "--vocab-size", "300", "--algorithm", "char_bpe",
      "--special-token", "<s>"], "needs the unknown token '<unk>'"),
    (["--corpus", "prose", "--vocab-size", "300", "--algorithm", "char_bpe",
      "--min-word-frequency", "0"], "min word frequency must be an integer from 1"),
    (["--corpus", "prose", "--vocab-size", "300", "--algorithm", "char_bpe", "--split", "bpe"],
     "split must be one of whitespace, word_punct"),
])
def test_train_reports_bad_parameters_without_creating_rows(db, media_root, args, message):
    import_text(sample_text(5_000), "prose")
    with pytest.raises(CommandError, match=message):
        run_command("train", "--tokenizer", "t", *args)
    assert not TrainingRun.objects.exists()


def test_train_wait_follows_the_run_to_its_version(worker):
    import_text(sample_text(30_000), "prose")

    output = run_command("train", "--corpus", "prose", "--tokenizer", "prose-bpe",
                         "--vocab-size", "500", "--wait")

    version = TokenizerVersion.objects.get()
    assert f"version prose-bpe@1: vocab size 500, 244 merges, digest {version.digest[:12]}" \
        in output


def test_train_wait_fails_with_the_run_error(worker):
    # lossless on the sample checked at start (the first 64 KB), not on the rest
    import_text("plain words " * 6_000 + "then a comma, here\n", "late-comma")

    with pytest.raises(CommandError, match=r"run \d+ failed: .*is not lossless"):
        run_command("train", "--corpus", "late-comma", "--tokenizer", "t", "--vocab-size", "500",
                    "--pattern", r"[a-z ]+|\n", "--wait")


@pytest.mark.django_db
def test_train_refuses_a_pattern_that_fails_on_a_sample_of_the_corpus():
    import_text(sample_text(30_000), "prose")

    with pytest.raises(CommandError, match="is not lossless on corpus 'prose'"):
        run_command("train", "--corpus", "prose", "--tokenizer", "t", "--vocab-size", "500",
                    "--pattern", r"\w+")
    assert not TrainingRun.objects.exists()


def test_progress_lines_name_the_stage_and_its_progress():
    run = TrainingRun(pk=3, status="running", stage="merge", progress_done=1200,
                      progress_total=31744, merges_per_second=2400.4)
    assert progress_line(run) == "run 3: merge 1200/31744 (2400 merges/s)"
    run.stage, run.progress_done, run.progress_total = "count", 450, 1000
    assert progress_line(run) == "run 3: count 45% of 0.0 MB"


# -- export, import, evaluate ---------------------------------------------------------------------

@pytest.mark.parametrize("format, target", [("hf", "tokenizer.json"), ("gpt2", "gpt2-folder"),
                                            ("tiktoken", "prose.tiktoken"),
                                            ("native", "prose.json")])
def test_export_then_import_gives_back_the_same_version(version, tmp_path, format, target):
    out = tmp_path / target

    run_command("export_tokenizer", "prose-bpe@1", "--format", format, "--out", str(out))
    output = run_command("import_tokenizer", str(out), "--tokenizer", "prose-bpe")

    assert load_tokenizer(out).merges == version.load_tokenizer().merges
    assert output.startswith("version prose-bpe@1:")
    assert TokenizerVersion.objects.count() == 1


def test_import_tokenizer_adds_a_new_version_from_a_vocab_and_merges_folder(db, media_root,
                                                                            tmp_path):
    tokenizer = train_bpe([sample_text(10_000)], 300).tokenizer()
    from tokenizers_app.bpe import save_tokenizer
    save_tokenizer(tokenizer, tmp_path / "gpt2", "gpt2")

    output = run_command("import_tokenizer", str(tmp_path / "gpt2"), "--tokenizer", "outside")

    version = TokenizerVersion.objects.get()
    assert output.startswith("version outside@1: vocab size 300, 44 merges")
    assert version.source_detail == f"imported from {tmp_path / 'gpt2'}"
    assert version.load_tokenizer().merges == tokenizer.merges


def test_import_tokenizer_takes_a_bare_rank_files_pattern_and_special_tokens(db, media_root,
                                                                              tmp_path):
    from tests.bpe.published import rank_file
    tokenizer = train_bpe([sample_text(10_000)], 300, pattern="gpt4").tokenizer()
    (tmp_path / "web.tiktoken").write_bytes(rank_file(tokenizer))

    output = run_command("import_tokenizer", str(tmp_path / "web.tiktoken"), "--tokenizer",
                         "bare", "--pattern", "gpt4", "--special-token", "<|end|>=300",
                         "--special-token", "<|a=b|>=302")

    version = TokenizerVersion.objects.get()
    assert "splits text with gpt4 and has 2 special tokens, as given" in output
    assert version.load_tokenizer().special_ids == {"<|end|>": 300, "<|a=b|>": 302}
    assert version.load_tokenizer().merges == tokenizer.merges
    with pytest.raises(CommandError, match="write TOKEN=ID"):
        run_command("import_tokenizer", str(tmp_path / "web.tiktoken"), "--tokenizer", "b",
                    "--special-token", "<|end|>")


def test_import_tokenizer_reports_files_that_are_not_a_tokenizer(db, media_root, tmp_path):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(CommandError):
        run_command("import_tokenizer", str(tmp_path / "notes.txt"), "--tokenizer", "junk")
    assert not TokenizerVersion.objects.exists()


def test_export_tokenizer_explains_an_unknown_ref(version, tmp_path):
    with pytest.raises(CommandError, match=r"has no version 9 \(versions: 1\)"):
        run_command("export_tokenizer", "prose-bpe@9", "--format", "hf", "--out",
                    str(tmp_path / "x.json"))


def test_evaluate_prints_and_stores_the_metrics(version):
    import_text(sample_text(5_000, offset=200_000), "held-out")

    output = run_command("evaluate", "prose-bpe@1", "--corpus", "held-out")

    metrics = Evaluation.objects.get().metrics
    assert output.startswith("prose-bpe@1 on held-out:")
    assert "compression_ratio" in output and f"{metrics['compression_ratio']:.4f}" in output


# -- reap_runs, cancel_run ------------------------------------------------------------------------

def test_reap_runs_reports_what_it_did(version):
    assert run_command("reap_runs").strip() == "no stale runs"


def test_cancel_run_cancels_a_queued_run(db, media_root):
    import_text(sample_text(5_000), "prose")
    run = start_training_run(corpora=["prose"], tokenizer_name="t", vocab_size=300)

    assert run_command("cancel_run", str(run.pk)).strip() == f"run {run.pk}: cancelled"
    with pytest.raises(CommandError, match="no training run 999"):
        run_command("cancel_run", "999")


# -- start ----------------------------------------------------------------------------------------

def test_local_text_joins_utf8_files_up_to_the_limit_and_skips_the_rest(tmp_path):
    (tmp_path / "a").write_text("alpha", encoding="utf-8")
    (tmp_path / "b").write_bytes(b"caf\xe9")
    (tmp_path / "c").write_text("x" * 100, encoding="utf-8")
    (tmp_path / "d").write_text("delta", encoding="utf-8")
    paths = [tmp_path / name for name in "abcde"]

    assert local_text(paths, limit=50) == b"alpha\n\ndelta\n"



@pytest.mark.slow
def test_start_serves_the_app_and_trains_the_demo_with_its_own_worker(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "MEDIA_ROOT", "SQLITE_PATH",
                        "CELERY_BROKER_DIR", "CELERY_TASK_DEFAULT_QUEUE")}
    env["REGISTRY_VAR_DIR"] = str(tmp_path / "var")
    log = open(tmp_path / "start.log", "wb")
    # launched as a shell launches `cmd &`: with SIGINT ignored, which start must undo
    process = subprocess.Popen([sys.executable, "manage.py", "start", f"127.0.0.1:{port}"],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        def index():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
            except OSError:
                return b""

        wait_until(lambda: index().count(b"latest: v1") >= 2, 120, "the demo versions (byte- and "
                   "character-level) on the index page:\n"
                   + (tmp_path / "start.log").read_text(errors="replace")[-3000:], interval=0.1)
        assert b"demo-docs-bpe" in index() and b"demo-docs-char-bpe" in index()
        health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health").read())
        assert health == {"status": "ok", "database": "sqlite"}
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # leave no process behind
            process.wait()
            pytest.fail("manage.py start did not stop within 40 s of SIGINT")
    log_text = (tmp_path / "start.log").read_text(errors="replace")
    assert "demo corpus 'demo-docs'" in log_text
    assert "parallel set 'django-messages': Django's own messages in" in log_text
    assert "imported demo-docs-wordpiece@1: a BERT-style WordPiece (kind hf)" in log_text
    assert "celery -A registry worker" in log_text
    workers = subprocess.run(["pgrep", "-f", "--", f"--schedule {tmp_path}"], capture_output=True)
    assert workers.stdout == b"", "the worker outlived the server"


@pytest.mark.django_db
def test_a_command_acting_for_an_unknown_user_is_refused_and_its_help_names_the_operator(
        capsys):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("cancel_run", "1", "--user", "nobody")
    for command in ("train", "import_tokenizer", "cancel_run", "import_corpus"):
        with pytest.raises(SystemExit):
            call_command(command, "--help")
        assert "without --user the command acts as the operator" in \
            " ".join(capsys.readouterr().out.split()), command


def test_import_tokenizer_takes_the_pattern_gpt2_files_cannot_hold_and_says_which(
        db, media_root, tmp_path):
    from tokenizers_app.bpe import save_tokenizer
    tokenizer = train_bpe([sample_text(10_000)], 300, pattern="gpt4").tokenizer()
    save_tokenizer(tokenizer, tmp_path / "gpt2", "gpt2")

    assumed = run_command("import_tokenizer", str(tmp_path / "gpt2"), "--tokenizer", "guess")
    given = run_command("import_tokenizer", str(tmp_path / "gpt2"), "--tokenizer", "told",
                        "--pattern", "gpt4")

    assert "GPT-2 files hold no pattern: guess@1 splits text with gpt2, assumed" in assumed
    assert "GPT-2 files hold no pattern: told@1 splits text with gpt4, as given" in given
    told = TokenizerVersion.objects.get(tokenizer__name="told")
    assert told.pattern == "gpt4" and told.load_tokenizer().encode("it's 2024") == \
        tokenizer.encode("it's 2024")
    save_tokenizer(tokenizer, tmp_path / "t.json", "hf")
    with pytest.raises(CommandError, match="name their own pattern"):
        run_command("import_tokenizer", str(tmp_path / "t.json"), "--tokenizer", "x",
                    "--pattern", "gpt2")


def test_cancel_run_refuses_a_finished_run_with_a_command_error(db, media_root):
    corpus = import_text(sample_text(2_000), "small")
    run = start_training_run(corpora=[corpus], tokenizer_name="done-bpe", vocab_size=260)
    TrainingRun.objects.filter(pk=run.pk).update(status=TrainingRun.Status.SUCCEEDED)

    with pytest.raises(CommandError, match=rf"run {run.pk} has already finished \(succeeded\): "
                                           r"there is nothing to cancel"):
        run_command("cancel_run", str(run.pk))
    assert TrainingRun.objects.get(pk=run.pk).status == "succeeded"
