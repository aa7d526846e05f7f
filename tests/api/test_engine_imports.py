"""The API and the command line with the kinds another library encodes: imports of every kind,
the encode endpoint (the text's ids alone, as ``add_special_tokens=False``), downloads."""

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from tests.api.conftest import bearer
from tests.engines.test_engines import KINDS, TEXTS, library
from tokenizers_app.models import TokenizerVersion

TEXT = "".join(TEXTS.values())


def upload(client, key, name: str, files: dict[str, bytes], **fields):
    streams = []
    for file_name, data in files.items():
        streams.append(io.BytesIO(data))
        streams[-1].name = file_name
    return client.post(f"/api/tokenizers/{name}/import", {"files": streams, **fields},
                       **bearer(key))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_imports_over_the_api_and_encodes_as_its_library(client, registry, kind):
    response = upload(client, registry["member_key"], kind, KINDS[kind]())
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["algorithm"] == ("sentencepiece" if kind.startswith("sentencepiece") else "hf")
    assert body["pattern_note"] is None
    again = upload(client, registry["member_key"], kind, KINDS[kind]())
    assert again.status_code == 201 and again.json()["number"] == 1  # the same content
    encode, _ = library(kind)
    for text in TEXTS.values():
        encoded = client.post(f"/api/tokenizers/{kind}/versions/1/encode", {"text": text},
                              content_type="application/json",
                              **bearer(registry["member_key"])).json()
        assert encoded["ids"] == encode(text)
        assert len(encoded["spans"]) == len(encoded["tokens"]) == len(encoded["ids"])
        data = text.encode()
        assert all(0 <= s <= e <= len(data) for s, e in encoded["spans"])


def test_downloads_of_an_engine_version_and_the_formats_it_refuses(client, registry):
    key = registry["member_key"]
    assert upload(client, key, "spm", KINDS["sentencepiece-unigram"]()).status_code == 201
    assert upload(client, key, "bert", KINDS["bert-wordpiece"]()).status_code == 201
    model = client.get("/api/tokenizers/spm/versions/1/download?format=sentencepiece",
                       **bearer(key))
    assert model.status_code == 200
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=b"".join(model.streaming_content))
    assert processor.encode(TEXT) == library("sentencepiece-unigram")[0](TEXT)
    refused = client.get("/api/tokenizers/spm/versions/1/download?format=hf", **bearer(key))
    assert refused.status_code == 400
    assert refused.json()["detail"] == ("a sentencepiece version downloads as sentencepiece; "
                                        "not hf")
    folder = client.get("/api/tokenizers/bert/versions/1/download?format=transformers",
                        **bearer(key))
    names = zipfile.ZipFile(io.BytesIO(b"".join(folder.streaming_content))).namelist()
    assert sorted(names) == ["bert-transformers/special_tokens_map.json",
                             "bert-transformers/tokenizer.json",
                             "bert-transformers/tokenizer_config.json"]
    gpt2 = client.get("/api/tokenizers/prose-bpe/versions/1/download?format=sentencepiece",
                      **bearer(key))
    assert gpt2.status_code == 400 and "downloads as native, hf" in gpt2.json()["detail"]


def test_a_file_nothing_reads_is_a_400_in_words_with_no_row(client, registry):
    refused = upload(client, registry["member_key"], "junk", {"x.model": b"\x0a\x03abc"})
    assert refused.status_code == 400
    assert "nor is any of them a tokenizer.json that Hugging Face tokenizers loads or a " \
           "SentencePiece model" in refused.json()["detail"]
    assert not TokenizerVersion.objects.filter(tokenizer__name="junk").exists()


