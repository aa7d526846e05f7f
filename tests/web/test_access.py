"""Who may do what, for every URL in the URLconf and for the commands that act for a user:
anonymous visitors, signed-in members, owners and staff. A URL added without a row here fails
``test_every_url_has_a_row``.

The ``owner`` is the member who created the tokenizer ``prose-bpe``, started its runs and
uploaded its corpora; ``member`` is another signed-in member, who owns none of them. Only the
owner or staff add versions to a tokenizer (train into it, import into it), cancel its runs and
evaluations and switch a corpus's evaluation flag; any member may have a version evaluated on an
evaluation corpus; reads are open to all (``services.permissions``).

An expected answer is a status code, or ``LOGIN`` for a redirect to the sign-in page. Writes
send bodies that are valid where the action is harmless and incomplete elsewhere, so a member
or staff answer of 400/422 shows the caller was let in and then told what is missing; the
ownership checks come before any check of the body, so a member's 403 is the same for both.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import URLResolver, get_resolver, reverse

from tokenizers_app.bpe import Tokenizer as CoreTokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.errors import Forbidden
from tokenizers_app.models import ApiKey, Corpus, Tokenizer, TokenizerVersion, TrainingRun
from tokenizers_app.services.runs import start_training_run
from tokenizers_app.services.staff import move_alias

LOGIN = "login"
ADMIN = "admin/"

VERSION_FILE = "<prose-bpe@1 as a tokenizer.json>"  # importing it gives version 1 back
CORPUS_FILE = "<the bytes of the corpus prose>"  # uploading them gives the corpus back
FILES = (VERSION_FILE, CORPUS_FILE)
# a run into prose-bpe that every caller let in is refused for its vocab size (400)
RUN_FORM = {"tokenizer": "{name}", "corpus": "{corpus}", "pattern": "gpt2", "vocab_size": 1,
            "min_frequency": 1}
RUN_JSON = {"tokenizer": "{name}", "corpora": ["{corpus}"], "vocab_size": 1}

# route in the URLconf: [(method, address, body, anonymous, member, owner, staff), ...]
ACCESS = {
    "": [("GET", "/", None, 200, 200, 200, 200)],
    "health": [("GET", "/health", None, 200, 200, 200, 200)],
    "favicon.ico": [("GET", "/favicon.ico", None, 302, 302, 302, 302)],
    "accounts/login/": [("GET", "/accounts/login/", None, 200, 200, 200, 200)],
    "account/": [("GET", "/account/", None, LOGIN, 200, 200, 200)],
    "account/keys": [("POST", "/account/keys", {"name": "ci"}, LOGIN, 201, 201, 201)],
    # the owner's key: its holder revokes it; anyone else, staff too, finds no such key here
    "account/keys/<int:key_id>/revoke": [
        ("POST", "/account/keys/{key}/revoke", {}, LOGIN, 404, 302, 404)],
    "corpora/": [("GET", "/corpora/", None, 200, 200, 200, 200)],
    "corpora/upload/": [("GET", "/corpora/upload/", None, LOGIN, 200, 200, 200)],
    "parallel/": [("GET", "/parallel/", None, 200, 200, 200, 200)],
    "parallel/upload/": [("GET", "/parallel/upload/", None, LOGIN, 200, 200, 200),
                         ("POST", "/parallel/upload/", {"name": "x"}, LOGIN, 400, 400, 400)],
    "parallel/<str:name>/": [("GET", "/parallel/nope/", None, 404, 404, 404, 404)],
    "corpora/<str:name>/": [("GET", "/corpora/{corpus}/", None, 200, 200, 200, 200)],
    "corpora/<str:name>/evaluation": [
        ("POST", "/corpora/{held_out}/evaluation", {"evaluation": "on"}, LOGIN, 403, 302, 302)],
    "corpora/<str:name>/file": [("GET", "/corpora/{corpus}/file", None, LOGIN, 200, 200, 200)],
    # used by runs and evaluations: the owner and staff are let in, then refused in words
    "corpora/<str:name>/delete": [
        ("POST", "/corpora/{corpus}/delete", {"confirm": "on"}, LOGIN, 403, 409, 409)],
    "runs/": [("GET", "/runs/", None, 200, 200, 200, 200)],
    "runs/new/": [("GET", "/runs/new/", None, LOGIN, 200, 200, 200),
                  ("POST", "/runs/new/", RUN_FORM, LOGIN, 403, 400, 400)],
    "runs/<int:run_id>/": [("GET", "/runs/{run}/", None, 200, 200, 200, 200)],
    "runs/<int:run_id>/cancel": [("POST", "/runs/{queued}/cancel", {}, LOGIN, 403, 302, 302)],
    "runs/<int:run_id>/delete": [
        ("POST", "/runs/{run}/delete", {"confirm": "on"}, LOGIN, 403, 409, 409)],
    "tokenizers/": [("GET", "/tokenizers/", None, 200, 200, 200, 200)],
    "tokenizers/import/": [
        ("GET", "/tokenizers/import/", None, LOGIN, 200, 200, 200),
        ("POST", "/tokenizers/import/", {"tokenizer": "{name}", "files": VERSION_FILE}, LOGIN,
         403, 302, 302)],
    "tokenizers/<str:name>/": [("GET", "/tokenizers/{name}/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/delete": [
        ("POST", "/tokenizers/{name}/delete", {"confirm": "on"}, LOGIN, 403, 409, 409)],
    "tokenizers/<str:name>/<ref:ref>/": [
        ("GET", "/tokenizers/{name}/1/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/evaluate": [
        ("POST", "/tokenizers/{name}/1/evaluate", {"corpus": "{held_out}"}, LOGIN, 302, 302, 302)],
    # cancelling an evaluation: the tokenizer's owner, the corpus's uploader, or staff (the
    # evaluation has ended here: it is left as it is)
    "tokenizers/<str:name>/<ref:ref>/evaluate/cancel": [
        ("POST", "/tokenizers/{name}/1/evaluate/cancel", {"corpus": "{held_out}"},
         LOGIN, 403, 302, 302)],
    "tokenizers/<str:name>/<ref:ref>/vocab/": [
        ("GET", "/tokenizers/{name}/1/vocab/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/merges/": [
        ("GET", "/tokenizers/{name}/1/merges/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/tokens/<int:token_id>/": [
        ("GET", "/tokenizers/{name}/1/tokens/260/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/download/<str:format>/": [
        ("GET", "/tokenizers/{name}/1/download/hf/", None, 200, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/alias": [
        ("POST", "/tokenizers/{name}/1/alias", {"alias": "candidate"}, LOGIN, 403, 403, 302)],
    "tokenizers/<str:name>/<ref:ref>/publish": [
        ("POST", "/tokenizers/{name}/1/publish", {}, LOGIN, 403, 403, 302)],
    "compare/": [("GET", "/compare/?versions={name}@1,{name}@2", None, 200, 200, 200, 200)],
    "diff/": [("GET", "/diff/?from={name}@1&to={name}@2", None, 200, 200, 200, 200)],
    # goldens: the owner or staff (an empty text is then refused in words); gates: staff
    "tokenizers/<str:name>/<ref:ref>/goldens": [
        ("POST", "/tokenizers/{name}/1/goldens", {"text": ""}, LOGIN, 403, 302, 302)],
    "tokenizers/<str:name>/aliases/<str:alias>/gate": [
        ("POST", "/tokenizers/{name}/aliases/production/gate", {"tolerance": "x"},
         LOGIN, 403, 403, 302)],
    "metrics/": [("GET", "/metrics/", None, 200, 200, 200, 200)],
    "search/": [("GET", "/search/?q=prose", None, 200, 200, 200, 200)],
    "playground/": [
        ("GET", "/playground/?versions={name}@1&text=hi", None, 200, 200, 200, 200)],
    "api/": [("GET", "/api/", None, 404, 404, 404, 404)],
    "api/openapi.json": [("GET", "/api/openapi.json", None, 200, 200, 200, 200)],
    "api/docs": [("GET", "/api/docs", None, 200, 200, 200, 200)],
    "api/tokenizers": [("GET", "/api/tokenizers", None, 200, 200, 200, 200)],
    "api/tokenizers/<name>": [("GET", "/api/tokenizers/{name}", None, 200, 200, 200, 200),
                              ("DELETE", "/api/tokenizers/{name}", {}, 401, 403, 409, 409)],
    "api/tokenizers/<name>/versions": [
        ("GET", "/api/tokenizers/{name}/versions", None, 200, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>": [
        ("GET", "/api/tokenizers/{name}/versions/1", None, 200, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/download": [
        ("GET", "/api/tokenizers/{name}/versions/1/download", None, 200, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/encode": [
        ("POST", "/api/tokenizers/{name}/versions/1/encode", {"text": "hi"},
         200, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/evaluate": [
        ("POST", "/api/tokenizers/{name}/versions/1/evaluate", {"corpus": "{held_out}"},
         401, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/evaluate/cancel": [
        ("POST", "/api/tokenizers/{name}/versions/1/evaluate/cancel", {"corpus": "{held_out}"},
         401, 403, 200, 200)],
    "api/tokenizers/<name>/import": [
        ("POST", "/api/tokenizers/{name}/import", {}, 401, 422, 422, 422),
        ("POST", "/api/tokenizers/{name}/import", {"files": VERSION_FILE}, 401, 403, 201, 201)],
    "api/tokenizers/<name>/aliases/<alias>": [
        ("PUT", "/api/tokenizers/{name}/aliases/candidate", {"version": 1},
         401, 403, 403, 200)],
    "api/tokenizers/<name>/aliases/<alias>/gate": [
        ("PUT", "/api/tokenizers/{name}/aliases/production/gate", {"tolerance": 5},
         401, 403, 403, 400)],
    "api/tokenizers/<name>/goldens": [
        ("POST", "/api/tokenizers/{name}/goldens", {"version": 1, "text": ""},
         401, 403, 400, 400)],
    "api/tokenizers/<name>/versions/<ref>/goldens": [
        ("GET", "/api/tokenizers/{name}/versions/1/goldens", None, 200, 200, 200, 200)],
    "api/diff": [("GET", "/api/diff?from={name}@1&to={name}@2", None, 200, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/publish": [
        ("POST", "/api/tokenizers/{name}/versions/1/publish", {}, 401, 403, 403, 200)],
    "api/tokenizers/<name>/versions/<ref>/deprecate": [
        ("POST", "/api/tokenizers/{name}/versions/2/deprecate", {}, 401, 403, 403, 200)],
    "api/corpora": [("GET", "/api/corpora", None, 200, 200, 200, 200),
                    ("POST", "/api/corpora", {}, 401, 422, 422, 422),
                    ("POST", "/api/corpora", {"name": "{corpus}", "evaluation": "true",
                                              "file": CORPUS_FILE}, 401, 403, 200, 200)],
    "api/parallel-sets": [("GET", "/api/parallel-sets", None, 200, 200, 200, 200),
                          ("POST", "/api/parallel-sets", {}, 401, 422, 422, 422)],
    "api/parallel-sets/<name>": [("GET", "/api/parallel-sets/nope", None, 404, 404, 404, 404)],
    "api/parallel-sets/<name>/parity": [
        ("GET", "/api/parallel-sets/nope/parity", None, 404, 404, 404, 404)],
    "api/corpora/<name>": [("GET", "/api/corpora/{corpus}", None, 200, 200, 200, 200),
                           ("DELETE", "/api/corpora/{corpus}", {}, 401, 403, 409, 409)],
    "api/runs": [("POST", "/api/runs", {}, 401, 422, 422, 422),
                 ("POST", "/api/runs", RUN_JSON, 401, 403, 400, 400)],
    "api/runs/<run_id>": [("GET", "/api/runs/{run}", None, 200, 200, 200, 200),
                          ("DELETE", "/api/runs/{run}", {}, 401, 403, 409, 409)],
    "api/runs/<run_id>/cancel": [("POST", "/api/runs/{queued}/cancel", {}, 401, 403, 200, 200)],
    "api/compare": [
        ("GET", "/api/compare?versions={name}@1,{name}@2&corpus={held_out}", None,
         200, 200, 200, 200)],
    "^api/": [("GET", "/api/nothing", None, 404, 404, 404, 404),  # any other /api/ address
              ("POST", "/api/nothing", {}, 404, 404, 404, 404)],
    # last: it signs the caller out
    "accounts/logout/": [("POST", "/accounts/logout/", {}, 302, 302, 302, 302)],
}
ROLES = ("anonymous", "member", "owner", "staff")


def routes(resolver=None, prefix=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def test_every_url_has_a_row():
    found = {route for route, _ in routes() if not route.startswith(ADMIN)}
    assert found - ACCESS.keys() == set(), "a URL without a row in ACCESS: add one"
    assert ACCESS.keys() - found == set(), "a row in ACCESS for a URL that is gone"


@pytest.fixture
def owned(registry_data, django_user_model):
    """The dashboard's registry, made by ``owner``, with a queued run of ``prose-bpe`` that it
    started."""
    owner = django_user_model.objects.create_user("owner", password="pw-owner-1")
    Tokenizer.objects.update(owner=owner)
    TrainingRun.objects.update(created_by=owner)
    Corpus.objects.update(uploaded_by=owner)
    queued = start_training_run(corpora=[registry_data["corpus"]], tokenizer_name="prose-bpe",
                                vocab_size=280, created_by=owner)  # sent on commit: never here
    key, _ = ApiKey.objects.create_key(owner, "the owner's")
    Tokenizer.objects.create(name="spare-bpe", owner=owner)
    move_alias(version=registry_data["small"], name="production", user=registry_data["staff"])
    return {**registry_data, "owner": owner, "queued": queued, "key": key}


def names_in(data) -> dict:
    return {"name": "prose-bpe", "corpus": data["corpus"].name, "held_out": data["held_out"].name,
            "run": data["runs"][0].pk, "queued": data["queued"].pk, "key": data["key"].pk}


def signed_in(client, role, data):
    if role != "anonymous":
        client.force_login(data[role])
    return client


def upload(data, placeholder: str) -> SimpleUploadedFile:
    """The file a placeholder of the table stands for."""
    if placeholder == VERSION_FILE:
        files = dumps_tokenizer(data["small"].load_tokenizer(), "hf", "prose-bpe")
        [(name, content)] = files.items()
        return SimpleUploadedFile(name, content)
    return SimpleUploadedFile("prose.txt", data["corpus"].path.read_bytes())


def filled(value, names: dict):
    """A value of the table with its ``{placeholders}`` filled in."""
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [filled(item, names) for item in value]
    if isinstance(value, dict):
        return {key: filled(item, names) for key, item in value.items()}
    return value


def ask(client, method, address, body, data):
    if method == "GET":
        return client.get(address)
    body = filled(body, names_in(data))
    files = {key: upload(data, value) for key, value in body.items() if value in FILES}
    if files:  # multipart
        return client.post(address, {**body, **files})
    if address.startswith("/api/"):
        return client.generic(method, address, json.dumps(body),
                              content_type="application/json")
    return client.post(address, body)


@pytest.mark.parametrize("role", ROLES)
def test_each_url_answers_each_kind_of_caller_as_the_table_says(client, owned, role):
    names = names_in(owned)
    signed_in(client, role, owned)
    wrong = []
    for rows in ACCESS.values():
        for method, address, body, *expected in rows:
            address = address.format(**names)
            want = expected[ROLES.index(role)]
            answer = ask(client, method, address, body, owned)
            got = answer.status_code
            if got == 302 and answer["Location"].startswith(reverse("login")):
                got = LOGIN
            if got != want:
                wrong.append(f"{method} {address}: {got}, not {want}")
    assert wrong == []


def admin_addresses(data) -> list[str]:
    """Every admin URL made concrete: object views on an object that exists."""
    from django.contrib import admin

    addresses = []
    objects = {f"{m._meta.app_label}_{m._meta.model_name}": m._default_manager.order_by("pk")
               .first() for m in admin.site._registry}  # noqa: SLF001
    for route, pattern in routes():
        if not route.startswith(ADMIN) or pattern.name is None:
            continue
        kwargs = {}
        for key in ("object_id", "id"):
            if f"<{key}>" in route or f":{key}>" in route:
                found = objects.get(pattern.name.rsplit("_", 1)[0].removesuffix("_password"))
                if found is None:
                    break
                kwargs[key] = found.pk
        if "object_id" in route and "object_id" not in kwargs and "content_type" not in route:
            continue
        if "app_label" in route:
            kwargs["app_label"] = "tokenizers_app"
        if "content_type_id" in route:
            from django.contrib.contenttypes.models import ContentType

            found = data["small"]
            kwargs = {"content_type_id": ContentType.objects.get_for_model(found).pk,
                      "object_id": found.pk}
        addresses.append(reverse(f"admin:{pattern.name}", kwargs=kwargs))
    return addresses


def test_the_admin_lets_in_staff_only(client, owned):
    """Every admin URL: anonymous visitors, members and owners are sent to the admin's sign-in,
    staff are not (what they then see depends on their model permissions)."""
    addresses = admin_addresses(owned)
    assert len(addresses) > 40
    open_to_all = {reverse("admin:login"), reverse("admin:logout"), reverse("admin:jsi18n")}
    for role in ROLES:
        signed_in(client, role, owned)
        for address in addresses:
            if address in open_to_all:
                continue
            answer = client.get(address)
            sent_to_sign_in = (answer.status_code == 302
                               and answer["Location"].startswith(reverse("admin:login")))
            assert sent_to_sign_in == (role != "staff"), (role, address, answer.status_code)
        client.logout()


def test_uploaded_files_are_not_served_from_a_media_address(client, registry_data, settings):
    name = registry_data["corpus"].object_name  # corpora/<generated name>
    assert (Path(settings.MEDIA_ROOT) / name).is_file()
    for address in (f"{settings.MEDIA_URL}{name}", f"/media/{name}", f"/{name}"):
        answer = client.get(address, follow=True)
        assert answer.status_code == 404, address
        assert registry_data["corpus"].path.read_bytes()[:200] not in answer.content


DONE, REFUSED = "done", "refused"
COMMAND_ROLES = ("member", "owner", "staff", "operator")  # operator: no --user
# [(command and arguments, whether it was done, member, owner, staff, operator), ...]
COMMANDS = [
    (["cancel_run", "{queued}"],
     lambda data: TrainingRun.objects.get(pk=data["queued"].pk).cancel_requested,
     REFUSED, DONE, DONE, DONE),
    (["train", "--corpus", "{corpus}", "--tokenizer", "{name}", "--vocab-size", "320"],
     lambda data: TrainingRun.objects.filter(tokenizer__name="prose-bpe",
                                             parameters__vocab_size=320).exists(),
     REFUSED, DONE, DONE, DONE),
    (["import_tokenizer", "{new_version}", "--tokenizer", "{name}"],
     lambda data: TokenizerVersion.objects.filter(tokenizer__name="prose-bpe").count() == 3,
     REFUSED, DONE, DONE, DONE),
    (["import_corpus", "{corpus_path}", "--name", "{corpus}", "--evaluation"],
     lambda data: Corpus.objects.get(name="prose").is_evaluation,
     REFUSED, DONE, DONE, DONE),
    (["delete", "tokenizer", "spare-bpe"],  # the owner's, with no version and no run
     lambda data: not Tokenizer.objects.filter(name="spare-bpe").exists(),
     REFUSED, DONE, DONE, DONE),
]


def a_version_file_not_in_prose_bpe(data, folder: Path) -> Path:
    """prose-bpe@1 less its last merge, as a native file: a version prose-bpe does not hold."""
    core = data["small"].load_tokenizer()
    vocab = {i: token for i, token in core.vocab.items() if i < len(core.vocab) - 1}
    shorter = CoreTokenizer(vocab, core.merges[:-1], core.special_tokens, core.pattern,
                            core.merge_counts[:-1])
    [(name, content)] = dumps_tokenizer(shorter, "native", "shorter").items()
    (folder / name).write_bytes(content)
    return folder / name


@pytest.mark.parametrize("role", COMMAND_ROLES)
def test_each_command_acts_for_its_user_as_the_table_says(owned, role, tmp_path):
    """``--user NAME`` holds a command to that user's rights; without it, the operator has
    full rights. A refusal is ``Forbidden`` (a 403 in words), and changes nothing."""
    names = {**names_in(owned), "corpus_path": str(owned["corpus"].path),
             "new_version": str(a_version_file_not_in_prose_bpe(owned, tmp_path))}
    user = [] if role == "operator" else ["--user", role]
    wrong = []
    for arguments, done, *expected in COMMANDS:
        arguments = [argument.format(**names) for argument in arguments] + user
        try:
            call_command(*arguments, stdout=io.StringIO())
            got = DONE
        except CommandError as refused:
            assert isinstance(refused.__context__, Forbidden), (arguments, refused)
            assert "only" in str(refused) and "or staff" in str(refused)
            got = REFUSED
        want = expected[COMMAND_ROLES.index(role)]
        if got != want or done(owned) != (want == DONE):
            wrong.append(f"{' '.join(arguments)}: {got} (done: {done(owned)}), not {want}")
    assert wrong == []


def test_the_pages_offer_cancel_and_the_evaluation_switch_only_to_who_may_use_them(client,
                                                                                      owned):
    for role, offered in (("anonymous", False), ("member", False), ("owner", True),
                          ("staff", True)):
        client.logout()
        signed_in(client, role, owned)
        run_page = client.get(f"/runs/{owned['queued'].pk}/").content.decode()
        corpus_page = client.get(f"/corpora/{owned['held_out'].name}/").content.decode()
        assert ("Cancel the run" in run_page) == offered, role
        assert ("Stop evaluating on it" in corpus_page) == offered, role


def test_a_refusal_says_who_may_and_changes_nothing(client, owned):
    signed_in(client, "member", owned)
    cancel = client.post(f"/runs/{owned['queued'].pk}/cancel")
    assert cancel.status_code == 403
    assert "only the user who started it or staff can cancel it" in cancel.content.decode()
    assert TrainingRun.objects.get(pk=owned["queued"].pk).status == "queued"
    switch = client.post(f"/corpora/{owned['held_out'].name}/evaluation", {})
    assert switch.status_code == 403 and "only its uploader or staff" in switch.content.decode()
    assert Corpus.objects.get(pk=owned["held_out"].pk).is_evaluation
    form = client.post("/runs/new/", filled(RUN_FORM, names_in(owned)) | {"vocab_size": 300})
    assert form.status_code == 403
    assert "tokenizer &#x27;prose-bpe&#x27; belongs to &#x27;owner&#x27;" in \
        form.content.decode()  # beside the form's tokenizer field
    assert TrainingRun.objects.filter(created_by=owned["member"]).count() == 0


def test_a_tokenizers_page_says_who_adds_versions(client, owned):
    assert "Owner: owner (with staff" in client.get("/tokenizers/prose-bpe/").content.decode()
    Tokenizer.objects.update(owner=None)
    assert "Owner: none: only staff add versions" in \
        client.get("/tokenizers/prose-bpe/").content.decode()


def test_a_refused_page_action_is_a_page_of_the_site_with_a_way_back(client, owned):
    """A member posting "publish" once got a blank page holding one sentence."""
    signed_in(client, "member", owned)
    refused = client.post("/tokenizers/prose-bpe/1/publish")
    html = refused.content.decode()
    assert refused.status_code == 403 and refused["Content-Type"].startswith("text/html")
    assert '<header class="top">' in html and "Sign out" in html  # the site's header
    assert "only staff" in html.lower()
    assert '<a href="/tokenizers/prose-bpe/1/" id="way-back">' in html  # the object's page
    came_from = client.post("/tokenizers/prose-bpe/1/publish",
                            HTTP_REFERER="http://testserver/tokenizers/prose-bpe/")
    assert '<a href="http://testserver/tokenizers/prose-bpe/" id="way-back">Back to the ' \
           'previous page' in came_from.content.decode()
    elsewhere = client.post("/tokenizers/prose-bpe/1/publish",
                            HTTP_REFERER="https://elsewhere.example/")
    assert "elsewhere.example" not in elsewhere.content.decode()
    api = client.post("/api/tokenizers/prose-bpe/versions/1/publish")  # the API stays JSON
    assert api["Content-Type"].startswith("application/json")
