"""Parallel sets: read from a TSV, JSON Lines or a zip of Django's own ``.po`` files, each
language an evaluation corpus of the set; the premium per language (tokens on the language /
tokens on the pivot, the same lines) equals the library's own count, and the page, the API and
``manage.py parity`` give the same numbers."""

import io
import json
import zipfile
from pathlib import Path
from unittest import mock

import django
import pytest
from django.core.management import CommandError, call_command

from tests.fixtures import gpt2_fixture_dir
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.bpe.parallel_text import read_jsonl, read_tsv
from tokenizers_app.errors import Conflict, Invalid
from tokenizers_app.models import Corpus, Evaluation, ParallelSet
from tokenizers_app.services.evaluations import run_evaluation
from tokenizers_app.services.parallel import import_parallel_set
from tokenizers_app.services.parity import as_json, parity
from tokenizers_app.services.versions import import_tokenizer
from tokenizers_app.storage import get_store

pytestmark = pytest.mark.django_db
LOCALE = Path(django.__file__).parent / "conf" / "locale"
LANGUAGES = ["de", "fr", "ja", "ru", "ar", "zh_Hans"]


def django_po_zip(languages=LANGUAGES) -> bytes:
    """A zip of Django's own catalogs, as a user would pack their project's locale folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for language in languages:
            path = LOCALE / language / "LC_MESSAGES" / "django.po"
            archive.writestr(f"locale/{language}/LC_MESSAGES/django.po", path.read_bytes())
    return buffer.getvalue()


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def no_broker():
    with mock.patch("celery.app.task.Task.apply_async"):
        yield


def evaluate_all():
    for evaluation in Evaluation.objects.filter(status=Evaluation.Status.QUEUED):
        run_evaluation(evaluation_id=evaluation.pk)


@pytest.fixture
def evaluated(media, no_broker):
    """Two trained versions, then a set of six of Django's languages, every pair evaluated."""
    corpus = import_text(sample_text(30_000), "prose")
    small = train(corpus, "prose-bpe", vocab_size=300, special_tokens=["<|endoftext|>"])
    large = train(corpus, "prose-bpe", vocab_size=600, special_tokens=["<|endoftext|>"])
    created = import_parallel_set(data=django_po_zip(), name="django", original_filename="po.zip")
    evaluate_all()
    return {"set": created, "versions": [small.versions.get(), large.versions.get()]}


# -- reading ---------------------------------------------------------------------------------------

def test_a_tsv_row_with_a_missing_field_is_dropped_from_every_language_and_counted():
    read = read_tsv("en\tde\tfr\nyes\tja\toui\nno\tnein\nmaybe\t\tpeut-être\nhi\thallo\tsalut\n")
    assert read.lines == {"en": ["yes", "hi"], "de": ["ja", "hallo"], "fr": ["oui", "salut"]}
    assert read.dropped == 2


def test_a_json_lines_object_without_a_language_is_dropped_and_counted():
    read = read_jsonl('{"en": "yes", "de": "ja"}\n{"en": "no"}\n{"de": "hallo", "en": "hi\\nyou"}\n')
    assert read.lines == {"en": ["yes", "hi you"], "de": ["ja", "hallo"]}
    assert read.dropped == 1


def test_a_line_that_is_not_json_is_refused_naming_it():
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_jsonl('{"en": "yes", "de": "ja"}\n{"en": \n')


# -- storing ---------------------------------------------------------------------------------------

def test_a_po_zip_becomes_one_evaluation_corpus_per_language_with_the_counts_said(media, no_broker):
    created = import_parallel_set(data=django_po_zip(), name="django")
    corpora = created.corpora()
    assert sorted(corpora) == ["ar", "de", "en", "fr", "ja", "ru", "zh-CN"]
    assert created.pivot == "en" and created.source_format == "po"
    assert {c.line_count for c in corpora.values()} == {created.line_count}
    assert created.line_count > 100
    assert created.dropped_lines > 0  # a message some of the six lack
    assert created.skipped["plural forms"] > 0 and created.skipped["empty translations"] > 0
    german = Corpus.objects.get(name="django.de")
    assert german.language == "de" and german.is_evaluation
    assert "Mitteilungen" in get_store().read_bytes(german.object_name).decode()
    assert Corpus.objects.get(name="django.ja").scripts.get("Han", 0) > 0


