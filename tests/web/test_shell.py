"""The shell around the pages (issue 19): the favicon, the signed-in home, duplicate uploads,
GPT-2 imports' pattern, the admin's evaluation rows and the smaller wording fixes."""

import pytest

pytestmark = pytest.mark.django_db


def test_every_page_links_a_favicon_that_is_served(client):
    html = client.get("/").content.decode()
    assert 'rel="icon" href="/static/tokenizers_app/favicon.svg"' in html
    answer = client.get("/favicon.ico")
    assert answer.status_code == 302 and answer["Location"].endswith("tokenizers_app/favicon.svg")
    assert client.get(answer["Location"]).status_code == 200


def test_a_duplicate_upload_under_a_new_name_says_the_name_was_not_used(client, registry_data):
    from tests.web.test_forms import upload

    client.force_login(registry_data["member"])
    text = registry_data["corpus"].path.read_bytes()
    answer = upload(client, text, "prose-again")
    assert answer.status_code == 302 and answer["Location"] == "/corpora/prose/"
    html = client.get(answer["Location"]).content.decode()
    assert "these bytes are already corpus prose; the name prose-again was not used" in html
    assert "message-warning" in html
    # the same bytes under the same name: the ordinary message, no warning
    same = client.get(upload(client, text, "prose")["Location"]).content.decode()
    assert "was not used" not in same and "corpus prose:" in same


def test_a_signed_in_home_offers_upload_a_run_and_their_recent_runs(client, registry_data):
    member, run = registry_data["member"], registry_data["runs"][1]
    assert "Next steps" not in client.get("/").content.decode()  # anonymous: the leaderboard
    client.force_login(member)
    html = client.get("/").content.decode()
    assert "Next steps" in html and 'href="/corpora/upload/">Upload a corpus' in html
    assert 'href="/runs/new/">Start a run' in html and "None yet: upload a corpus" in html
    type(run).objects.filter(pk=run.pk).update(created_by=member)
    html = client.get("/").content.decode()
    assert f'<a href="/runs/{run.pk}/">Run {run.pk}: prose-bpe</a>, vocab size 600' in html
    assert f"/runs/{registry_data['runs'][0].pk}/" not in html.split("Next steps")[1].split(
        "</section>")[0]  # not theirs


def test_the_version_page_explains_every_download_format(client, registry_data):
    from tokenizers_app.bpe.formats import BYTE_FORMATS

    html = client.get(f"/tokenizers/prose-bpe/{registry_data['large'].number}/").content.decode()
    for format in BYTE_FORMATS:  # a byte-level version's (a char-level one's: test_char_bpe_pages)
        assert f"{format}: " in html, format

