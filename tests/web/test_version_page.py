"""The version page helps people use it (issue 19): snippets that run as written against this
version's real URLs, staff actions on the page, a vocabulary that starts at the learned tokens
and sorts by rank or length, and a searchable merge table."""

import contextlib
import html as entities
import io
import json
import re
import zipfile

import pytest

from tokenizers_app.models import Alias, AliasMove, MergeRule

pytestmark = pytest.mark.django_db

TEXT = "Hello, tokenizers!"


def page(client, url, status=200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.content[:2000]
    return response.content.decode()


def snippets(html: str) -> dict[str, str]:
    """The code of each snippet, by its summary's first word."""
    found = re.findall(r"<summary>(.*?)</summary>\s*<pre[^>]*><code>(.*?)</code></pre>", html,
                       re.S)
    return {re.sub(r"<[^>]+>", "", summary).split()[0]: entities.unescape(code)
            for summary, code in found}


def fetch(client, url: str, folder) -> None:
    """What the snippet's curl line does: the file at ``url`` into ``folder`` (unzipped)."""
    response = client.get(url.removeprefix("http://testserver"))
    assert response.status_code == 200
    data = b"".join(response.streaming_content)
    name = response["Content-Disposition"].split('filename="')[1].rstrip('"')
    if name.endswith(".zip"):
        zipfile.ZipFile(io.BytesIO(data)).extractall(folder)
    else:
        (folder / name).write_bytes(data)


def run_python(code: str, folder, monkeypatch) -> list[int]:
    monkeypatch.chdir(folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "snippet", "exec"), {})
    return json.loads(out.getvalue())


@pytest.mark.parametrize("library", ["Hugging", "transformers", "tiktoken"])
def test_each_python_snippet_runs_as_written_and_gives_the_registrys_ids(
        client, registry_data, tmp_path, monkeypatch, library):
    version = registry_data["large"]
    code = snippets(page(client, "/tokenizers/prose-bpe/2/"))[library]
    [url] = re.findall(r'curl -fLo \S+ "([^"]+)"', code)
    assert url.startswith("http://testserver/tokenizers/prose-bpe/2/download/")
    fetch(client, url, tmp_path)
    assert run_python(code, tmp_path, monkeypatch) == \
        version.load_tokenizer().encode_ordinary(TEXT)


def test_the_curl_snippet_posts_to_this_versions_encode_endpoint(client, registry_data):
    code = snippets(page(client, "/tokenizers/prose-bpe/2/"))["curl"]
    [body] = re.findall(r"-d '([^']+)'", code)
    [url] = re.findall(r'"(http://testserver/api/[^"]+)"', code)
    assert url == "http://testserver/api/tokenizers/prose-bpe/versions/2/encode"
    answer = client.post(url.removeprefix("http://testserver"), body,
                         content_type="application/json")
    assert answer.status_code == 200
    assert answer.json()["ids"] == registry_data["large"].load_tokenizer().encode_ordinary(TEXT)


def test_staff_move_an_alias_and_publish_from_the_version_page(client, registry_data):
    version = registry_data["large"]
    assert "Move the alias" not in page(client, "/tokenizers/prose-bpe/2/")  # anonymous
    client.force_login(registry_data["member"])
    assert "Move the alias" not in page(client, "/tokenizers/prose-bpe/2/")
    assert client.post("/tokenizers/prose-bpe/2/alias", {"alias": "production"}).status_code \
        == 403
    assert client.post("/tokenizers/prose-bpe/2/publish").status_code == 403
    client.force_login(registry_data["staff"])
    assert "Move the alias" in page(client, "/tokenizers/prose-bpe/2/")
    moved = client.post("/tokenizers/prose-bpe/2/alias", {"alias": "production"}, follow=True)
    assert "alias production now points at prose-bpe@2" in moved.content.decode()
    assert Alias.objects.get(name="production").version == version
    assert AliasMove.objects.filter(alias__name="production", to_version=version).exists()
    refused = client.post("/tokenizers/prose-bpe/2/alias", {"alias": "7"}, follow=True)
    assert "is not valid" in refused.content.decode()
    published = client.post("/tokenizers/prose-bpe/2/publish", follow=True)
    assert "prose-bpe@2 is published" in published.content.decode()
    version.refresh_from_db()
    assert version.lifecycle == "published"


def test_the_vocabulary_starts_at_the_learned_tokens(client, registry_data):
    version = registry_data["large"]
    first = 256 + len(version.special_tokens)
    html = page(client, "/tokenizers/prose-bpe/2/vocab/")
    learned = version.vocab_size - first
    assert f"{learned} learned tokens" in html
    ids = [int(i) for i in re.findall(r'/tokens/(\d+)/">', html)]
    assert ids[0] == first and ids == sorted(ids)
    every = page(client, "/tokenizers/prose-bpe/2/vocab/?show=all")
    assert f"{version.vocab_size} tokens" in every
    assert re.findall(r'/tokens/(\d+)/">', every)[0] == "0"


def test_the_vocabulary_sorts_by_length_longest_first(client, registry_data):
    tokenizer = registry_data["large"].load_tokenizer()
    html = page(client, "/tokenizers/prose-bpe/2/vocab/?sort=length")
    ids = [int(i) for i in re.findall(r'/tokens/(\d+)/">', html)]
    lengths = [len(tokenizer.vocab[i]) for i in ids]
    assert lengths == sorted(lengths, reverse=True)
    assert lengths[0] == max(len(t) for i, t in tokenizer.vocab.items() if i >= 257)
    assert 'sort=length&amp;page=2' in html  # the next page keeps the order


def test_the_merge_table_is_searchable(client, registry_data):
    version = registry_data["large"]
    expected = [m.rank for m in MergeRule.objects.filter(version=version).order_by("rank")
                if b"th" in m.result]
    assert expected
    html = page(client, "/tokenizers/prose-bpe/2/merges/?q=th")
    assert f'{len(expected)} merge{"s" if len(expected) != 1 else ""} whose result holds' in html
    ranks = [int(r) for r in re.findall(r'<tr><td class="num">(\d+)</td>', html)]
    assert ranks == expected[:100]


def test_a_vocabulary_search_looks_through_every_token(client, registry_data):
    html = page(client, "/tokenizers/prose-bpe/2/vocab/?q=endoftext")
    assert "&lt;|endoftext|&gt;" in html or "endoftext" in html.split("<tbody>")[1]
    assert "1 token containing" in html
    learned = page(client, "/tokenizers/prose-bpe/2/vocab/?q=endoftext&show=learned")
    assert "0 learned tokens containing" in learned
