"""The pages of evolution: "Extend this version" opens the run form prefilled, the run and the
version name the parent, and ``/diff/`` says what changed."""

import pytest

from tests.bpe.corpora import CHINESE
from tests.registry.helpers import import_text
from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import execute_training_run

pytestmark = pytest.mark.django_db


def page(client, url, status=200) -> str:
    answer = client.get(url)
    assert answer.status_code == status, answer.content[:500]
    return answer.content.decode()


def test_extend_a_version_from_its_page_to_a_new_version_that_names_its_parent(client,
                                                                              registry_data):
    import_text((CHINESE + "\n") * 30, "cjk")
    client.force_login(registry_data["staff"])
    version_page = page(client, "/tokenizers/prose-bpe/1/")
    assert "Extend this version" in version_page
    assert "/runs/new/?extends=prose-bpe%401" in version_page
    form = page(client, "/runs/new/?extends=prose-bpe%401")
    assert 'value="prose-bpe@1"' in form and 'value="556"' in form  # 300 + 256 suggested
    refused = client.post("/runs/new/", {"extends": "prose-bpe@1", "corpus": "cjk",
                                         "vocab_size": 200, "min_frequency": 1})
    assert refused.status_code == 400
    assert "must be above the 300 tokens of prose-bpe@1" in refused.content.decode()
    started = client.post("/runs/new/", {"extends": "prose-bpe@1", "corpus": "cjk",
                                         "vocab_size": 330, "min_frequency": 1}, follow=True)
    run = TrainingRun.objects.get(extends__number=1)
    assert f"run {run.pk} queued: extends prose-bpe@1" in started.content.decode()
    execute_training_run(run_id=run.pk)
    run_page = page(client, f"/runs/{run.pk}/")
    assert "Extends" in run_page and "every id of it kept" in run_page
    assert "extends=prose-bpe%401" in run_page  # "Run again with changes" reopens this form
    child = run.versions.get()
    child_page = page(client, f"/tokenizers/prose-bpe/{child.number}/")
    assert "every id of it names the same token here" in child_page
    assert f"What changed since prose-bpe@{child.number - 1}" in child_page
    assert "Training (extends 1)" in page(client, "/tokenizers/prose-bpe/")


def test_the_diff_page_gives_the_verdict_and_the_changed_ids(client, registry_data):
    text = page(client, "/diff/?from=prose-bpe%401&to=prose-bpe%402&corpus=held-out")
    assert 'id="verdict">extends<' in text and "the 300 new ids are 300–599" in text
    assert "Compression ratio" in text and "encode to the same ids" in text
    other = page(client, "/diff/?from=prose-bpe%402&to=prose-bpe%401")
    assert 'id="verdict">incompatible<' in other and "300 ids of prose-bpe@2 name another" in other
    unknown = page(client, "/diff/?from=prose-bpe%401&to=prose-bpe%409", status=404)
    assert "prose-bpe" in unknown


def test_staff_pin_a_golden_gate_an_alias_and_see_a_move_refused_then_forced(client,
                                                                             registry_data):
    client.force_login(registry_data["staff"])
    client.post("/tokenizers/prose-bpe/2/alias", {"alias": "production"})
    pinned = client.post("/tokenizers/prose-bpe/2/goldens", {"text": "The quick brown fox"},
                         follow=True).content.decode()
    assert "golden pinned from prose-bpe@2" in pinned and "✓ keeps it" in pinned
    assert "✗ other ids" in page(client, "/tokenizers/prose-bpe/1/")
    gated = client.post("/tokenizers/prose-bpe/aliases/production/gate",
                        {"tolerance": "1", "back": "2"}, follow=True).content.decode()
    assert "prose-bpe@production is gated with a tolerance of 1%" in gated
    refused = client.post("/tokenizers/prose-bpe/1/alias", {"alias": "production"},
                          follow=True).content.decode()
    assert "the gate of prose-bpe@production refuses prose-bpe@1" in refused
    assert "goldens: 1 golden broken" in refused
    forced = client.post("/tokenizers/prose-bpe/1/alias",
                         {"alias": "production", "force_reason": "roll back"},
                         follow=True).content.decode()
    assert "alias production now points at prose-bpe@1 (forced past the gate: roll back)" \
        in forced
    member = registry_data["member"]
    client.force_login(member)
    assert client.post("/tokenizers/prose-bpe/aliases/production/gate",
                       {"tolerance": ""}).status_code == 403
