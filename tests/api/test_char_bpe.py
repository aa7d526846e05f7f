"""Character-level BPE over HTTP: a run started with its own fields (the other algorithm's a 400
naming it, a field no run takes a 422), its version's encode endpoint against Hugging Face
``tokenizers`` loading the download, imports of its downloads, and the formats that cannot hold
it."""

import io
import json
import zipfile

import pytest
import tokenizers

from tests.api.conftest import bearer
from tests.registry.helpers import train
from tokenizers_app.models import TokenizerVersion, TrainingRun

pytestmark = pytest.mark.django_db


def post_json(client, url, body, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


RUN = {"tokenizer": "classic", "corpora": ["prose"], "vocab_size": 300}


def test_a_char_run_over_the_api(client, registry):
    response = post_json(client, "/api/runs", {**RUN, "algorithm": "char_bpe", "lowercase": True,
                                               "split": "word_punct", "min_word_frequency": 2},
                         **bearer(registry["member_key"]))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["algorithm"], body["lowercase"], body["split"], body["min_word_frequency"],
            body["special_tokens"], body["pattern"]) == ("char_bpe", True, "word_punct", 2,
                                                         ["<unk>"], "")
    run = TrainingRun.objects.get(pk=body["id"])
    assert run.algorithm == "char_bpe" and run.char_options["lowercase"] is True
    byte = post_json(client, "/api/runs", {**RUN, "tokenizer": "b"},
                     **bearer(registry["member_key"])).json()
    assert (byte["algorithm"], byte["pattern"], byte["lowercase"], byte["split"]) == \
        ("byte_bpe", "gpt2", None, None)


@pytest.mark.parametrize("extra, field", [
    ({"algorithm": "char_bpe", "pattern": "gpt2"}, "pattern"),
    ({"lowercase": False}, "lowercase"),
    ({"algorithm": "byte_bpe", "min_word_frequency": 1}, "min_word_frequency"),
    ({"algorithm": "char_bpe", "special_tokens": ["<s>"]}, "special_tokens"),
    ({"algorithm": "char_bpe", "min_word_frequency": 0}, "min_word_frequency"),
])
def test_a_field_that_does_not_apply_or_a_bad_char_parameter_is_a_400(client, registry, extra,
                                                                      field):
    response = post_json(client, "/api/runs", {**RUN, **extra}, **bearer(registry["member_key"]))
    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        field.replace("_", " ") if field == "min_word_frequency" and "algorithm" in extra
        and extra["algorithm"] == "char_bpe" else field if field != "special_tokens"
        else "character-level BPE needs the unknown token '<unk>'")
    assert not TrainingRun.objects.filter(tokenizer__name="classic").exists()


def test_an_unknown_split_is_a_422(client, registry):
    response = post_json(client, "/api/runs", {**RUN, "algorithm": "char_bpe", "split": "gpt2"},
                         **bearer(registry["member_key"]))
    assert response.status_code == 422 and response.json()["detail"][0]["loc"][-1] == "split"


@pytest.mark.parametrize("url, body", [
    ("/api/runs", {**RUN, "algoritm": "char_bpe"}),
    ("/api/tokenizers/prose-bpe/versions/1/encode", {"text": "hi", "allowed": "all"}),
    ("/api/tokenizers/prose-bpe/versions/1/evaluate", {"corpus": "held-out", "now": True}),
])
def test_an_unknown_field_in_any_body_is_a_422_naming_it(client, registry, url, body):
    response = post_json(client, url, body, **bearer(registry["staff_key"]))
    assert response.status_code == 422, response.content
    [problem] = response.json()["detail"]
    assert problem["type"] == "extra_forbidden" and problem["loc"][-1] in body
    assert problem["loc"][-1] in ("algoritm", "allowed", "now")


def test_an_unknown_alias_field_and_an_unknown_import_form_field_are_422(client, registry):
    key = bearer(registry["staff_key"])
    response = client.put("/api/tokenizers/prose-bpe/aliases/production",
                          '{"version": 1, "force": true}', content_type="application/json", **key)
    assert response.status_code == 422 and response.json()["detail"][0]["loc"][-1] == "force"
    upload = io.BytesIO(b"{}")
    upload.name = "tokenizer.json"
    response = client.post("/api/tokenizers/x/import", {"files": upload, "formt": "hf"}, **key)
    assert response.status_code == 422
    assert response.json()["detail"] == [{"type": "extra_forbidden", "loc": ["form", "formt"],
                                           "msg": "Extra inputs are not permitted"}]