def test_a_bad_file_leaves_no_set_and_no_corpus_and_says_the_line(media, no_broker):
    with pytest.raises(Invalid, match="line 2: not JSON"):
        import_parallel_set(data=b'{"en": "a", "de": "b"}\n{oops\n', name="bad")
    bad_po = io.BytesIO()
    with zipfile.ZipFile(bad_po, "w") as archive:
        archive.writestr("de.po", b'msgid "a"\nmsgstr "b\\q"\n')
    with pytest.raises(Invalid, match=r"de.po line 2: unknown escape \\q"):
        import_parallel_set(data=bad_po.getvalue(), name="bad")
    with pytest.raises(Invalid, match="pivot 'es' is not one of"):
        import_parallel_set(data=b"en\tde\nyes\tja\n", name="bad", pivot="es")
    assert not ParallelSet.objects.exists() and not Corpus.objects.exists()


def test_a_second_set_of_the_same_name_is_refused(media, no_broker):
    import_parallel_set(data=b"en\tde\nyes\tja\n", name="tiny")
    with pytest.raises(Conflict, match="already exists"):
        import_parallel_set(data=b"en\tfr\nyes\toui\n", name="tiny")


# -- the premium -----------------------------------------------------------------------------------

def test_every_ready_version_is_evaluated_on_every_language_and_the_premium_is_a_token_ratio(
        evaluated):
    result = parity(parallel_set=evaluated["set"])
    assert [row.label for row in result.versions] == ["prose-bpe@1", "prose-bpe@2"]
    for row in result.versions:
        pivot_tokens = row.scores["en"].tokens
        assert row.scores["en"].premium == 1.0
        for language, score in row.scores.items():
            assert score.status == "succeeded"
            assert score.premium == round(score.tokens / pivot_tokens, 4)
        premiums = sorted(s.premium for lang, s in row.scores.items() if lang != "en")
        assert row.worst_premium == premiums[-1] > 1.5  # an English-trained tokenizer
        assert row.median_premium == round((premiums[2] + premiums[3]) / 2, 4)
    assert "ja" in result.spaceless and "zh-CN" in result.spaceless  # its header names zh_CN


def test_the_leaderboard_leaves_the_sets_languages_to_the_sets_page(client, evaluated):
    page = client.get("/").content.decode()
    assert "django.de" not in page


def test_the_page_the_api_and_the_command_give_the_same_numbers(client, evaluated):
    expected = as_json(parity(parallel_set=evaluated["set"]))
    api = client.get("/api/parallel-sets/django/parity").json()
    out = io.StringIO()
    call_command("parity", "--set", "django", stdout=out)
    assert api == json.loads(out.getvalue()) == json.loads(json.dumps(expected))
    page = client.get("/parallel/django/?version=prose-bpe@2").content.decode()
    for row in expected["versions"]:
        assert f"{row['worst_premium']:.2f}×" in page
        assert f"{row['median_premium']:.2f}×" in page
        for language, score in row["languages"].items():
            assert f"{score['premium']:.2f}×" in page
    large = expected["versions"][1]["languages"]
    assert f"<td class=\"num\">{large['ru']['tokens']}</td>" in page


def test_the_command_takes_versions_and_names_unknown_ones(evaluated):
    out = io.StringIO()
    call_command("parity", "prose-bpe@2", "--set", "django", stdout=out)
    assert [row["version"] for row in json.loads(out.getvalue())["versions"]] == ["prose-bpe@2"]
    with pytest.raises(CommandError, match="no parallel set named 'nope'"):
        call_command("parity", "--set", "nope")
    with pytest.raises(CommandError, match="no tokenizer named 'ghost'"):
        call_command("parity", "ghost@1", "--set", "django")


