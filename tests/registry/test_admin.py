"""The admin: staff publish, deprecate and annotate versions and move aliases (every move
recorded); other users cannot."""

import pytest
from django.contrib.auth.models import User

from tokenizers_app.models import Alias, AliasMove, Corpus, TokenizerVersion
from tokenizers_app.services.runs import execute_training_run, start_training_run
from tokenizers_app.services.staff import move_alias

from .helpers import import_text, sample_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(settings, tmp_path):
    """Two trained versions of ``prose-bpe``."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text(sample_text(10_000), "prose")
    found = []
    for size in (300, 320):
        run = start_training_run(corpora=[corpus], tokenizer_name="prose-bpe",
                                 vocab_size=size)
        execute_training_run(run_id=run.pk)
        found.append(run.versions.get())
    return found


@pytest.fixture
def staff_client(client):
    """A logged-in staff user with no model permissions of its own."""
    client.force_login(User.objects.create_user("staff", is_staff=True))
    return client


@pytest.fixture
def member_client(client):
    client.force_login(User.objects.create_user("member"))
    return client


def inline_management(*prefixes) -> dict:
    """The management fields a browser sends for empty read-only inlines."""
    return {f"{prefix}-{field}": 0 for prefix in prefixes
            for field in ("TOTAL_FORMS", "INITIAL_FORMS")}


def act(client, action: str, version: TokenizerVersion):
    return client.post("/admin/tokenizers_app/tokenizerversion/",
                       {"action": action, "_selected_action": [version.pk]})


def test_staff_publish_and_then_deprecate_a_version(staff_client, versions):
    assert act(staff_client, "publish", versions[0]).status_code == 302
    assert TokenizerVersion.objects.get(pk=versions[0].pk).lifecycle == "published"

    act(staff_client, "deprecate", versions[0])
    assert TokenizerVersion.objects.get(pk=versions[0].pk).lifecycle == "deprecated"


def test_staff_annotate_a_version_but_its_content_stays_read_only(staff_client, versions):
    version = versions[0]
    response = staff_client.post(f"/admin/tokenizers_app/tokenizerversion/{version.pk}/change/",
                                 {"notes": "baseline for the web crawl", "pattern": "gpt4",
                                  **inline_management("evaluations", "aliases")})

    assert response.status_code == 302
    version.refresh_from_db()
    assert (version.notes, version.pattern) == ("baseline for the web crawl", "gpt2")


def test_staff_create_and_move_an_alias_and_each_move_is_recorded(staff_client, versions):
    first, second = versions
    staff = User.objects.get(username="staff")
    response = staff_client.post("/admin/tokenizers_app/alias/add/", {
        "tokenizer": first.tokenizer_id, "name": "production", "version": first.pk,
        "moves-TOTAL_FORMS": 0, "moves-INITIAL_FORMS": 0})
    assert response.status_code == 302, response.content.decode()[:2000]
    alias = Alias.objects.get()

    staff_client.post(f"/admin/tokenizers_app/alias/{alias.pk}/change/", {
        "version": second.pk, "moves-TOTAL_FORMS": 0, "moves-INITIAL_FORMS": 0})

    alias.refresh_from_db()
    assert alias.version == second
    moves = [(m.from_version, m.to_version, m.moved_by) for m in AliasMove.objects.order_by("id")]
    assert moves == [(None, first, staff), (first, second, staff)]


def test_an_alias_cannot_be_moved_to_a_version_of_another_tokenizer(staff_client, versions):
    other_run = start_training_run(corpora=[Corpus.objects.get()],
                                   tokenizer_name="other-bpe", vocab_size=300)
    execute_training_run(run_id=other_run.pk)
    other = other_run.versions.get()
    alias = move_alias(version=versions[0], name="production",
                       user=User.objects.create_user("boss", is_staff=True))

    response = staff_client.post(f"/admin/tokenizers_app/alias/{alias.pk}/change/", {
        "version": other.pk, "moves-TOTAL_FORMS": 0, "moves-INITIAL_FORMS": 0})

    assert response.status_code == 200  # the form is shown again with its error
    alias.refresh_from_db()
    assert alias.version == versions[0]
    assert not Alias.objects.filter(tokenizer=other.tokenizer).exists()


def test_an_alias_name_that_reads_as_a_version_number_is_refused_in_the_form(staff_client,
                                                                             versions):
    response = staff_client.post("/admin/tokenizers_app/alias/add/", {
        "tokenizer": versions[0].tokenizer_id, "name": "2", "version": versions[0].pk,
        "moves-TOTAL_FORMS": 0, "moves-INITIAL_FORMS": 0})

    assert response.status_code == 200
    assert "is not valid" in response.content.decode()
    assert not Alias.objects.exists()


def test_other_users_cannot_reach_the_admin_or_change_anything(member_client, client, versions):
    for page in ("/admin/", "/admin/tokenizers_app/tokenizerversion/",
                 "/admin/tokenizers_app/alias/add/"):
        assert member_client.get(page).status_code == 302  # to the login page
    act(member_client, "publish", versions[0])
    member_client.post("/admin/tokenizers_app/alias/add/", {
        "tokenizer": versions[0].tokenizer_id, "name": "production", "version": versions[0].pk})

    assert TokenizerVersion.objects.get(pk=versions[0].pk).lifecycle == "draft"
    assert not Alias.objects.exists() and not AliasMove.objects.exists()


def test_staff_see_the_registry_pages(staff_client, versions):
    for page in ("/admin/tokenizers_app/corpus/", "/admin/tokenizers_app/trainingrun/",
                 "/admin/tokenizers_app/tokenizer/", f"/admin/tokenizers_app/tokenizerversion/"
                 f"{versions[0].pk}/change/", "/admin/tokenizers_app/evaluation/"):
        assert staff_client.get(page).status_code == 200, page


def test_special_tokens_with_control_characters_show_as_escapes_not_raw(staff_client, settings,
                                                                       tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text(sample_text(5_000), "tricky-text")
    run = start_training_run(corpora=[corpus], tokenizer_name="tricky", vocab_size=300,
                             special_tokens=["\u202eevil", "bell\x07"])
    execute_training_run(run_id=run.pk)
    for url in [f"/admin/tokenizers_app/trainingrun/{run.pk}/change/",
                f"/admin/tokenizers_app/tokenizerversion/{run.versions.get().pk}/change/"]:
        html = staff_client.get(url).content.decode()
        assert "\u202e" not in html and "\x07" not in html, url
        assert '<span class="tok-control">&lt;U+202E&gt;</span>' in html, url
        assert '<span class="tok-control">&lt;U+0007&gt;</span>' in html, url


def test_a_versions_page_shows_its_evaluations_as_metrics_and_its_aliases(staff_client, versions):
    from tokenizers_app.services.evaluations import evaluate_version

    held_out = import_text(sample_text(3_000, offset=100_000), "held-out")
    evaluate_version(version=versions[0], corpus=held_out)
    move_alias(version=versions[0], name="candidate", user=User.objects.get(username="staff"))

    html = staff_client.get(f"/admin/tokenizers_app/tokenizerversion/{versions[0].pk}/change/"
                            ).content.decode()
    assert "Compression ratio (bytes/token)" in html and "held-out" in html
    assert "candidate" in html
    listing = staff_client.get("/admin/tokenizers_app/evaluation/").content.decode()
    assert "Word coverage (%)" in listing and '{"compression_ratio"' not in listing


def test_a_corpus_file_is_reached_through_the_access_checked_download(staff_client, versions):
    corpus = Corpus.objects.get(name="prose")
    html = staff_client.get(f"/admin/tokenizers_app/corpus/{corpus.pk}/change/").content.decode()
    assert 'href="/corpora/prose/file"' in html
    assert staff_client.get("/corpora/prose/file").status_code == 200


def test_staff_create_an_api_key_seen_once_and_revoke_it(staff_client):
    from tokenizers_app.models import ApiKey

    owner = User.objects.create_user("ci-bot")
    response = staff_client.post("/admin/tokenizers_app/apikey/add/",
                                 {"user": owner.pk, "name": "nightly"}, follow=True)
    [message] = [str(m) for m in response.context["messages"] if "Copy it now" in str(m)]
    key = message.split(": ")[1].split()[0]
    record = ApiKey.objects.get()
    assert key.startswith("trk_") and record.name == "nightly" and key not in record.hashed
    assert ApiKey.objects.authenticate(key) == owner
    assert key not in staff_client.get(f"/admin/tokenizers_app/apikey/{record.pk}/change/"
                                       ).content.decode()
    staff_client.post("/admin/tokenizers_app/apikey/",
                      {"action": "revoke", "_selected_action": [record.pk]})
    assert ApiKey.objects.authenticate(key) is None and ApiKey.objects.get().revoked_at


def test_members_cannot_reach_api_keys_in_the_admin(member_client):
    assert member_client.get("/admin/tokenizers_app/apikey/add/").status_code == 302


def test_staff_change_a_tokenizers_owner_and_members_cannot(staff_client, versions,
                                                           django_user_model):
    tokenizer = versions[0].tokenizer
    assert tokenizer.owner is None  # trained by the operator: staff-only
    owner = django_user_model.objects.create_user("owner")
    address = f"/admin/tokenizers_app/tokenizer/{tokenizer.pk}/change/"
    assert 'name="owner"' in staff_client.get(address).content.decode()
    response = staff_client.post(address, {"owner": owner.pk, "description": "",
                                           **inline_management("versions")})
    assert response.status_code == 302, response.content.decode()[:2000]
    tokenizer.refresh_from_db()
    assert tokenizer.owner == owner

    staff_client.logout()
    staff_client.force_login(django_user_model.objects.create_user("member"))
    refused = staff_client.post(address, {"owner": "", "description": "",
                                          **inline_management("versions")})
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
    tokenizer.refresh_from_db()
    assert tokenizer.owner == owner


def test_evaluation_rows_are_titled_by_version_and_corpus_and_units_show_once(staff_client,
                                                                              versions):
    from tokenizers_app.bpe.metric_text import metric_number
    from tokenizers_app.models import Evaluation
    from tokenizers_app.services.evaluations import evaluate_version

    held_out = import_text(sample_text(3_000, offset=100_000), "held-out")
    evaluate_version(version=versions[0], corpus=held_out)
    evaluation = Evaluation.objects.get(corpus=held_out)
    assert str(evaluation) == f"{versions[0].label} on held-out"

    page = staff_client.get(f"/admin/tokenizers_app/evaluation/{evaluation.pk}/change/")
    html = page.content.decode()
    assert f"{versions[0].label} on held-out" in html and "Evaluation object" not in html
    version_page = staff_client.get(
        f"/admin/tokenizers_app/tokenizerversion/{versions[0].pk}/change/").content.decode()
    assert "Evaluation object" not in version_page
    listing = staff_client.get("/admin/tokenizers_app/evaluation/").content.decode()
    ratio = evaluation.metrics["compression_ratio"]
    assert "Compression ratio (bytes/token)" in listing
    assert f">{metric_number(ratio, 'compression_ratio')}<" in listing
    assert "bytes/token<" not in listing.split("</thead>")[1]  # the unit is in the heading only
    coverage = metric_number(evaluation.metrics["word_coverage"], "word_coverage",
                             percent_sign=False)
    assert f">{coverage}<" in listing and "\u00a0%<" not in listing


def test_alias_history_rows_are_titled_by_the_move_not_as_objects(staff_client, versions):
    """They were titled "AliasMove object (1)"."""
    first, second = versions
    staff = User.objects.create_user("boss", is_staff=True)
    move_alias(version=first, name="production", user=staff)
    alias = move_alias(version=second, name="production", user=staff)
    html = staff_client.get(f"/admin/tokenizers_app/alias/{alias.pk}/change/").content.decode()
    assert "AliasMove object" not in html
    assert "prose-bpe@production: new → 1" in html
    assert "prose-bpe@production: 1 → 2" in html


def test_the_admin_says_why_nothing_is_deleted_there_and_where_it_is(staff_client, versions):
    """It refused every delete without a word, and the README did not say why."""
    for model in ("corpus", "tokenizer", "trainingrun", "tokenizerversion"):
        html = staff_client.get(f"/admin/tokenizers_app/{model}/").content.decode()
        assert "Nothing is deleted here." in html, model
        assert "manage.py delete" in html and "Versions are never deleted" in html


def test_a_gated_alias_refuses_a_move_in_the_admin_form_until_a_reason_is_given(staff_client,
                                                                                versions):
    first, second = versions
    staff = User.objects.get(username="staff")
    alias = move_alias(version=second, name="production", user=staff)
    alias.gate_tolerance = 0.0
    alias.save()
    url = f"/admin/tokenizers_app/alias/{alias.pk}/change/"
    form = {"version": first.pk, "moves-TOTAL_FORMS": 0, "moves-INITIAL_FORMS": 1,
            "moves-0-id": alias.moves.get().pk, "moves-0-alias": alias.pk}
    refused = staff_client.post(url, form)
    assert refused.status_code == 200 and "the gate of prose-bpe@production refuses" in \
        refused.content.decode()
    alias.refresh_from_db()
    assert alias.version == second
    forced = staff_client.post(url, {**form, "force_reason": "rollback"})
    assert forced.status_code == 302
    assert AliasMove.objects.filter(alias=alias).first().forced_reason == "rollback"
