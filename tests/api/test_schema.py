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
