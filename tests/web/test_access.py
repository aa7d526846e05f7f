"""Who may do what, for every URL in the URLconf: anonymous visitors, signed-in members and
staff. A URL added without a row here fails ``test_every_url_has_a_row``.

An expected answer is a status code, or ``LOGIN`` for a redirect to the sign-in page. Writes
send bodies that are valid where the action is harmless and incomplete elsewhere, so a member
or staff answer of 400/422 shows the caller was let in and then told what is missing.
"""

import json
from pathlib import Path

import pytest
from django.urls import URLResolver, get_resolver, reverse

LOGIN = "login"
ADMIN = "admin/"

# route in the URLconf: [(method, address, body, anonymous, member, staff), ...]
ACCESS = {
    "": [("GET", "/", None, 200, 200, 200)],
    "health": [("GET", "/health", None, 200, 200, 200)],
    "accounts/login/": [("GET", "/accounts/login/", None, 200, 200, 200)],
    "corpora/": [("GET", "/corpora/", None, 200, 200, 200)],
    "corpora/upload/": [("GET", "/corpora/upload/", None, LOGIN, 200, 200)],
    "corpora/<str:name>/": [("GET", "/corpora/{corpus}/", None, 200, 200, 200)],
    "corpora/<str:name>/evaluation": [
        ("POST", "/corpora/{held_out}/evaluation", {"evaluation": "on"}, LOGIN, 302, 302)],
    "corpora/<str:name>/file": [("GET", "/corpora/{corpus}/file", None, LOGIN, 200, 200)],
    "runs/": [("GET", "/runs/", None, 200, 200, 200)],
    "runs/new/": [("GET", "/runs/new/", None, LOGIN, 200, 200)],
    "runs/<int:run_id>/": [("GET", "/runs/{run}/", None, 200, 200, 200)],
    "runs/<int:run_id>/cancel": [("POST", "/runs/{run}/cancel", {}, LOGIN, 302, 302)],
    "tokenizers/<str:name>/": [("GET", "/tokenizers/{name}/", None, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/": [("GET", "/tokenizers/{name}/1/", None, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/vocab/": [
        ("GET", "/tokenizers/{name}/1/vocab/", None, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/merges/": [
        ("GET", "/tokenizers/{name}/1/merges/", None, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/tokens/<int:token_id>/": [
        ("GET", "/tokenizers/{name}/1/tokens/260/", None, 200, 200, 200)],
    "tokenizers/<str:name>/<ref:ref>/download/<str:format>/": [
        ("GET", "/tokenizers/{name}/1/download/hf/", None, 200, 200, 200)],
    "compare/": [("GET", "/compare/?versions={name}@1,{name}@2", None, 200, 200, 200)],
    "playground/": [("GET", "/playground/?versions={name}@1&text=hi", None, 200, 200, 200)],
    "api/": [("GET", "/api/", None, 404, 404, 404)],
    "api/openapi.json": [("GET", "/api/openapi.json", None, 200, 200, 200)],
    "api/docs": [("GET", "/api/docs", None, 200, 200, 200)],
    "api/tokenizers": [("GET", "/api/tokenizers", None, 200, 200, 200)],
    "api/tokenizers/<name>": [("GET", "/api/tokenizers/{name}", None, 200, 200, 200)],
    "api/tokenizers/<name>/versions": [
        ("GET", "/api/tokenizers/{name}/versions", None, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>": [
        ("GET", "/api/tokenizers/{name}/versions/1", None, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/download": [
        ("GET", "/api/tokenizers/{name}/versions/1/download", None, 200, 200, 200)],
    "api/tokenizers/<name>/versions/<ref>/encode": [
        ("POST", "/api/tokenizers/{name}/versions/1/encode", {"text": "hi"}, 200, 200, 200)],
    "api/tokenizers/<name>/import": [
        ("POST", "/api/tokenizers/{name}/import", {}, 401, 422, 422)],
    "api/tokenizers/<name>/aliases/<alias>": [
        ("PUT", "/api/tokenizers/{name}/aliases/candidate", {"version": 1}, 401, 403, 200)],
    "api/tokenizers/<name>/versions/<ref>/publish": [
        ("POST", "/api/tokenizers/{name}/versions/1/publish", {}, 401, 403, 200)],
    "api/tokenizers/<name>/versions/<ref>/deprecate": [
        ("POST", "/api/tokenizers/{name}/versions/2/deprecate", {}, 401, 403, 200)],
    "api/corpora": [("GET", "/api/corpora", None, 200, 200, 200),
                    ("POST", "/api/corpora", {}, 401, 422, 422)],
    "api/corpora/<name>": [("GET", "/api/corpora/{corpus}", None, 200, 200, 200)],
    "api/runs": [("POST", "/api/runs", {}, 401, 422, 422)],
    "api/runs/<run_id>": [("GET", "/api/runs/{run}", None, 200, 200, 200)],
    "api/runs/<run_id>/cancel": [("POST", "/api/runs/{run}/cancel", {}, 401, 200, 200)],
    "api/compare": [
        ("GET", "/api/compare?versions={name}@1,{name}@2&corpus={held_out}", None, 200, 200, 200)],
    "^api/": [("GET", "/api/nothing", None, 404, 404, 404),  # any other /api/ address
              ("POST", "/api/nothing", {}, 404, 404, 404)],
    # last: it signs the caller out
    "accounts/logout/": [("POST", "/accounts/logout/", {}, 302, 302, 302)],
}
ROLES = ("anonymous", "member", "staff")


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


def signed_in(client, role, data):
    if role != "anonymous":
        client.force_login(data[role])
    return client


def ask(client, method, address, body):
    if method == "GET":
        return client.get(address)
    if address.startswith("/api/"):
        return client.generic(method, address, json.dumps(body),
                              content_type="application/json")
    return client.post(address, body)


@pytest.mark.parametrize("role", ROLES)
def test_each_url_answers_each_kind_of_caller_as_the_table_says(client, registry_data, role):
    names = {"name": "prose-bpe", "corpus": registry_data["corpus"].name,
             "held_out": registry_data["held_out"].name, "run": registry_data["runs"][0].pk}
    signed_in(client, role, registry_data)
    wrong = []
    for rows in ACCESS.values():
        for method, address, body, *expected in rows:
            address = address.format(**names)
            want = expected[ROLES.index(role)]
            answer = ask(client, method, address, body)
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


def test_the_admin_lets_in_staff_only(client, registry_data):
    """Every admin URL: anonymous visitors and members are sent to the admin's sign-in, staff
    are not (what they then see depends on their model permissions)."""
    addresses = admin_addresses(registry_data)
    assert len(addresses) > 40
    open_to_all = {reverse("admin:login"), reverse("admin:logout"), reverse("admin:jsi18n")}
    for role in ROLES:
        signed_in(client, role, registry_data)
        for address in addresses:
            if address in open_to_all:
                continue
            answer = client.get(address)
            sent_to_sign_in = (answer.status_code == 302
                               and answer["Location"].startswith(reverse("admin:login")))
            assert sent_to_sign_in == (role != "staff"), (role, address, answer.status_code)
        client.logout()


def test_uploaded_files_are_not_served_from_a_media_address(client, registry_data, settings):
    name = registry_data["corpus"].file.name  # corpora/<generated name>
    assert (Path(settings.MEDIA_ROOT) / name).is_file()
    for address in (f"{settings.MEDIA_URL}{name}", f"/media/{name}", f"/{name}"):
        answer = client.get(address, follow=True)
        assert answer.status_code == 404, address
        assert registry_data["corpus"].path.read_bytes()[:200] not in answer.content
