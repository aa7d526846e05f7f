"""A corpus carries a BCP 47 language: set at upload (page and API), by ``import_corpus
--language``, or by staff in the admin; its page shows it beside the scripts it detected."""

import io

import pytest
from django.core.management import CommandError, call_command

from tests.registry.helpers import import_text
from tokenizers_app.errors import Invalid
from tokenizers_app.models import ApiKey, Corpus, check_language

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def member(django_user_model):
    return django_user_model.objects.create_user("member", password="pw-member-1")


@pytest.mark.parametrize("tag, written", [("en", "en"), ("pt_br", "pt-BR"), ("ZH-hans", "zh-Hans"),
                                          ("es-419", "es-419"), ("", "")])
def test_a_language_tag_is_written_in_its_usual_case(tag, written):
    assert check_language(tag) == written


@pytest.mark.parametrize("tag", ["english", "e", "en--GB", "en GB", "12", "de-"])
def test_a_tag_that_is_not_bcp_47_is_refused_in_words(tag):
    with pytest.raises(Invalid, match="not a BCP 47 tag") as refused:
        check_language(tag)
    assert refused.value.field == "language"


def test_the_upload_page_records_the_language_and_the_page_shows_it_with_scripts(
        client, media, member):
    client.force_login(member)
    upload = io.BytesIO("Grüße aus Köln, привет\n".encode())
    upload.name = "de.txt"
    response = client.post("/corpora/upload/", {"name": "de-news", "language": "de",
                                                "file": upload})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Corpus.objects.get(name="de-news").language == "de"
    page = client.get("/corpora/de-news/").content.decode()
    assert '<span lang="de">de</span>' in page
    assert "Latin" in page and "Cyrillic" in page


def test_the_upload_page_shows_a_bad_language_on_its_field_and_stores_nothing(
        client, media, member):
    client.force_login(member)
    upload = io.BytesIO(b"hello\n")
    upload.name = "x.txt"
    response = client.post("/corpora/upload/", {"name": "x", "language": "klingon!",
                                                "file": upload})
    assert response.status_code == 400
    assert "not a BCP 47 tag" in response.content.decode()
    assert not Corpus.objects.exists()


def test_the_api_takes_and_gives_the_language(client, media, member):
    key = ApiKey.objects.create_key(member, "ci")[1]
    upload = io.BytesIO("bonjour\n".encode())
    upload.name = "fr.txt"
    response = client.post("/api/corpora", {"name": "fr-web", "language": "fr", "file": upload},
                           headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 201, response.content
    assert response.json()["language"] == "fr"
    assert client.get("/api/corpora/fr-web").json()["language"] == "fr"


def test_import_corpus_takes_a_language(media, tmp_path):
    path = tmp_path / "ja.txt"
    path.write_text("こんにちは世界\n")
    out = io.StringIO()
    call_command("import_corpus", str(path), "--name", "ja-web", "--language", "ja", stdout=out)
    assert "language ja" in out.getvalue()
    assert Corpus.objects.get(name="ja-web").language == "ja"
    with pytest.raises(CommandError, match="not a BCP 47 tag"):
        call_command("import_corpus", str(path), "--name", "ja-2", "--language", "japanese")


def test_staff_set_the_language_in_the_admin(client, media, django_user_model):
    staff = django_user_model.objects.create_superuser("boss", password="pw-boss-1")
    corpus = import_text("hello world\n", "web")
    client.force_login(staff)
    page = client.get(f"/admin/tokenizers_app/corpus/{corpus.pk}/change/")
    assert 'name="language"' in page.content.decode()
    response = client.post(f"/admin/tokenizers_app/corpus/{corpus.pk}/change/",
                           {"language": "en-GB"})
    assert response.status_code == 302
    corpus.refresh_from_db()
    assert corpus.language == "en-GB"


def test_the_admin_refuses_a_bad_language_on_its_field(client, media, django_user_model):
    staff = django_user_model.objects.create_superuser("boss", password="pw-boss-1")
    corpus = import_text("hello world\n", "web")
    client.force_login(staff)
    response = client.post(f"/admin/tokenizers_app/corpus/{corpus.pk}/change/",
                           {"language": "not a tag"})
    assert response.status_code == 200
    assert "not a BCP 47 tag" in response.content.decode()
    corpus.refresh_from_db()
    assert corpus.language == ""