def test_the_page_sorts_languages_by_a_versions_premium_and_shows_where_two_differ(
        client, evaluated):
    result = parity(parallel_set=evaluated["set"])
    worst = result.versions[0].worst_language
    page = client.get("/parallel/django/?sort=prose-bpe@1").content.decode()
    heat = page[page.index('id="heat-map-table"'):]
    first_rows = heat.split('<th scope="row"><a href="?language=')[1:3]
    assert first_rows[0].startswith("en&") and first_rows[1].startswith(f"{worst}&")
    assert "Where two versions differ most" in page


# -- exact to the library --------------------------------------------------------------------------

def corpus_text(corpus) -> str:
    return get_store().read_bytes(corpus.object_name).decode()


def test_the_premium_of_gpt2_is_tiktokens_own_count(media, no_broker):
    tiktoken = pytest.importorskip("tiktoken")
    from tests.bpe.test_tokenizer import ENDOFTEXT, GPT2_PATTERN, _gpt2_byte_alphabet

    folder = gpt2_fixture_dir()
    alphabet = _gpt2_byte_alphabet()
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    peer = tiktoken.Encoding(
        "gpt2-peer", pat_str=GPT2_PATTERN, special_tokens={ENDOFTEXT: vocab[ENDOFTEXT]},
        mergeable_ranks={bytes(alphabet[c] for c in token): i for token, i in vocab.items()
                         if token != ENDOFTEXT})
    files = {name: (folder / name).read_bytes() for name in ("vocab.json", "merges.txt")}
    version = import_tokenizer(files=files, tokenizer_name="gpt2")
    created = import_parallel_set(data=django_po_zip(), name="django")
    evaluate_all()
    counts = {lang: len(peer.encode_ordinary(corpus_text(c)))
              for lang, c in created.corpora().items()}
    row = parity(parallel_set=created, versions=[version]).versions[0]
    for language, score in row.scores.items():
        assert score.tokens == counts[language], language
        assert score.premium == round(counts[language] / counts["en"], 4)


def test_the_premium_of_hf_tokenizers_and_sentencepiece_is_their_own_count(media, no_broker):
    hf = pytest.importorskip("tokenizers")
    spm = pytest.importorskip("sentencepiece")
    from tests.engines.trained import llama_bpe_json, sentencepiece_model

    llama_json, model = llama_bpe_json(), sentencepiece_model("unigram")
    llama = import_tokenizer(files={"tokenizer.json": llama_json}, tokenizer_name="llama")
    unigram = import_tokenizer(files={"spm.model": model}, tokenizer_name="spm")
    created = import_parallel_set(data=django_po_zip(["de", "ru", "ja"]), name="django")
    evaluate_all()
    hf_peer = hf.Tokenizer.from_str(llama_json.decode())
    spm_peer = spm.SentencePieceProcessor(model_proto=model)
    result = parity(parallel_set=created, versions=[llama, unigram])
    for language, corpus in created.corpora().items():
        text = corpus_text(corpus)
        assert result.versions[0].scores[language].tokens == len(
            hf_peer.encode(text, add_special_tokens=False).ids), language
        assert result.versions[1].scores[language].tokens == len(spm_peer.encode(text)), language


def test_the_playground_shows_one_line_in_every_language_with_its_premium_on_that_line(
        client, evaluated):
    created = evaluated["set"]
    page = client.get("/playground/", {"set": "django", "line": "3",
                                       "versions": "prose-bpe@1"}).content.decode()
    corpora = created.corpora()
    small = evaluated["versions"][0].load_tokenizer()
    lines = {lang: get_store().read_bytes(c.object_name).decode().splitlines()[2]
             for lang, c in corpora.items()}
    pivot_count = len(small.encode_ordinary(lines["en"]))
    for language, text in lines.items():
        count = len(small.encode_ordinary(text))
        assert f'id="line-{language}"' in page
        assert f'data-count="{count}"' in page
        assert f"premium on this line {count / pivot_count:.2f}×" in page
    refused = client.get("/playground/", {"set": "django", "line": "99999"})
    assert f"choose 1 to {created.line_count}" in refused.content.decode()
    assert client.get("/playground/", {"set": "nope"}).status_code == 404


