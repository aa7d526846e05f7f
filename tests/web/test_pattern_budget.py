"""Issue 18, item 1: a stored pattern cannot pin the web server.

The backtracking pattern of the issue is refused, with the reason, where a pattern enters the
registry (the run form, the API's runs and imports in every format that holds a pattern, the
commands). A version stored before that check (written here straight through the service that
adds versions) is served within the web budget: encoding it answers 422 in words, on the API and
on the playground. A request that finds no slot for splitting with a custom pattern (the other
requests of the process hold them) is answered 429 in words. Against gunicorn:
tests/test_deployment.py and bench/load.py."""

import io
import json
import re
import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.test import RequestFactory

from tokenizers_app.bpe import Tokenizer as CoreTokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.match_budget import PatternBusy, PatternTooSlow
from tokenizers_app.models import ApiKey, Tokenizer, TokenizerVersion, TrainingRun
from tokenizers_app.pattern_budget import PatternBudgetMiddleware, process_gate
from tokenizers_app.services.versions import add_version

pytestmark = pytest.mark.django_db

ISSUE_18 = r"(?:(?:x|x)+)+y|[\s\S]"
REFUSED = (f"pattern {ISSUE_18!r} took over 0.25 s to split a run of 3,000 'x': it backtracks "
           f"without end on such text")
TOO_SLOW = "this version's pattern takes too long on this text"


def with_pattern(version: TokenizerVersion, pattern: str) -> CoreTokenizer:
    core = version.load_tokenizer()
    return CoreTokenizer(core.vocab, core.merges, core.special_ids, pattern, core.merge_counts)


def stored_before_the_check(registry_data, pattern: str = ISSUE_18) -> TokenizerVersion:
    """A version with ``pattern``, written as a row written before the adversarial check was."""
    tokenizer = Tokenizer.objects.create(name="trap")
    return add_version(tokenizer=tokenizer, core=with_pattern(registry_data["small"], pattern),
                       source=TokenizerVersion.Source.IMPORT, source_detail="written directly")


def files_of(core: CoreTokenizer, format: str) -> list:
    streams = []
    for name, data in dumps_tokenizer(core, format, "trap").items():
        streams.append(io.BytesIO(data))
        streams[-1].name = name
    return streams


def encode(client, ref: str, text: str):
    return client.post(f"/api/tokenizers/{ref}/encode", json.dumps({"text": text}),
                       content_type="application/json")


# -- refused where a pattern enters ---------------------------------------------------------------

def test_the_run_form_refuses_the_pattern_beside_its_field(client, registry_data):
    client.force_login(registry_data["member"])
    response = client.post("/runs/new/", {
        "tokenizer": "trap", "corpus": "prose", "pattern": "custom", "custom_pattern": ISSUE_18,
        "vocab_size": 400, "special_tokens": "", "min_frequency": 1, "sweep": ""})
    assert response.status_code == 400
    assert any(REFUSED in error for error in response.context["form"].errors["pattern"])
    assert REFUSED.replace("'", "&#x27;") in response.content.decode()
    assert not TrainingRun.objects.filter(tokenizer__name="trap").exists()


