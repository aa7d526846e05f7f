"""Every format downloaded over HTTP loads in its peer and gives the ids of our encode endpoint;
downloads are byte-identical, carry their sha256 as ETag, and answer 304 when unchanged."""

import base64
import gzip
import hashlib
import io
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from tokenizers_app.api.tokenizers import EncodeIn
from tokenizers_app.bpe.display import token_text
from tokenizers_app.bpe.formats import loads_tokenizer

pytestmark = pytest.mark.django_db

TEXTS = {"prose": "The registry keeps every version; compression is bytes per token.\n",
         "code": "def encode(self, text):\n    return [t for t in text]  # ids\n\n",
         "cjk": "字节对编码是一种压缩算法。バイト対符号化。한국어 텍스트.",
         "emoji": "ship it 🚀🚀 👍🏽 👨‍👩‍👧 ✨"}
URL = "/api/tokenizers/prose-bpe/versions/2"


def fetch(client, format: str) -> tuple[dict[str, bytes], bytes]:
    response = client.get(f"{URL}/download", {"format": format})
    assert response.status_code == 200, response.getvalue()[:500]
    data = response.getvalue()
    if response["Content-Disposition"].endswith('.zip"'):
        archive = zipfile.ZipFile(io.BytesIO(data))
        return {name.split("/")[-1]: archive.read(name) for name in archive.namelist()}, data
    return {response["Content-Disposition"].split('"')[1]: data}, data


def our_ids(client, text: str) -> list[int]:
    response = client.post(f"{URL}/encode", json.dumps({"text": text}),
                           content_type="application/json")
    assert response.status_code == 200, response.getvalue()
    return response.json()["ids"]


def test_hf_tokenizer_json_loads_in_hugging_face_tokenizers(client, registry):
    from tokenizers import Tokenizer

    files, _ = fetch(client, "hf")
    peer = Tokenizer.from_str(files["tokenizer.json"].decode())
    for text in TEXTS.values():
        assert peer.encode(text, add_special_tokens=False).ids == our_ids(client, text)


def test_tiktoken_files_load_in_tiktoken(client, registry):
    import tiktoken

    files, _ = fetch(client, "tiktoken")
    sidecar = json.loads(files["prose-bpe.json"])
    ranks = {base64.b64decode(token): int(rank) for token, rank in
             (line.split() for line in files["prose-bpe.tiktoken"].decode().splitlines())}
    peer = tiktoken.Encoding("prose-bpe", pat_str=sidecar["pat_str"], mergeable_ranks=ranks,
                             special_tokens=sidecar["special_tokens"],
                             explicit_n_vocab=sidecar["explicit_n_vocab"])
    for text in TEXTS.values():
        assert peer.encode_ordinary(text) == our_ids(client, text)


