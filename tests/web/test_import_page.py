"""``/tokenizers/import/``: tokenizer files become a version from the browser, as through the API
and ``manage.py import_tokenizer``; GPT-2 files get the pattern chosen, and the page says which."""

import io

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.engines.test_engines import KINDS, TEXTS, library

from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.models import Tokenizer, TokenizerVersion


def uploads(core, format):
    return [SimpleUploadedFile(name, data) for name, data in dumps_tokenizer(core, format).items()]


def said(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_the_page_asks_anonymous_visitors_to_sign_in(client):
    response = client.get("/tokenizers/import/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_gpt2_files_imported_in_the_browser_get_the_pattern_chosen_and_say_so(client,
                                                                              registry_data):
    client.force_login(registry_data["member"])
    core = registry_data["small"].load_tokenizer()
    page = client.get("/tokenizers/import/")
    assert page.status_code == 200 and b"Pattern and special tokens, for GPT-2 files and bare rank files" in page.content
    chosen = client.post("/tokenizers/import/", {"tokenizer": "from-gpt2", "pattern": "gpt4",
                                                 "files": uploads(core, "gpt2")})
    version = TokenizerVersion.objects.get(tokenizer__name="from-gpt2")
    assert chosen.status_code == 302 and chosen["Location"] == "/tokenizers/from-gpt2/1/"
    assert version.pattern == "gpt4"
    assert "splits text with gpt4, as given" in " ".join(said(chosen))
    assumed = client.post("/tokenizers/import/", {"tokenizer": "assumed",
                                                  "files": uploads(core, "gpt2")}, follow=True)
    assert b"splits text with gpt2, assumed" in assumed.content
    assert Tokenizer.objects.get(name="from-gpt2").owner == registry_data["member"]


def test_the_same_files_twice_say_the_version_was_already_here(client, registry_data):
    client.force_login(registry_data["member"])
    core = registry_data["small"].load_tokenizer()
    first = client.post("/tokenizers/import/", {"tokenizer": "twice",
                                                "files": uploads(core, "hf")})
    again = client.post("/tokenizers/import/", {"tokenizer": "twice",
                                                "files": uploads(core, "hf")})
    assert first.status_code == again.status_code == 302
    assert "twice@1 imported from tokenizer.json" in " ".join(said(first))
    assert "already here: no new version was made" in " ".join(said(again))
    assert TokenizerVersion.objects.filter(tokenizer__name="twice").count() == 1


def test_bad_imports_answer_beside_the_field_and_leave_no_row(client, registry_data):
    client.force_login(registry_data["member"])
    junk = client.post("/tokenizers/import/", {"tokenizer": "junk", "files": [
        SimpleUploadedFile("junk.txt", b"not a tokenizer")]})
    assert junk.status_code == 400 and b"cannot tell the tokenizer format" in junk.content
    none = client.post("/tokenizers/import/", {"tokenizer": "nothing"})
    assert none.status_code == 400 and b"choose the tokenizer&#x27;s files" in none.content
    core = registry_data["small"].load_tokenizer()
    named = client.post("/tokenizers/import/", {"tokenizer": "bad name!",
                                                "files": uploads(core, "hf")})
    assert named.status_code == 400 and b"is not valid" in named.content
    patterned = client.post("/tokenizers/import/", {"tokenizer": "p", "pattern": "gpt4",
                                                    "files": uploads(core, "hf")})
    assert patterned.status_code == 400
    assert b"a pattern is given only for GPT-2 files" in patterned.content
    custom = client.post("/tokenizers/import/", {"tokenizer": "c", "pattern": "custom",
                                                 "files": uploads(core, "gpt2")})
    assert custom.status_code == 400 and b"write the regex" in custom.content
    broken = client.post("/tokenizers/import/", {"tokenizer": "b", "pattern": "custom",
                                                 "custom_pattern": "(",
                                                 "files": uploads(core, "gpt2")})
    assert broken.status_code == 400 and b"does not compile" in broken.content
    assert not Tokenizer.objects.filter(name__in=["junk", "nothing", "p", "c", "b"]).exists()


def test_only_the_owner_or_staff_import_into_a_tokenizer(client, registry_data):
    core = registry_data["small"].load_tokenizer()
    client.force_login(registry_data["member"])
    refused = client.post("/tokenizers/import/", {"tokenizer": "prose-bpe",
                                                  "files": uploads(core, "hf")})
    assert refused.status_code == 403 and b"prose-bpe" in refused.content
    client.force_login(registry_data["staff"])
    assert client.post("/tokenizers/import/", {"tokenizer": "prose-bpe",
                                               "files": uploads(core, "hf")}).status_code == 302


def test_files_over_the_limit_are_refused_before_they_are_read(client, registry_data, settings):
    settings.TOKENIZER_IMPORT_MAX_BYTES = 1000
    client.force_login(registry_data["member"])
    response = client.post("/tokenizers/import/", {"tokenizer": "big", "files": [
        SimpleUploadedFile("tokenizer.json", b"x" * (3 << 20))]})
    assert response.status_code == 413 and b"TOKENIZER_IMPORT_MAX_BYTES" in response.content
    small = client.post("/tokenizers/import/", {"tokenizer": "big", "files": [
        SimpleUploadedFile("tokenizer.json", b"x" * 2000)]})
    assert small.status_code == 413 and b"TOKENIZER_IMPORT_MAX_BYTES" in small.content
    assert not Tokenizer.objects.filter(name="big").exists()


def test_tokenizer_pages_link_the_import_for_those_who_may(client, registry_data):
    client.force_login(registry_data["staff"])
    assert b"/tokenizers/import/?tokenizer=prose-bpe" in client.get("/tokenizers/prose-bpe/").content
    assert b'href="/tokenizers/import/"' in client.get("/tokenizers/").content
    client.force_login(registry_data["member"])
    assert b"/tokenizers/import/?tokenizer=" not in client.get("/tokenizers/prose-bpe/").content
    assert b'value="prose-bpe"' in client.get("/tokenizers/import/?tokenizer=prose-bpe").content


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_imports_through_the_page_and_encodes_as_its_library(client, registry_data,
                                                                        kind):
    client.force_login(registry_data["member"])
    files = [SimpleUploadedFile(name, data) for name, data in KINDS[kind]().items()]
    response = client.post("/tokenizers/import/", {"tokenizer": kind, "files": files})
    assert response.status_code == 302, response.content.decode()[:2000]
    version = TokenizerVersion.objects.get(tokenizer__name=kind)
    assert version.algorithm == ("sentencepiece" if kind.startswith("sentencepiece") else "hf")
    encode, _ = library(kind)
    text = TEXTS["prose"] + TEXTS["cjk"]
    assert version.cached_tokenizer().encode_ordinary(text) == encode(text)
    assert client.get(response["Location"]).status_code == 200


def test_a_sentencepiece_model_may_be_named_as_its_format(client, registry_data):
    client.force_login(registry_data["member"])
    [data] = KINDS["sentencepiece-bpe"]().values()
    response = client.post("/tokenizers/import/", {"tokenizer": "spm", "format": "sentencepiece",
                                                   "files": [SimpleUploadedFile("m.model", data)]})
    assert response.status_code == 302
    assert TokenizerVersion.objects.get(tokenizer__name="spm").algorithm == "sentencepiece"


def test_a_bare_rank_file_imports_in_the_browser_with_the_pattern_and_special_tokens_given(
        client, registry_data):
    from tests.bpe.published import rank_file
    client.force_login(registry_data["member"])
    core = registry_data["small"].load_tokenizer()
    data = rank_file(core)
    page = client.get("/tokenizers/import/")
    assert b"a published encoding's file alone" in page.content
    bare = [SimpleUploadedFile("web.tiktoken", data)]
    refused = client.post("/tokenizers/import/", {"tokenizer": "bare", "files": bare})
    assert refused.status_code == 400 and b"is a bare rank file" in refused.content
    bad = client.post("/tokenizers/import/", {"tokenizer": "bare", "pattern": "gpt4",
                                              "special_tokens": "[1]",
                                              "files": [SimpleUploadedFile("web.tiktoken", data)]})
    assert bad.status_code == 400 and b"must be a JSON object of ids" in bad.content
    top = max(core.vocab) + 1
    imported = client.post("/tokenizers/import/", {
        "tokenizer": "bare", "pattern": "gpt4", "special_tokens": f'{{"<|end|>": {top}}}',
        "files": [SimpleUploadedFile("web.tiktoken", data)]}, follow=True)
    version = TokenizerVersion.objects.get(tokenizer__name="bare")
    assert version.pattern == "gpt4" and version.special_tokens == ["<|end|>"]
    assert version.load_tokenizer().special_ids == {"<|end|>": top}
    assert b"splits text with gpt4 and has 1 special token, as given" in imported.content


def test_a_published_rank_file_is_recognised_and_its_page_says_so(client, registry_data):
    """GPT-2's vocabulary as tiktoken writes it is r50k_base.tiktoken: no pattern nor special
    tokens asked."""
    from tests.bpe.published import gpt2_rank_file
    client.force_login(registry_data["member"])
    imported = client.post("/tokenizers/import/", {
        "tokenizer": "r50k", "files": [SimpleUploadedFile("r50k_base.tiktoken",
                                                          gpt2_rank_file())]}, follow=True)
    version = TokenizerVersion.objects.get(tokenizer__name="r50k")
    assert version.pattern == "gpt2" and version.special_tokens == ["<|endoftext|>"]
    assert version.load_tokenizer().special_ids == {"<|endoftext|>": 50256}
    assert b"recognised as tiktoken&#x27;s r50k_base by its sha256: pattern gpt2 and 1 special " \
           b"token, as tiktoken has them" in imported.content
    page = client.get("/tokenizers/r50k/1/")
    assert b"recognised as tiktoken&#x27;s r50k_base" in page.content


def test_an_import_of_more_files_than_django_takes_is_a_413_in_words_not_a_csrf_page(
        client, registry_data):
    """Through the page as through the API (tests/api/test_bad_imports.py): the files of an
    import are capped by DATA_UPLOAD_MAX_NUMBER_FILES, and the answer says so."""
    client.force_login(registry_data["member"])
    streams = []
    for index in range(101):
        streams.append(io.BytesIO(b"x"))
        streams[-1].name = f"part-{index}.txt"
    answer = client.post("/tokenizers/import/", {"tokenizer": "many", "files": streams})
    assert answer.status_code == 413
    assert answer.content.decode() == ("the request holds more than 100 files (setting "
                                       "DATA_UPLOAD_MAX_NUMBER_FILES)")
    assert not Tokenizer.objects.filter(name="many").exists()
