"""The pages with versions of every kind side by side: byte-level BPE trained here, and the
``hf`` and ``sentencepiece`` kinds imported; a page never branches on the kind, it labels it."""

import re
from unittest import mock

import pytest

from tests.engines.test_engines import KINDS, library
from tokenizers_app.services.evaluations import evaluate_version
from tokenizers_app.services.versions import import_tokenizer

MIXED = ("llama-bpe", "bert-wordpiece", "sentencepiece-bpe")
CJK_TEXT = "Tokenizers meet 東京 and 🍕 in   code:\n\tx = 1\n"


@pytest.fixture
def mixed(registry_data):
    with mock.patch("celery.app.task.Task.apply_async"):
        versions = {kind: import_tokenizer(files=KINDS[kind](), tokenizer_name=kind)
                    for kind in MIXED}
    for version in versions.values():
        evaluate_version(version=version, corpus=registry_data["held_out"])
    return {**registry_data, **versions}


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


def test_the_leaderboard_shows_every_kind_with_its_label(client, mixed):
    html = get(client, "/")
    for kind in MIXED:
        assert kind in html
    assert "Hugging Face tokenizer.json" in html and "SentencePiece model" in html


def test_compare_mixes_kinds_and_shows_their_rates(client, mixed):
    html = get(client, "/compare/?versions=prose-bpe@1,llama-bpe@1,bert-wordpiece@1,"
                       "sentencepiece-bpe@1")
    assert "Unknown rate" in html and "Byte-fallback rate" in html
    assert "n/a" in html  # byte-level BPE has no unknown rate, WordPiece no byte fallback
    assert "its normalizer lowercases and strips accents" in html  # why BERT is lossy
    assert "a word WordPiece cannot spell is one [UNK]" in html


def test_the_playground_counts_each_kind_as_its_library_does(client, mixed):
    response = client.post("/playground/", {"versions": "llama-bpe@1,bert-wordpiece@1,"
                                                        "sentencepiece-bpe@1,prose-bpe@1",
                                            "text": CJK_TEXT})
    assert response.status_code == 200
    html = response.content.decode()
    for kind in MIXED:
        encode, _ = library(kind)
        assert f"{len(encode(CJK_TEXT))} tokens" in html, kind


@pytest.mark.parametrize("kind", MIXED)
def test_version_vocabulary_and_token_pages_of_each_kind(client, mixed, kind):
    html = get(client, f"/tokenizers/{kind}/1/")
    assert kind in html and "What the numbers mean for each kind" in html
    library_name = "sentencepiece" if kind.startswith("sentencepiece") else "Hugging Face"
    assert library_name in html and "tiktoken</summary>" not in html
    get(client, f"/tokenizers/{kind}/1/vocab/?q=%E2%96%81")  # "▁"
    get(client, f"/tokenizers/{kind}/1/tokens/10/")


def test_the_merge_tree_of_a_hugging_face_bpe_token(client, mixed):
    version = mixed["llama-bpe"]
    engine = version.cached_tokenizer()
    token_id = max(engine.vocab, key=lambda i: len(engine.vocab[i]) * (i not in
                                                                          engine.special_ids.values()))
    html = get(client, f"/tokenizers/llama-bpe/1/tokens/{token_id}/")
    assert "rank" in html
    get(client, "/tokenizers/llama-bpe/1/merges/?q=e")


def test_the_admin_the_api_and_the_commands_read_an_engine_version(client, mixed):
    import io

    from django.core.management import call_command

    client.force_login(mixed["staff"])
    version = mixed["sentencepiece-bpe"]
    get(client, f"/admin/tokenizers_app/tokenizerversion/{version.pk}/change/")
    get(client, "/admin/tokenizers_app/tokenizerversion/")
    detail = client.get("/api/tokenizers/bert-wordpiece/versions/1").json()
    assert detail["algorithm"] == "hf" and detail["pattern"].startswith("WordPiece")
    out = io.StringIO()
    call_command("encode", "llama-bpe@1", "--text", "Hello 東京", stdout=out)
    encode, _ = library("llama-bpe")
    assert out.getvalue().splitlines()[0] == " ".join(map(str, encode("Hello 東京")))
    shown = io.StringIO()
    call_command("show", "bert-wordpiece@1", stdout=shown)
    assert "bert-wordpiece@1" in shown.getvalue()