def downloaded(response) -> bytes:
    return b"".join(response.streaming_content)


@pytest.fixture
def char_version(registry):
    return train(registry["corpus"], "classic", vocab_size=300, algorithm="char_bpe",
                 special_tokens=["<unk>", "<|endoftext|>"]).versions.get()


def test_the_encode_endpoint_gives_hugging_faces_ids_on_the_hf_download(client, registry,
                                                                        char_version):
    data = downloaded(client.get("/api/tokenizers/classic/versions/1/download?format=hf"))
    theirs = tokenizers.Tokenizer.from_str(data.decode())
    for text in ["The quick, brown fox.", "  naïve  café 東京 🍕 ", "x<|endoftext|>y z", ""]:
        encoded = post_json(client, "/api/tokenizers/classic/versions/1/encode",
                            {"text": text, "allowed_special": "all"}).json()
        assert encoded["ids"] == theirs.encode(text, add_special_tokens=False).ids, text
        data = text.encode()
        spelled = [data[start:end].decode() for start, end in encoded["spans"]]
        assert [t.removesuffix("</w>") if t != "<unk>" else s
                for t, s in zip(encoded["tokens"], spelled)] == spelled
    unknown = post_json(client, "/api/tokenizers/classic/versions/1/encode",
                        {"text": "東"}).json()
    assert unknown["tokens"] == ["<unk>"] and unknown["spans"] == [[0, 3]]
    refused = post_json(client, "/api/tokenizers/classic/versions/1/encode",
                        {"text": "a<|endoftext|>"})
    assert refused.status_code == 400 and "<|endoftext|>" in refused.json()["detail"]


@pytest.mark.parametrize("format", ["native", "hf", "gpt2", "subword-nmt"])
def test_each_char_download_imports_back_over_the_api(client, registry, char_version, format):
    response = client.get(f"/api/tokenizers/classic/versions/1/download?format={format}")
    assert response.status_code == 200
    data = downloaded(response)
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            files = {name.rsplit("/", 1)[-1]: archive.read(name) for name in archive.namelist()}
    else:
        files = {"tokenizer.json": data}
    uploads = []
    for name, data in files.items():
        upload = io.BytesIO(data)
        upload.name = name
        uploads.append(upload)
    imported = client.post("/api/tokenizers/classic-copy/import", {"files": uploads},
                           **bearer(registry["member_key"]))
    assert imported.status_code == 201, imported.json()
    body = imported.json()
    assert body["algorithm"] == "char_bpe" and body["digest"] == char_version.digest
    assert body["options"] == {"lowercase": False, "unk_token": "<unk>",
                               "end_of_word_suffix": "</w>"}
    assert TokenizerVersion.objects.get(tokenizer__name="classic-copy").load_tokenizer().vocab \
        == char_version.load_tokenizer().vocab


@pytest.mark.parametrize("format", ["tiktoken", "minbpe", "transformers"])
def test_a_format_that_cannot_hold_char_bpe_is_a_400_naming_those_that_can(client, registry,
                                                                           char_version, format):
    response = client.get(f"/api/tokenizers/classic/versions/1/download?format={format}")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        f"the {format} format cannot hold character-level BPE; download it as one of native, "
        f"hf, gpt2, subword-nmt")


def test_an_unknown_upload_field_is_a_422_and_keeps_nothing(client, registry, settings):
    from pathlib import Path

    from tokenizers_app.models import Corpus

    before = sorted(p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file())
    upload = io.BytesIO(b"some text to keep\n")
    upload.name = "web.txt"
    response = client.post("/api/corpora", {"name": "x", "file": upload, "evaluate": "true"},
                           **bearer(registry["member_key"]))
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["form", "evaluate"]
    assert not Corpus.objects.filter(name="x").exists()
    assert sorted(p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()) == before