def test_the_api_refuses_a_run_with_the_pattern(client, registry_data):
    _, key = ApiKey.objects.create_key(registry_data["member"], "ci")
    response = client.post("/api/runs", json.dumps({
        "tokenizer": "trap", "corpora": ["prose"], "vocab_size": 400, "pattern": ISSUE_18}),
        content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 400 and REFUSED in response.json()["detail"]
    assert not TrainingRun.objects.filter(tokenizer__name="trap").exists()


@pytest.mark.parametrize("format", ["native", "minbpe", "tiktoken", "hf"])
def test_an_import_holding_the_pattern_is_refused_in_every_format(client, registry_data, format):
    _, key = ApiKey.objects.create_key(registry_data["member"], "ci")
    files = files_of(with_pattern(registry_data["small"], ISSUE_18), format)
    response = client.post("/api/tokenizers/trap/import", {"files": files, "format": format},
                           HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 400 and REFUSED in response.json()["detail"]
    assert not TokenizerVersion.objects.filter(tokenizer__name="trap").exists()


def test_the_commands_refuse_the_pattern(registry_data, tmp_path):
    [(name, data)] = dumps_tokenizer(with_pattern(registry_data["small"], ISSUE_18), "native",
                                     "trap").items()
    (tmp_path / name).write_bytes(data)
    with pytest.raises(CommandError, match=re.escape(REFUSED)):
        call_command("import_tokenizer", str(tmp_path / name), "--tokenizer", "trap")
    with pytest.raises(CommandError, match=re.escape(REFUSED)):
        call_command("train", "--corpus", "prose", "--tokenizer", "trap", "--vocab-size", "400",
                     "--pattern", ISSUE_18)
    assert not Tokenizer.objects.filter(name="trap").exists()


def test_a_good_custom_pattern_is_imported(client, registry_data):
    _, key = ApiKey.objects.create_key(registry_data["member"], "ci")
    files = files_of(with_pattern(registry_data["small"], r"\w+|[^\w\s]+|\s+"), "native")
    response = client.post("/api/tokenizers/fine/import", {"files": files},
                           HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 201 and response.json()["pattern"] == r"\w+|[^\w\s]+|\s+"


# -- a stored one is served within the budget ---------------------------------------------------

def test_encoding_a_stored_pattern_answers_422_within_the_budget(client, registry_data,
                                                                 settings):
    settings.WEB_MATCH_SECONDS = 0.5
    stored_before_the_check(registry_data)
    started, cpu = time.monotonic(), time.process_time()
    response = encode(client, "trap/versions/1", "x" * 30)
    assert time.process_time() - cpu < 0.5 + 0.5  # the budget, and the request around it
    assert time.monotonic() - started < 10  # not the 60 s of MATCH_SECONDS, even on a busy box
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.startswith(f"{TOO_SLOW}: splitting 30 characters with {ISSUE_18!r} ran past "
                             f"the 0.5 s of processor time a request may spend splitting text "
                             f"(WEB_MATCH_SECONDS)")
    assert encode(client, "prose-bpe/versions/1", "x" * 30).status_code == 200  # the next one
    assert client.get("/health").status_code == 200


def test_the_same_version_encodes_text_it_can_split_in_time(client, registry_data, settings):
    settings.WEB_MATCH_SECONDS = 0.5
    stored_before_the_check(registry_data)
    response = encode(client, "trap/versions/1", "plain words, no long run of x")
    assert response.status_code == 200
    assert response.json()["spans"][-1][1] == len("plain words, no long run of x")


def test_the_playground_shows_the_reason_with_status_422(client, registry_data, settings):
    settings.WEB_MATCH_SECONDS = 0.5
    stored_before_the_check(registry_data)
    started = time.monotonic()
    response = client.get("/playground/", {"versions": "prose-bpe@1,trap@1", "text": "x" * 30})
    assert time.monotonic() - started < 10
    assert response.status_code == 422
    html = response.content.decode()
    assert TOO_SLOW.replace("'", "&#x27;") in html and 'role="alert"' in html
    assert 'name="text"' in html  # the page, with its form, not a bare error
    fine = client.get("/playground/", {"versions": "prose-bpe@1,trap@1", "text": "ok"})
    assert fine.status_code == 200 and "trap@1" in fine.content.decode()


def test_any_other_page_that_meets_the_budgets_end_answers_422_in_words(settings):
    settings.WEB_MATCH_SECONDS = 0.5

    def page_that_encodes(request):
        return CoreTokenizer({i: bytes([i]) for i in range(256)}, [], pattern=ISSUE_18) \
            .encode("x" * 30)

    middleware = PatternBudgetMiddleware(page_that_encodes)
    request = RequestFactory().get("/somewhere/")
    with pytest.raises(PatternTooSlow) as slow:
        middleware(request)
    response = middleware.process_exception(request, slow.value)
    assert response.status_code == 422 and TOO_SLOW in response.content.decode()
    assert middleware.process_exception(request, ValueError("other")) is None


# -- one request at a time splits with a custom pattern; the others wait or are refused --------

BUSY = "the server is busy splitting text with custom patterns for other requests"


@pytest.fixture
def slot_taken(settings):
    """Another request holds the web process's one slot for splitting, and none may wait."""
    settings.WEB_MATCH_SECONDS, settings.WEB_MATCH_SLOTS, settings.WEB_MATCH_QUEUE = 0.5, 1, 0
    gate = process_gate(1, 0, 0.5)
    held, release = threading.Event(), threading.Event()

    def other_request():
        with gate.slot():
            held.set()
            release.wait()

    thread = threading.Thread(target=other_request)
    thread.start()
    held.wait()
    yield
    release.set()
    thread.join()


def test_a_custom_pattern_encode_finding_no_slot_answers_429_in_words(client, registry_data,
                                                                       slot_taken):
    stored_before_the_check(registry_data)
    response = encode(client, "trap/versions/1", "plain words")
    assert response.status_code == 429
    assert response.json()["detail"] == (
        f"{BUSY} (1 at once and 0 waiting in each web process: WEB_MATCH_SLOTS, "
        f"WEB_MATCH_QUEUE): nothing was encoded; send the request again in a few seconds")
    assert encode(client, "prose-bpe/versions/1", "plain words").status_code == 200
    assert client.get("/health").status_code == 200


def test_the_playground_says_it_is_busy_with_status_429(client, registry_data, slot_taken):
    stored_before_the_check(registry_data)
    response = client.get("/playground/", {"versions": "prose-bpe@1,trap@1", "text": "ok"})
    assert response.status_code == 429
    html = response.content.decode()
    assert BUSY in html and 'role="alert"' in html and 'name="text"' in html


def test_a_page_finding_no_slot_answers_429_with_retry_after(settings):
    settings.WEB_MATCH_SECONDS, settings.WEB_MATCH_SLOTS, settings.WEB_MATCH_QUEUE = 0.5, 1, 0
    middleware = PatternBudgetMiddleware(lambda request: None)
    busy = PatternBusy(f"{BUSY} (...)")
    response = middleware.process_exception(RequestFactory().get("/somewhere/"), busy)
    assert response.status_code == 429 and response["Retry-After"] == "5"
    assert BUSY in response.content.decode()


def test_other_requests_processor_time_is_not_counted_against_a_request(settings):
    """A request whose split fits its budget is served while another request of the same
    process spends more than the whole budget during it (each thread's own processor time is
    what counts: tests/bpe/test_match_budget.py)."""
    from tests.bpe.test_match_budget import burn
    from tokenizers_app.bpe.pretokenize import PreTokenizer

    settings.WEB_MATCH_SECONDS, settings.WEB_MATCH_SLOTS, settings.WEB_MATCH_QUEUE = 0.5, 1, 1

    def page_that_splits(request):
        batches = PreTokenizer(r"[^\n]*\n|[\s\S]").iter_split("ab\n" + "a" * 3000, batch=100)
        first = next(batches)
        other = threading.Thread(target=burn, args=(0.8,))  # another request's work
        other.start()
        other.join()
        return len(first) + sum(len(batch) for batch in batches)

    assert PatternBudgetMiddleware(page_that_splits)(RequestFactory().get("/x/")) == 3001
