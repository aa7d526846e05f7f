"""schemathesis against /api/openapi.json: generated requests to every operation, with a
member's key, find no server error and no response that breaks the schema.

(The operations are driven here with Hypothesis directly: schemathesis's own pytest plugin does
not run under this pytest version.)"""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.django_db

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
EXAMPLES = 25  # per operation


@pytest.fixture
def api_schema(db):
    """The schema, called through the WSGI app in this process; as Django's test client does,
    requests keep the test's database connection open (no close at request end)."""
    from django.core import signals
    from django.db import close_old_connections

    from registry.wsgi import application

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/openapi.json", application)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def test_the_api_answers_every_operation_within_its_schema(api_schema, registry):
    auth = {"Authorization": f"Bearer {registry['member_key']}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 16

    for operation in operations:
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def answers_within_schema(case):
            case.headers = {**(case.headers or {}), **auth}
            case.call_and_validate(checks=CHECKS)

        answers_within_schema()


def unnamed_objects(schema: dict, components: dict, where: str, seen: set) -> list[str]:
    """Where under ``schema`` an object is left unnamed: ``additionalProperties: true``, or an
    object with neither properties nor a typed value (``dict[str, X]`` names X, so it passes)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return []
        return unnamed_objects(components[name], components, f"{where} -> {name}", seen | {name})
    found = []
    extra = schema.get("additionalProperties")
    if extra is True or extra == {} or (schema.get("type") == "object" and not
                                        schema.get("properties") and not isinstance(extra, dict)):
        found.append(where)
    for key, value in schema.get("properties", {}).items():
        found += unnamed_objects(value, components, f"{where}.{key}", seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += unnamed_objects(schema[key], components, f"{where}[{key}]", seen)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for part in schema.get(key, []):
            found += unnamed_objects(part, components, where, seen)
    return found


def test_every_json_answer_names_its_properties(client):
    schema = client.get("/api/openapi.json").json()
    components = schema["components"]["schemas"]
    checked, unnamed = 0, []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                body = response.get("content", {}).get("application/json")
                if not str(status).startswith("2") or body is None:
                    continue
                checked += 1
                where = f"{method.upper()} {path} {status}"
                top = body["schema"]
                while "$ref" in top:
                    top = components[top["$ref"].rsplit("/", 1)[-1]]
                if not top.get("properties"):
                    unnamed.append(where)
                unnamed += unnamed_objects(body["schema"], components, where, set())
    assert checked >= 17
    assert unnamed == []


def test_the_check_finds_an_unnamed_object():
    components = {"Out": {"type": "object", "properties": {
        "fine": {"type": "object", "additionalProperties": {"type": "number"}},
        "loose": {"type": "object", "additionalProperties": True},
        "items": {"type": "array", "items": {"type": "object"}}}}}
    assert unnamed_objects({"$ref": "#/components/schemas/Out"}, components, "GET", set()) == [
        "GET -> Out.loose", "GET -> Out.items[items]"]


def test_every_operation_lists_the_refusals_the_api_answers(client):
    """A throttled client gets 429, and a database or task queue that does not answer gets 503,
    from any operation (``api/errors.py``): the document says so for each."""
    schema = client.get("/api/openapi.json").json()
    missing = [f"{method.upper()} {path} {status}"
               for path, operations in schema["paths"].items()
               for method, operation in operations.items()
               for status in ("429", "503") if status not in operation["responses"]]
    assert missing == []
