"""The commands that read and change what the API reads and changes, each with --json."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tokenizers_app.models import AliasMove, ApiKey, Evaluation

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_tokenizers_versions_and_show_in_words_and_json(registry_data):
    assert "prose-bpe" in run("tokenizers") and "prose-bpe@2" in run("versions", "prose-bpe")
    shown = json.loads(run("show", "prose-bpe@2", "--json"))
    evaluation = Evaluation.objects.get(version=registry_data["large"])
    assert shown["metrics"]["held-out"]["metrics"] == evaluation.metrics
    assert "on held-out: compression_ratio" in run("show", "prose-bpe@2")
    assert "bytes/token" in run("show", "prose-bpe@2")
    assert json.loads(run("tokenizers", "--json"))[0]["latest"] == 2


def test_show_prints_special_tokens_safely(registry_data):
    from .helpers import train

    train(registry_data["corpus"], "tricky", vocab_size=300,
          special_tokens=["\u202eevil", "bell\x07", "a b"])
    shown = run("show", "tricky@1")
    assert "special  <U+202E>evil bell<U+0007> a·b\n" in shown
    assert "\u202e" not in shown and "\x07" not in shown
    assert json.loads(run("show", "tricky@1", "--json"))["special_tokens"][0] == "\u202eevil"


def test_runs_corpora_compare_and_encode(registry_data):
    runs = json.loads(run("runs", "--json"))
    assert [r["status"] for r in runs] == ["succeeded", "succeeded"]
    assert json.loads(run("corpora", "prose", "--json"))["sha256"] == \
        registry_data["corpus"].sha256
    compared = json.loads(run("compare", "prose-bpe@1", "prose-bpe@2", "--corpus", "held-out",
                              "--json"))
    assert [v["ref"] for v in compared["versions"]] == ["prose-bpe@1", "prose-bpe@2"]
    table = run("compare", "prose-bpe@1", "prose-bpe@2", "--corpus", "held-out")
    assert "Compression ratio" in table
    [ratios] = [line for line in table.splitlines() if line.startswith("Compression ratio")]
    assert ratios.endswith("bytes/token ★")  # the larger vocab, in the last column, is best
    ids = json.loads(run("encode", "prose-bpe@2", "--text", "hello world", "--json"))["ids"]
    assert ids == registry_data["large"].load_tokenizer().encode_ordinary("hello world")


def test_aliases_and_lifecycle_move_only_for_staff_and_are_recorded(registry_data):
    with pytest.raises(CommandError, match="only staff can move aliases"):
        run("alias", "prose-bpe@1", "production", "--user", "member")
    assert run("alias", "prose-bpe@1", "production", "--user", "staff").strip() == \
        "prose-bpe@production -> version 1"
    assert AliasMove.objects.get().moved_by == registry_data["staff"]
    assert "published" in run("lifecycle", "prose-bpe@production", "published", "--user",
                              "staff")


def test_api_keys_are_shown_once_stored_hashed_and_revocable(registry_data):
    key = run("create_api_key", "member", "--name", "ci").strip()
    record = ApiKey.objects.get(name="ci")
    assert key.startswith("trk_") and key.startswith(record.prefix) and key not in record.hashed
    assert ApiKey.objects.authenticate(key) == registry_data["member"]
    run("revoke_api_key", record.prefix)
    assert ApiKey.objects.authenticate(key) is None


def test_unknown_names_are_one_line_errors(registry_data):
    for args in [("versions", "nothing"), ("show", "prose-bpe@9"), ("show", "prose-bpe@²"),
                 ("runs", "99999"),
                 ("compare", "prose-bpe@1", "--corpus", "nothing"),
                 ("compare", "prose-bpe@1", "--corpus", "prose")]:
        with pytest.raises(CommandError):
            run(*args)


def test_compare_says_n_a_where_the_compare_page_does(registry_data, client):
    """A metric not defined for a version's kind (byte-level BPE's unknown rate, beside a
    character-level version) printed "—" where the page prints "n/a"."""
    from tokenizers_app.services.evaluations import evaluate_version

    from .helpers import train

    char = train(registry_data["corpus"], "prose-char", vocab_size=400,
                 algorithm="char_bpe").versions.get()
    evaluate_version(version=char, corpus=registry_data["held_out"])
    table = run("compare", "prose-bpe@1", "prose-char@1", "--corpus", "held-out")
    [unknown] = [line for line in table.splitlines() if line.startswith("Unknown rate")]
    assert unknown.split()[2] == "n/a" and "—" not in unknown
    html = client.get("/compare/?versions=prose-bpe@1,prose-char@1&corpus=held-out")
    cells = html.content.decode().split('data-metric="unknown_rate">', 2)
    assert cells[1].split("</td>")[0].endswith("n/a</span>")
    only_bytes = run("compare", "prose-bpe@1", "prose-bpe@2", "--corpus", "held-out")
    assert "Unknown rate" not in only_bytes  # the page hides a row no version reports