def test_the_transformers_folder_loads_in_autotokenizer(client, registry, tmp_path):
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    from transformers import AutoTokenizer

    files, _ = fetch(client, "transformers")
    assert set(files) == {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    peer = AutoTokenizer.from_pretrained(str(tmp_path))
    for text in TEXTS.values():
        assert peer.encode(text, add_special_tokens=False) == our_ids(client, text)


def test_gpt2_files_load_in_hugging_face_tokenizers_bpe(client, registry, tmp_path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    files, _ = fetch(client, "gpt2")
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    peer = Tokenizer(models.BPE.from_file(str(tmp_path / "vocab.json"),
                                          str(tmp_path / "merges.txt")))
    peer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    peer.decoder = decoders.ByteLevel()
    for text in TEXTS.values():
        assert peer.encode(text, add_special_tokens=False).ids == our_ids(client, text)


@pytest.mark.parametrize("format", ["native", "minbpe"])
def test_native_and_minbpe_files_give_the_same_tokens(client, registry, format):
    files, _ = fetch(client, format)
    loaded, vocab = loads_tokenizer(files), registry["large"].load_tokenizer().vocab
    for text in TEXTS.values():
        assert [loaded.vocab[i] for i in loaded.encode_ordinary(text)] == \
            [vocab[i] for i in our_ids(client, text)]


@pytest.mark.parametrize("format", ["hf", "gpt2", "tiktoken", "minbpe", "native", "transformers"])
def test_downloads_are_byte_identical_with_their_sha256_as_etag_and_304(client, registry,
                                                                        format):
    first = client.get(f"{URL}/download", {"format": format})
    again = client.get(f"{URL}/download", {"format": format})
    data = first.getvalue()
    assert data and data == again.getvalue()
    assert first["ETag"] == f'"{hashlib.sha256(data).hexdigest()}"' == again["ETag"]
    assert first["Content-Disposition"].startswith("attachment; filename=")
    unchanged = client.get(f"{URL}/download", {"format": format},
                           HTTP_IF_NONE_MATCH=first["ETag"])
    assert unchanged.status_code == 304 and unchanged.getvalue() == b""


def test_encode_answers_tokens_and_spans_and_refuses_what_tiktoken_refuses(client, registry,
                                                                          settings):
    response = client.post(f"{URL}/encode", json.dumps({"text": "Hi <|endoftext|>",
                                                        "allowed_special": "all"}),
                           content_type="application/json").json()
    assert response["ids"][-1] == 0 and response["tokens"][-1] == "<|endoftext|>"
    spans = response["spans"]
    assert spans[0][0] == 0 and spans[-1] == [3, 16]  # the special token is bytes 3 to 16
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    refused = client.post(f"{URL}/encode", json.dumps({"text": "Hi <|endoftext|>"}),
                          content_type="application/json")
    assert refused.status_code == 400 and "not allowed" in refused.json()["detail"]
    surrogate = client.post(f"{URL}/encode", '{"text": "a\\ud800b"}',
                            content_type="application/json")
    assert surrogate.status_code == 400 and "lone surrogate" in surrogate.json()["detail"]
    settings.API_ENCODE_MAX_CHARS = 1000
    capped = client.post(f"{URL}/encode", json.dumps({"text": "a" * 1001}),
                         content_type="application/json")
    assert capped.status_code == 413 and "API_ENCODE_MAX_CHARS" in capped.json()["detail"]


def test_encode_takes_disallowed_special_as_tiktoken_does(client, registry):
    """``"disallowed_special": []`` encodes special-token text as plain text: the ids of
    ``encode_ordinary``; the refusal names that field, which the endpoint has."""
    text = "Hi <|endoftext|> there"
    ordinary = registry["large"].cached_tokenizer().encode_ordinary(text)

    def encode(**fields):
        return client.post(f"{URL}/encode", json.dumps({"text": text, **fields}),
                           content_type="application/json")

    plain = encode(disallowed_special=[])
    assert plain.status_code == 200 and plain.json()["ids"] == ordinary
    assert 0 not in ordinary and plain.json()["spans"][-1][1] == len(text.encode())
    special = encode(allowed_special="all", disallowed_special=[]).json()["ids"]
    assert 0 in special and special != ordinary
    refused = encode()
    assert refused.status_code == 400 and "disallowed_special" in refused.json()["detail"]
    assert set(EncodeIn.model_fields) >= {"allowed_special", "disallowed_special"}
    assert encode(disallowed_special="all").status_code == 400
    assert encode(disallowed_special=["<|endoftext|>"]).status_code == 400
    assert encode(disallowed_special=["there"]).status_code == 400  # tiktoken's meaning


def test_encode_caps_the_special_lists_it_is_sent_in_words(client, registry):
    """allowed_special / disallowed_special hold at most the version's special tokens and 64
    other strings of 4,096 characters in all: 200,000 strings (a 2.5 MB body) are refused before
    any text is searched for them, with a 413 that says so."""

    def encode(**fields):
        return client.post(f"{URL}/encode", json.dumps({"text": "hello", **fields}),
                           content_type="application/json")

    many = encode(disallowed_special=[f"<x{i}>" for i in range(200_000)])
    assert many.status_code == 413
    assert many.json()["detail"] == ("disallowed_special holds 200,000 strings; this tokenizer "
                                     "takes at most 65 (its 1 special tokens and 64 others)")
    allowed = encode(allowed_special=["<|endoftext|>"] * 66)
    assert allowed.status_code == 413 and allowed.json()["detail"].startswith(
        "allowed_special holds 66 strings")
    long = encode(disallowed_special=["x" * 2_000, "y" * 2_000, "z" * 100])
    assert long.status_code == 413 and long.json()["detail"] == (
        "disallowed_special holds 4,100 characters of strings that are not special tokens of "
        "this tokenizer; it takes at most 4,096")
    fits = encode(disallowed_special=["<|endoftext|>"] + [f"<x{i}>" for i in range(64)])
    assert fits.status_code == 200
    assert encode(allowed_special="all", disallowed_special="all").status_code == 200


def test_encode_answers_from_the_version_table_what_each_token_gives_alone(client, registry):
    """The texts kept per loaded version equal ``token_text`` of every id (special tokens and
    bytes that are not UTF-8 included), and the answer equals the one built token by token."""
    version = registry["large"]
    tokenizer = version.cached_tokenizer()
    assert tokenizer is version.cached_tokenizer()
    shown = {i: token_text(token) for i, token in tokenizer.vocab.items()}
    assert {i: tokenizer.token_table.texts[i] for i in tokenizer.vocab} == shown
    assert shown[0] == "<|endoftext|>" and "<0xFF>" in shown.values()
    text = "Hi <|endoftext|> 字节对编码 🙂\n\t\xff"
    response = client.post(f"{URL}/encode", json.dumps({"text": text, "allowed_special": "all"}),
                           content_type="application/json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json; " \
                                                                       "charset=utf-8"
    ids = tokenizer.encode(text, allowed_special="all")
    offsets = [0]
    for token_id in ids:
        offsets.append(offsets[-1] + len(tokenizer.vocab[token_id]))
    assert response.json() == {"ids": ids, "tokens": [shown[i] for i in ids],
                               "spans": [list(pair) for pair in zip(offsets, offsets[1:])]}
    assert offsets[-1] == len(text.encode())


def test_a_client_that_accepts_gzip_gets_the_same_bytes_gzipped_with_a_weak_etag(client,
                                                                                  registry):
    plain = client.get(f"{URL}/download", {"format": "hf"})
    data = plain.getvalue()
    packed = client.get(f"{URL}/download", {"format": "hf"}, HTTP_ACCEPT_ENCODING="gzip, br")
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    body = packed.getvalue()
    assert gzip.decompress(body) == data and len(body) < len(data) / 2
    assert packed["ETag"] == f'W/"{hashlib.sha256(data).hexdigest()}"'
    assert client.get(f"{URL}/download", {"format": "hf"},
                      HTTP_ACCEPT_ENCODING="gzip;q=0").getvalue() == data
    for etag in (plain["ETag"], packed["ETag"]):
        assert client.get(f"{URL}/download", {"format": "hf"}, HTTP_ACCEPT_ENCODING="gzip",
                          HTTP_IF_NONE_MATCH=etag).status_code == 304


class FileWrapper:
    """A WSGI server's ``wsgi.file_wrapper`` (gunicorn's sends the file with sendfile)."""

    def __init__(self, filelike, block_size=8192):
        self.filelike = filelike

    def close(self):
        self.filelike.close()


@pytest.mark.parametrize("accept_encoding", ["", "gzip"])
def test_a_download_reaches_the_server_as_its_open_file_for_sendfile(client, registry,
                                                                     accept_encoding):
    """Through Django's WSGI handler and every middleware, the artifact is handed to the
    server's ``wsgi.file_wrapper`` as the cached file itself: no byte is copied through Python."""
    from django.core import signals
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import close_old_connections

    expected = client.get(f"{URL}/download", {"format": "hf"},
                          HTTP_ACCEPT_ENCODING=accept_encoding).getvalue()
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": f"{URL}/download",
               "QUERY_STRING": "format=hf", "SERVER_NAME": "testserver", "SERVER_PORT": "80",
               "HTTP_HOST": "testserver", "HTTP_ACCEPT_ENCODING": accept_encoding,
               "REMOTE_ADDR": "127.0.0.1", "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr,
               "wsgi.url_scheme": "http", "wsgi.file_wrapper": FileWrapper}
    answer = {}
    for signal in (signals.request_started, signals.request_finished):  # keep the test's
        signal.disconnect(close_old_connections)                        # transaction open
    try:
        sent = WSGIHandler()(environ, lambda status, headers: answer.update(status=status,
                                                                             headers=headers))
    finally:
        for signal in (signals.request_started, signals.request_finished):
            signal.connect(close_old_connections)
    assert answer["status"] == "200 OK" and isinstance(sent, FileWrapper)
    assert ("Content-Length", str(len(expected))) in answer["headers"]
    with sent.filelike as file:
        assert Path(file.name).is_file() and file.fileno() >= 0 and file.read() == expected


def test_a_pathological_text_is_refused_at_once_or_answered(client, registry):
    huge = client.post(f"{URL}/encode", json.dumps({"text": "a" * 1_000_000}),
                       content_type="application/json")
    assert huge.status_code == 413 and "at most 200000" in huge.json()["detail"]
    # the longest text taken is one pre-token of 200,000 bytes: answered, and exact
    longest = client.post(f"{URL}/encode", json.dumps({"text": "a" * 200_000}),
                          content_type="application/json")
    assert longest.status_code == 200
    assert "".join(longest.json()["tokens"]) == "a" * 200_000


HOLES = "/api/tokenizers/holes/versions/1"


def _import_holes(registry):
    """A bare rank file with cl100k_base's special tokens: ids 100257.. after a few hundred
    tokens, a hole of ~100k ids."""
    from tests.bpe.published import rank_file
    from tokenizers_app.services.versions import import_tokenizer

    core = registry["small"].load_tokenizer()
    version = import_tokenizer(files={"holes.tiktoken": rank_file(core)}, tokenizer_name="holes",
                               pattern="cl100k_base")
    assert max(version.load_tokenizer().vocab) == 100276 and version.vocab_size < 1000
    return version


@pytest.mark.parametrize("format", ["hf", "gpt2", "tiktoken", "minbpe", "native", "transformers"])
def test_every_download_of_a_version_with_holes_in_its_ids_loads_in_its_library(
        client, registry, tmp_path, format):
    import tiktoken.load
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    ours = _import_holes(registry).load_tokenizer()
    response = client.get(f"{HOLES}/download", {"format": format})
    assert response.status_code == 200, response.getvalue()[:500]
    data = response.getvalue()
    if response["Content-Disposition"].endswith('.zip"'):
        archive = zipfile.ZipFile(io.BytesIO(data))
        files = {name.split("/")[-1]: archive.read(name) for name in archive.namelist()}
    else:
        files = {response["Content-Disposition"].split('"')[1]: data}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    if format == "hf":
        peer = Tokenizer.from_str(files["tokenizer.json"].decode())
        encode = lambda text: peer.encode(text, add_special_tokens=False).ids  # noqa: E731
    elif format == "gpt2":
        peer = Tokenizer(models.BPE.from_file(str(tmp_path / "vocab.json"),
                                              str(tmp_path / "merges.txt")))
        peer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        peer.decoder = decoders.ByteLevel()
        encode = lambda text: peer.encode(text, add_special_tokens=False).ids  # noqa: E731
        # GPT-2's files hold no pattern: the library splits with GPT-2's
        ours = type(ours)(ours.vocab, ours.merges, ours.special_ids, "gpt2")
    elif format == "tiktoken":
        sidecar = json.loads(files["holes.json"])
        peer = tiktoken.Encoding("holes", pat_str=sidecar["pat_str"],
                                 mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                     str(tmp_path / "holes.tiktoken")),
                                 special_tokens=sidecar["special_tokens"],
                                 explicit_n_vocab=sidecar.get("explicit_n_vocab"))
        encode = peer.encode_ordinary
        assert peer.encode("<|endofprompt|>", allowed_special="all") == [100276]
    elif format == "transformers":
        os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        from transformers import AutoTokenizer
        peer = AutoTokenizer.from_pretrained(str(tmp_path))
        encode = lambda text: peer.encode(text, add_special_tokens=False)  # noqa: E731
    else:  # ours and minbpe's (which numbers ids its own way): the same tokens
        loaded = loads_tokenizer(files)
        for text in TEXTS.values():
            assert [loaded.vocab[i] for i in loaded.encode_ordinary(text)] == \
                [ours.vocab[i] for i in ours.encode_ordinary(text)]
        return
    for text in TEXTS.values():
        assert encode(text) == ours.encode_ordinary(text)


def test_a_version_with_holes_is_not_offered_as_tekken_and_says_why(client, registry):
    _import_holes(registry)
    refused = client.get(f"{HOLES}/download", {"format": "tekken"})
    assert refused.status_code == 400
    assert "cannot be written as tekken: it numbers special tokens first" in \
        refused.json()["detail"]
    page = client.get("/tokenizers/holes/1/").content.decode()
    assert "/download/tiktoken/" in page and "/download/tekken/" not in page