def test_the_playground_says_which_character_a_unigram_without_unknown_cannot_spell(
        client, registry_data):
    from tests.engines.trained import unigram_without_unk_json
    import_tokenizer(files={"tokenizer.json": unigram_without_unk_json()},
                     tokenizer_name="no-unk")
    response = client.post("/playground/", {"versions": "no-unk@1", "text": "the price: 5€"})
    assert response.status_code == 422
    assert "cannot encode 1 character of the text, first &#x27;€&#x27; (U+20AC) at character " \
           "12" in response.content.decode()


def _longest(version) -> int:
    """The id of the version's longest ordinary token (one that merges make, where they do)."""
    tokenizer = version.cached_tokenizer()
    leaves = set(tokenizer.special_ids.values()) | set(getattr(tokenizer, "byte_ids", ()))
    return max((i for i in tokenizer.vocab if i not in leaves and i != tokenizer.unk_id),
               key=lambda i: (len(tokenizer.vocab[i]), -i))


def test_each_kind_is_described_by_what_it_is(client, mixed):
    """Version, vocabulary, merge table and token pages of a WordPiece, a SentencePiece BPE
    and Unigram, a character-level and a byte-level version say what each holds."""
    from tests.engines.trained import sentencepiece_model
    from tokenizers_app.engines import describe
    import_tokenizer(files={"u.model": sentencepiece_model("unigram")},
                     tokenizer_name="sentencepiece-unigram")

    bert = get(client, "/tokenizers/bert-wordpiece/1/")
    wordpiece = describe(mixed["bert-wordpiece"].cached_tokenizer())
    assert f"Hugging Face WordPiece: {mixed['bert-wordpiece'].vocab_size} tokens, 4 special, " \
           f"1 unknown ([UNK]), {wordpiece.holds[2]}, {wordpiece.holds[3]}." in bert
    assert "## continuations" in wordpiece.holds[3] and "256 bytes" not in bert
    assert "WordPiece has no merges" in bert
    assert "tiktoken:" not in bert and "hf: tokenizer.json for Hugging Face tokenizers" in bert
    assert "the 256 bytes" not in get(client, "/tokenizers/bert-wordpiece/1/vocab/")
    merges = get(client, "/tokenizers/bert-wordpiece/1/merges/")
    assert "is Hugging Face WordPiece: WordPiece has no merges" in merges
    token = get(client, f"/tokenizers/bert-wordpiece/1/tokens/{_longest(mixed['bert-wordpiece'])}/")
    assert "A Hugging Face WordPiece piece. WordPiece has no merges" in token
    assert "down to bytes" not in token and "Not made by a merge" not in token

    spm = mixed["sentencepiece-bpe"]
    page = get(client, "/tokenizers/sentencepiece-bpe/1/")
    assert f"{spm.merge_count:,} merges" in page and spm.merge_count > 100
    assert "read from its pieces and scores" in page and "256 byte pieces (&lt;0xNN&gt;)" in page
    assert "sentencepiece: the .model" in page and "hf:" not in page
    token = get(client, f"/tokenizers/sentencepiece-bpe/1/tokens/{_longest(spm)}/")
    assert "Made by merge rank" in token and "(counts not recorded)" in token
    assert "How it was built, down to pieces" in token
    merges = get(client, "/tokenizers/sentencepiece-bpe/1/merges/")
    assert f"{spm.merge_count:,} merges" in merges or f"{spm.merge_count} merges" in merges

    unigram = get(client, "/tokenizers/sentencepiece-unigram/1/")
    assert "SentencePiece Unigram" in unigram and "Unigram has no merges" in unigram

    byte_level = get(client, "/tokenizers/prose-bpe/1/")
    assert "byte-level BPE: " in byte_level and ", 256 bytes, " in byte_level
    assert "tiktoken: rank file + sidecar JSON" in byte_level and "sentencepiece:" not in \
        byte_level
    assert "How it was built, down to bytes" in get(client, f"/tokenizers/prose-bpe/1/tokens/"
                                                          f"{_longest(mixed['small'])}/")


def test_the_playground_names_a_wordpieces_unknown_token(client, mixed):
    response = client.post("/playground/", {"versions": "bert-wordpiece@1",
                                            "text": "snow ☃☃ here"})
    html = response.content.decode()
    assert response.status_code == 200 and "unknown token" in html
    assert "(<code>[UNK]</code>)" in html and "(None)" not in html
