"""Character-level BPE through the pages: the run form's algorithm and its fields, the run page,
the version's vocabulary, merges and merge tree (``</w>`` shown as a word end, escaped), the
playground's unknown tokens, and compare and the leaderboard beside byte-level versions."""

import re

import pytest

from tests.registry.helpers import train
from tokenizers_app.models import Evaluation, TrainingRun
from tokenizers_app.services.evaluations import run_evaluation

pytestmark = pytest.mark.django_db

RUN = {"tokenizer": "classic", "corpus": "prose", "vocab_size": 300, "min_frequency": 1,
       "sweep": ""}


@pytest.fixture
def char_version(registry_data):
    version = train(registry_data["corpus"], "classic", vocab_size=300, algorithm="char_bpe",
                    split="word_punct").versions.get()
    for evaluation in Evaluation.objects.filter(version=version):
        run_evaluation(evaluation_id=evaluation.pk)
    return version


def test_the_run_form_offers_both_algorithms_each_with_its_own_fields(client, registry_data):
    client.force_login(registry_data["member"])
    page = client.get("/runs/new/").content.decode()
    assert 'name="algorithm" value="char_bpe"' in page and "run_form.js" in page
    byte = page.index('data-algorithm="byte_bpe"')
    char = page.index('data-algorithm="char_bpe"')
    assert byte < page.index('name="pattern"') < char < page.index('name="split"')
    assert page.index('name="lowercase"') > char and page.index('name="min_word_frequency"') > char


def test_a_char_run_from_the_form_takes_only_its_own_fields(client, registry_data):
    client.force_login(registry_data["member"])
    # without script the byte-level fields are posted too: the chosen algorithm's alone count
    response = client.post("/runs/new/", {**RUN, "algorithm": "char_bpe", "pattern": "gpt4",
                                          "special_tokens": "<unk>\n<s>", "lowercase": "on",
                                          "split": "word_punct", "min_word_frequency": 2})
    run = TrainingRun.objects.get(tokenizer__name="classic")
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert (run.algorithm, run.pattern, run.special_tokens) == ("char_bpe", "", ["<unk>", "<s>"])
    assert run.char_options == {"lowercase": True, "split": "word_punct",
                                "min_word_frequency": 2}
    listing = client.get("/runs/").content.decode()
    assert "character-level BPE" in listing and "<code>word_punct</code>, lowercased" in listing
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "character-level BPE" in page and "<code>word_punct</code>, lowercased" in page
    assert "fewer than 2 times dropped" in page and "<dt>Pattern</dt>" not in page
    again = re.search(r'href="(/runs/new/\?[^"]+)">Run again', page).group(1)
    form = client.get(again.replace("&amp;", "&")).context["form"]
    assert form.initial["algorithm"] == "char_bpe" and form.initial["split"] == "word_punct"
    assert form.initial["lowercase"] == "on" and "pattern" not in form.initial


@pytest.mark.parametrize("changes, field, message", [
    ({"special_tokens": "<s>"}, "special_tokens", "needs the unknown token '<unk>'"),
    ({"min_word_frequency": 0}, "min_word_frequency", "min word frequency must be an integer"),
    ({"split": "gpt2"}, "split", "Select a valid choice"),
])
def test_bad_char_parameters_show_beside_their_field_and_queue_nothing(client, registry_data,
                                                                       changes, field, message):
    client.force_login(registry_data["member"])
    response = client.post("/runs/new/", {**RUN, "algorithm": "char_bpe",
                                          "special_tokens": "<unk>", **changes})
    assert response.status_code == 400
    assert any(message in error for error in response.context["form"].errors[field])
    assert not TrainingRun.objects.filter(tokenizer__name="classic").exists()