def test_existing_corpora_of_equal_line_counts_make_a_set_and_unequal_ones_are_refused(
        media, no_broker):
    import_text("hello\nthank you\n", "web-en")
    import_text("hallo\ndanke\n", "web-de")
    import_text("bonjour\n", "web-fr")
    out = io.StringIO()
    call_command("import_parallel", "--corpora", "en=web-en", "de=web-de", "--name", "web",
                 stdout=out)
    assert "2 aligned lines in 2 languages" in out.getvalue()
    created = ParallelSet.objects.get(name="web")
    assert created.source_format == "corpora"
    assert Corpus.objects.get(name="web-de").language == "de"
    assert Corpus.objects.get(name="web-de").is_evaluation
    with pytest.raises(CommandError, match="equal line counts: en 2, fr 1"):
        call_command("import_parallel", "--corpora", "en=web-en", "fr=web-fr", "--name", "w2")
    with pytest.raises(CommandError, match="no corpus named 'ghost'"):
        call_command("import_parallel", "--corpora", "en=ghost", "de=web-de", "--name", "w3")


def test_import_parallel_reads_a_file_and_says_the_counts(media, no_broker, tmp_path):
    path = tmp_path / "set.tsv"
    path.write_text("en\tde\nyes\tja\nno\n")
    out = io.StringIO()
    call_command("import_parallel", str(path), "--name", "tiny", stdout=out)
    assert "1 aligned lines in 2 languages (pivot en); 1 lines dropped" in out.getvalue()
    with pytest.raises(CommandError, match="is not a BCP 47 tag"):
        call_command("import_parallel", str(path), "--name", "t2", "--pivot", "english!")


def test_a_corpus_of_a_set_is_not_deleted_under_it(media, no_broker):
    from tokenizers_app.services.deletions import corpus_dependents

    import_parallel_set(data=b"en\tde\nyes\tja\n", name="tiny")
    assert corpus_dependents(Corpus.objects.get(name="tiny.de")) == [
        "1 parallel set holding it as a language (tiny)"]


def test_the_compare_page_takes_a_parallel_set(client, evaluated):
    result = parity(parallel_set=evaluated["set"])
    page = client.get("/compare/", {"versions": "prose-bpe@1,prose-bpe@2", "set": "django"})
    text = page.content.decode()
    table = text[text.index('id="set-premiums-table"'):text.index("</table>",
                                                               text.index("set-premiums-table"))]
    for language in result.languages:
        a, b = (row.scores[language].premium for row in result.versions)
        assert f"{a:.2f}×" in table and f"{b:.2f}×" in table
    low = min(result.versions[0].scores["ru"].premium, result.versions[1].scores["ru"].premium)
    assert f"{low:.2f}× ★" in table
    assert "no parallel set named &#x27;nope&#x27;" in client.get(
        "/compare/", {"versions": "prose-bpe@1", "set": "nope"}).content.decode()


def test_a_languages_name_orders_the_versions_by_their_premium_on_it(client, evaluated):
    first = Evaluation.objects.get(version=evaluated["versions"][0], corpus__name="django.ru")
    first.metrics["tokens"] *= 10  # now version 1 has the higher premium on ru: listed second
    Evaluation.objects.filter(pk=first.pk).update(metrics=first.metrics)
    result = parity(parallel_set=evaluated["set"])
    premiums = {row.label: row.scores["ru"].premium for row in result.versions}
    page = client.get("/parallel/django/?language=ru").content.decode()
    heat = page[page.index('id="heat-map-table"'):]
    header = heat[:heat.index("</thead>")]
    assert premiums["prose-bpe@1"] > premiums["prose-bpe@2"]
    assert header.index("prose-bpe@2") < header.index("prose-bpe@1")
    assert "ru</a> ◀" in heat