def test_the_command_imports_a_sentencepiece_model_and_a_tokenizer_json(registry, tmp_path):
    (tmp_path / "spm.model").write_bytes(KINDS["sentencepiece-bpe"]()["spm.model"])
    (tmp_path / "llama").mkdir()
    (tmp_path / "llama" / "tokenizer.json").write_bytes(KINDS["llama-bpe"]()["tokenizer.json"])
    out = io.StringIO()
    call_command("import_tokenizer", str(tmp_path / "spm.model"), "--tokenizer", "spm",
                 stdout=out)
    call_command("import_tokenizer", str(tmp_path / "llama"), "--tokenizer", "llama",
                 "--format", "hf", stdout=out)
    assert "version spm@1" in out.getvalue() and "version llama@1" in out.getvalue()
    assert TokenizerVersion.objects.get(tokenizer__name="llama").algorithm == "hf"
    with pytest.raises(CommandError, match="SentencePiece"):
        call_command("import_tokenizer", str(tmp_path / "llama"), "--tokenizer", "x",
                     "--format", "sentencepiece", stdout=out)


def test_a_real_tekken_file_imports_encodes_as_mistral_common_and_downloads_as_tekken(
        client, registry, tmp_path):
    from tests.bpe.mistral import mistral_tokenizer, tekken_files

    path = tekken_files()[0]
    theirs = mistral_tokenizer(path)
    response = upload(client, registry["member_key"], "mistral", {"tekken.json":
                                                                  path.read_bytes()})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["algorithm"] == "byte_bpe" and body["vocab_size"] == theirs.n_words
    assert body["special_tokens"][:3] == ["<unk>", "<s>", "</s>"]
    for text in TEXTS.values():
        encoded = client.post("/api/tokenizers/mistral/versions/1/encode", {"text": text},
                              content_type="application/json",
                              **bearer(registry["member_key"])).json()
        assert encoded["ids"] == theirs.encode(text, bos=False, eos=False)
    download = client.get("/api/tokenizers/mistral/versions/1/download", {"format": "tekken"})
    assert download.status_code == 200
    (tmp_path / "tekken.json").write_bytes(download.getvalue())
    again = mistral_tokenizer(tmp_path / "tekken.json")
    assert again.encode(TEXT, bos=False, eos=False) == theirs.encode(TEXT, bos=False, eos=False)
    assert again.id_to_piece(999) == theirs.id_to_piece(999) == "<SPECIAL_999>"
    import tiktoken.load
    from tokenizers import Tokenizer
    hf = client.get("/api/tokenizers/mistral/versions/1/download", {"format": "hf"})
    peer = Tokenizer.from_str(hf.getvalue().decode())
    rank_files = zipfile.ZipFile(io.BytesIO(client.get(
        "/api/tokenizers/mistral/versions/1/download", {"format": "tiktoken"}).getvalue()))
    for name in rank_files.namelist():
        (tmp_path / name.split("/")[-1]).write_bytes(rank_files.read(name))
    sidecar = json.loads((tmp_path / "mistral.json").read_text())
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "mistral.tiktoken"))
    encoding = tiktoken.Encoding("mistral", pat_str=sidecar["pat_str"], mergeable_ranks=ranks,
                                 special_tokens=sidecar["special_tokens"],
                                 explicit_n_vocab=sidecar.get("explicit_n_vocab"))
    for text in TEXTS.values():
        expected = theirs.encode(text, bos=False, eos=False)
        assert peer.encode(text, add_special_tokens=False).ids == expected
        assert encoding.encode_ordinary(text) == expected


def test_a_unigram_without_an_unknown_token_answers_422_naming_the_character(client, registry):
    from tests.engines.trained import unigram_without_unk_json
    assert upload(client, registry["member_key"], "no-unk",
                  {"tokenizer.json": unigram_without_unk_json()}).status_code == 201
    url = "/api/tokenizers/no-unk/versions/1/encode"
    fine = client.post(url, {"text": "the text"}, content_type="application/json",
                       **bearer(registry["member_key"]))
    assert fine.status_code == 200
    refused = client.post(url, {"text": "the price: 5€"}, content_type="application/json",
                          **bearer(registry["member_key"]))
    assert refused.status_code == 422
    assert refused.json()["detail"] == (
        "this Unigram cannot encode 1 character of the text, first '€' (U+20AC) at character "
        "12: '€' (U+20AC). No piece of its vocabulary spells it and it has no unknown token to "
        "stand in")
