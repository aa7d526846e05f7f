"""``manage.py train --extends NAME@REF``: an extension run from the command line."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.bpe.corpora import CHINESE
from tokenizers_app.models import TokenizerVersion, TrainingRun
from tokenizers_app.services.runs import execute_training_run, start_training_run

from .helpers import import_text, sample_text


def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def parent(db, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text(sample_text(20_000), "prose")
    import_text((CHINESE + "\n") * 40, "cjk")
    run = start_training_run(corpora=[corpus], tokenizer_name="prose-bpe", vocab_size=300,
                             special_tokens=["<|endoftext|>"])
    execute_training_run(run_id=run.pk)
    return run.versions.get()


def test_train_extends_a_version_into_a_new_version_of_its_tokenizer(parent):
    output = run_command("train", "--extends", "prose-bpe@1", "--corpus", "cjk",
                         "--vocab-size", "330")
    run = TrainingRun.objects.get(extends=parent)
    assert f"queued run {run.pk}: prose-bpe, byte_bpe, vocab size 330, extends prose-bpe@1" \
        in output
    execute_training_run(run_id=run.pk)
    child = TokenizerVersion.objects.resolve("prose-bpe@2")
    assert child.lineage()["extends"] == "prose-bpe@1" and child.vocab_size == 330
    parent_vocab = parent.load_tokenizer().vocab
    assert {i: child.load_tokenizer().vocab[i] for i in parent_vocab} == parent_vocab


@pytest.mark.parametrize("args, message", [
    (["--pattern", "gpt4"], "--pattern is kept from the parent prose-bpe@1"),
    (["--vocab-size", "299"], "must be above the 300 tokens of prose-bpe@1"),
])
def test_train_extends_refuses_in_words(parent, args, message):
    base = ["train", "--extends", "prose-bpe@1", "--corpus", "cjk", "--vocab-size", "330"]
    with pytest.raises(CommandError, match=message):
        run_command(*base, *args)
    assert not TrainingRun.objects.filter(extends=parent).exists()


def test_diff_says_extends_and_counts_the_lines_of_a_corpus(parent):
    run_command("train", "--extends", "prose-bpe@1", "--corpus", "cjk", "--vocab-size", "330")
    execute_training_run(run_id=TrainingRun.objects.get(extends=parent).pk)
    output = run_command("diff", "prose-bpe@1", "prose-bpe@2", "--corpus", "prose")
    assert "prose-bpe@1 -> prose-bpe@2: extends" in output and "new ids 300..329" in output
    assert "corpus prose: 100.0% of" in output
    found = json.loads(run_command("diff", "prose-bpe@2", "prose-bpe@1", "--json"))
    assert found["verdict"] == "incompatible" and found["changed_count"] == 30
    with pytest.raises(CommandError, match="prose-bpe"):
        run_command("diff", "prose-bpe@1", "prose-bpe@7")


def test_golden_gate_and_alias_refuse_then_force_with_a_reason(parent, django_user_model):
    django_user_model.objects.create_user("boss", password="pw-boss-1", is_staff=True)
    run_command("train", "--extends", "prose-bpe@1", "--corpus", "cjk", "--vocab-size", "330")
    execute_training_run(run_id=TrainingRun.objects.get(extends=parent).pk)
    assert "prose-bpe@production -> version 2" in run_command(
        "alias", "prose-bpe@2", "production", "--user", "boss")
    assert "gated, tolerance 5.00%" in run_command("gate", "prose-bpe", "production",
                                                   "--tolerance", "0.05", "--user", "boss")
    assert "pinned golden" in run_command("golden", "prose-bpe@2", "我们今天学习")
    assert "BREAKS golden" in run_command("golden", "prose-bpe@1")
    with pytest.raises(CommandError, match="ids: prose-bpe@1 incompatible prose-bpe@2.*goldens: "
                                           "1 golden broken"):
        run_command("alias", "prose-bpe@1", "production", "--user", "boss")
    forced = run_command("alias", "prose-bpe@1", "production", "--user", "boss",
                         "--force-reason", "the CJK model is not ready")
    assert "forced past the gate: the CJK model is not ready" in forced


@pytest.mark.parametrize("char_level", [False, True])
def test_a_fanned_out_extension_run_equals_one_counted_in_one_task(parent, settings,
                                                                    char_level):
    from tokenizers_app.models import CountPart
    from tokenizers_app.services.extensions import start_extension_run
    from tokenizers_app.services.fanout import count_corpus_part, merge_counted_run

    if char_level:
        char_run = start_training_run(corpora=["prose"], tokenizer_name="classic",
                                      vocab_size=200, algorithm="char_bpe")
        execute_training_run(run_id=char_run.pk)
    ref = "classic@1" if char_level else "prose-bpe@1"
    whole = start_extension_run(extends=ref, corpora=["cjk"], vocab_size=380)
    execute_training_run(run_id=whole.pk)
    expected = whole.versions.get().load_tokenizer()
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 2000
    fanned = start_extension_run(extends=ref, corpora=["cjk"], vocab_size=380, sweep=[] if
                                 char_level else [350])
    execute_training_run(run_id=fanned.pk)
    parts = list(CountPart.objects.filter(run=fanned).order_by("index"))
    assert len(parts) > 2
    for part in parts:
        count_corpus_part(part_id=part.pk, worker="here")
    merge_counted_run(run_id=fanned.pk, attempt=1)
    fanned.refresh_from_db()
    assert fanned.status == TrainingRun.Status.SUCCEEDED, fanned.error
    made = fanned.versions.order_by("vocab_size")  # the full one is the whole run's version
    assert made.last() == whole.versions.get()  # same digest: the same version
    assert made.last().lineage()["extends"] == ref
    if not char_level:  # the sweep keeps the parent whole and the first new ids
        assert made.first().vocab_size == 350
        assert made.first().load_tokenizer().merges == expected.merges[:len(
            parent.load_tokenizer().merges) + 50]
