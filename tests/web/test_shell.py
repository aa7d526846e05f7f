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