def test_the_vocabulary_merges_and_tree_show_the_word_end(client, char_version):
    mark = '<span class="tok-wordend" title="end of word">&lt;/w&gt;</span>'
    vocab = client.get("/tokenizers/classic/1/vocab/?show=all").content.decode()
    assert mark in vocab and "Symbol" in vocab and "&lt;unk&gt;" in vocab
    assert "</w>" not in vocab.replace("&lt;/w&gt;", "")  # never markup
    merges = client.get("/tokenizers/classic/1/merges/").content.decode()
    assert mark in merges
    tokenizer = char_version.load_tokenizer()
    last = max(tokenizer.vocab)
    first_merge = char_version.vocab_size - char_version.merge_count
    assert f'href="/tokenizers/classic/1/tokens/{first_merge}/"' in merges
    tree = client.get(f"/tokenizers/classic/1/tokens/{last}/").content.decode()
    leaves = [t for t in tokenizer.symbols.values() if len(t.removesuffix("</w>")) == 1]
    assert tree.count("<li") >= 3 and any(leaf.removesuffix("</w>") in tree for leaf in leaves)


def test_the_playground_marks_unknown_characters(client, char_version, registry_data):
    page = client.post("/playground/", {"versions": "classic@1,prose-bpe@1",
                                        "text": "the 東京 fox"}).content.decode()
    assert len(re.findall(r'<span data-i="0" class="[a-z ]*\bu">', page)) == 2
    assert 'data-unknown="2"' in page
    assert "2 unknown tokens (<code>&lt;unk&gt;</code>)" in page
    assert "it encodes to the unknown token" in page


def test_compare_and_the_leaderboard_show_both_kinds(client, char_version, registry_data):
    page = client.get("/compare/?versions=classic@1,prose-bpe@1&corpus=held-out"
                      ).content.decode()
    assert "Unknown rate" in page and "Byte-fallback rate" in page
    board = client.get("/").content.decode()
    assert "character-level BPE" in board and "byte-level BPE" in board
    metrics = Evaluation.objects.get(version=char_version).metrics
    assert 0 <= metrics["unknown_rate"] < 1 and 0 < metrics["word_coverage"] < 1


@pytest.mark.parametrize("format", ["native", "hf", "gpt2", "subword-nmt"])
def test_the_version_page_offers_the_downloads_that_hold_it(client, char_version, format):
    page = client.get("/tokenizers/classic/1/").content.decode()
    symbols = char_version.vocab_size - char_version.merge_count - 1
    assert f"character-level BPE: 300 tokens, 1 special, {symbols} characters (the alphabet), " \
           f"{char_version.merge_count} merges." in page
    assert "Unknown rate" in page and "subword-nmt apply-bpe -c classic-subword-nmt/codes.txt" \
        in page
    assert f"/tokenizers/classic/1/download/{format}/" in page
    assert "/download/tiktoken/" not in page and "/download/minbpe/" not in page
    assert client.get(f"/tokenizers/classic/1/download/{format}/").status_code == 200
    refused = client.get("/tokenizers/classic/1/download/tiktoken/")
    assert refused.status_code == 400
    assert "download it as one of native, hf, gpt2, subword-nmt" in refused.content.decode()


def test_the_admin_shows_a_char_version_and_its_run(client, char_version, registry_data):
    client.force_login(registry_data["staff"])
    for url in [f"/admin/tokenizers_app/tokenizerversion/{char_version.pk}/change/",
                "/admin/tokenizers_app/tokenizerversion/",
                f"/admin/tokenizers_app/trainingrun/{char_version.training_run_id}/change/",
                "/admin/tokenizers_app/trainingrun/"]:
        assert client.get(url).status_code == 200, url


def test_verify_finds_a_char_version_whose_rows_changed(char_version):
    from tokenizers_app.models import VocabEntry
    from tokenizers_app.services.integrity import damaged_versions

    assert [label for label, _ in damaged_versions()] == []
    VocabEntry.objects.filter(version=char_version, token_id=5).update(token=b"zz</w>")
    found = dict(damaged_versions())
    assert "classic@1" in found and "damaged version classic@1" in found["classic@1"]
