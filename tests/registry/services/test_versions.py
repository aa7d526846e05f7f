"""Versions, imports, lifecycle, aliases and downloads (``services.versions``, ``services.staff``,
``services.downloads``)."""


import pytest

from tests.registry.helpers import train
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.canonical import content_digest
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.errors import Conflict, Forbidden, Invalid, NotFound
from tokenizers_app.models import (
    AliasMove,
    Tokenizer,
    TokenizerVersion,
    TrainingRun,
)
from tokenizers_app.services.staff import (
    annotate_version,
    deprecate_version,
    move_alias,
    publish_version,
)
from tokenizers_app.services.versions import import_or_find_tokenizer, import_tokenizer

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


# -- versions, digests, imports -------------------------------------------------------------------

def test_importing_exported_files_gives_back_the_same_version(corpus):
    version = train(corpus, vocab_size=400, special_tokens=["<|endoftext|>"]).versions.get()
    tokenizer = version.load_tokenizer()

    for format in ("native", "hf", "gpt2", "tiktoken"):
        files = dumps_tokenizer(tokenizer, format)
        imported = import_tokenizer(files=files, tokenizer_name="prose-bpe")
        assert imported.pk == version.pk, format


def test_an_imported_tokenizer_becomes_a_new_version_with_its_source(corpus):
    tokenizer = train_bpe(corpus.path, 350).tokenizer()
    files = dumps_tokenizer(tokenizer, "gpt2")

    version = import_tokenizer(files=files, tokenizer_name="imported")

    assert (version.number, version.source, version.status) == (1, "import", "ready")
    assert version.source_detail == "imported from merges.txt, vocab.json"
    loaded = version.load_tokenizer()
    assert loaded.merges == tokenizer.merges and loaded.merge_counts is None
    assert loaded.encode("Hello world") == tokenizer.encode("Hello world")


def test_an_import_says_whether_it_made_the_version_or_found_it(corpus):
    files = dumps_tokenizer(train_bpe(corpus.path, 300).tokenizer(), "hf")
    made, created = import_or_find_tokenizer(files=files, tokenizer_name="imported")
    assert created and made.number == 1
    assert import_or_find_tokenizer(files=files, tokenizer_name="imported") == (made, False)


def test_importing_files_that_are_not_a_tokenizer_leaves_no_rows():
    with pytest.raises(ValueError):
        import_tokenizer(files={"notes.txt": b"hello"}, tokenizer_name="junk")
    assert not Tokenizer.objects.exists() and not TokenizerVersion.objects.exists()


def test_the_digest_ignores_merge_counts(corpus):
    trained = train_bpe(corpus.path, 300).tokenizer()
    without_counts = type(trained)(trained.vocab, trained.merges, [], trained.pattern)
    assert content_digest(trained) == content_digest(without_counts)


def test_a_ready_version_refuses_content_changes(corpus):
    version = train(corpus).versions.get()
    version.pattern = "gpt4"
    with pytest.raises(Conflict, match="immutable; cannot change pattern"):
        version.save()


# -- lifecycle and aliases ------------------------------------------------------------------------

def test_staff_publish_and_deprecate_versions(corpus, staff):
    version = train(corpus).versions.get()

    publish_version(version=version, user=staff)
    assert TokenizerVersion.objects.get(pk=version.pk).lifecycle == "published"
    deprecate_version(version=version, user=staff)
    assert TokenizerVersion.objects.get(pk=version.pk).lifecycle == "deprecated"


def test_other_users_cannot_publish_deprecate_annotate_or_move_aliases(corpus, member):
    version = train(corpus).versions.get()

    for action in (lambda: publish_version(version=version, user=member),
                   lambda: deprecate_version(version=version, user=member),
                   lambda: annotate_version(version=version, notes="x", user=member),
                   lambda: move_alias(version=version, name="production", user=member),
                   lambda: publish_version(version=version, user=None)):
        with pytest.raises(Forbidden, match="only staff"):
            action()
    version.refresh_from_db()
    assert (version.lifecycle, version.notes, version.aliases.count()) == ("draft", "", 0)


def test_every_alias_move_is_recorded_with_who_and_from_where(corpus, staff):
    first = train(corpus, vocab_size=300).versions.get()
    second = train(corpus, vocab_size=320).versions.get()

    move_alias(version=first, name="production", user=staff)
    alias = move_alias(version=second, name="production", user=staff)

    assert alias.version == second
    moves = [(m.from_version, m.to_version, m.moved_by) for m in AliasMove.objects.order_by("id")]
    assert moves == [(None, first, staff), (first, second, staff)]
    assert TokenizerVersion.objects.resolve("prose-bpe@production") == second


@pytest.mark.parametrize("name", ["3", "Prod", "a b", ""])
def test_alias_names_that_could_be_misread_are_refused(corpus, staff, name):
    version = train(corpus).versions.get()
    with pytest.raises(Invalid, match="alias .* is not valid") as refused:
        move_alias(version=version, name=name, user=staff)
    assert refused.value.field == "name"


@pytest.mark.parametrize("name, valid", [("production", True), ("a", True), ("b-2_x", True),
                                         ("a" * 50, True), ("a" * 51, False), ("-a", False),
                                         ("Prod", False), ("a.b", False)])
def test_the_pages_route_exactly_the_alias_names_the_service_accepts(name, valid):
    """One rule (``models.ALIAS_PATTERN``) for the service's check and the pages' URLs."""
    from django.urls import NoReverseMatch, reverse

    from tokenizers_app.services.staff import check_alias_name

    try:
        routed = bool(reverse("version", args=["prose-bpe", name]))
    except NoReverseMatch:
        routed = False
    try:
        accepted = check_alias_name(name) == name
    except ValueError:
        accepted = False
    assert routed == accepted == valid


def test_refs_resolve_by_number_alias_or_latest_and_explain_misses(corpus, staff):
    first = train(corpus, vocab_size=300).versions.get()
    second = train(corpus, vocab_size=320).versions.get()
    move_alias(version=first, name="candidate", user=staff)
    resolve = TokenizerVersion.objects.resolve

    assert [resolve("prose-bpe@1"), resolve("prose-bpe@candidate"), resolve("prose-bpe")] == [
        first, first, second]
    with pytest.raises(NotFound, match=r"has no version 7 \(versions: 1, 2\)"):
        resolve("prose-bpe@7")
    with pytest.raises(NotFound, match=r"has no alias 'prod' \(aliases: candidate\)"):
        resolve("prose-bpe@prod")
    with pytest.raises(NotFound, match="no tokenizer named 'nope'"):
        resolve("nope@1")
    with pytest.raises(Invalid, match="'prose-bpe@' names no version: write a number or an"):
        resolve("prose-bpe@")  # not silently the latest


def test_the_encodes_lookup_finds_what_resolve_finds_reading_the_digest_alone(corpus, staff):
    first = train(corpus, vocab_size=300).versions.get()
    second = train(corpus, vocab_size=320).versions.get()
    move_alias(version=first, name="candidate", user=staff)
    found = [TokenizerVersion.objects.digest_only("prose-bpe", ref) for ref in ("1", "2",
                                                                                "candidate")]
    assert [(v.pk, v.digest) for v in found] == [(first.pk, first.digest),
                                                 (second.pk, second.digest)] + [
        (first.pk, first.digest)]
    assert all(v.get_deferred_fields() >= {"number", "tokenizer_id", "status"} for v in found)
    assert found[2].cached_tokenizer().merges == first.load_tokenizer().merges
    move_alias(version=second, name="candidate", user=staff)
    assert TokenizerVersion.objects.digest_only("prose-bpe", "candidate").pk == second.pk
    TokenizerVersion.objects.filter(pk=second.pk).update(status=TokenizerVersion.Status.BUILDING)
    for ref, error, message in [("2", NotFound, "no version 2"), ("7", NotFound, "no version 7"),
                                ("prod", NotFound, r"has no alias 'prod' \(aliases: candidate"),
                                ("Prod", Invalid, "'Prod' is not a version number or an alias"),
                                ("", Invalid, "names no version")]:
        with pytest.raises(error, match=message):
            TokenizerVersion.objects.digest_only("prose-bpe", ref)
    with pytest.raises(NotFound, match="no tokenizer named 'nope'"):
        TokenizerVersion.objects.digest_only("nope", "candidate")


def test_a_list_of_refs_resolves_in_order_and_explains_what_is_wrong(corpus, staff):
    first = train(corpus, vocab_size=400).versions.get()
    second = train(corpus, vocab_size=500).versions.get()
    move_alias(version=first, name="production", user=staff)

    assert TokenizerVersion.objects.resolve_many("prose-bpe@2, prose-bpe@production") == [
        second, first]
    for refs, message in [("", "name at least one version"),
                          ("prose-bpe@1,prose-bpe@production", "the same version twice"),
                          (",".join(["prose-bpe@1"] * 9), "at most 8 versions")]:
        with pytest.raises(Invalid, match=message):
            TokenizerVersion.objects.resolve_many(refs)


def test_the_lineage_of_a_trained_version_names_its_corpus_parameters_and_timings(corpus):
    run = train(corpus, vocab_size=400, special_tokens=["<s>"])
    lineage = run.versions.get().lineage()

    assert lineage["source"] == "training" and len(lineage["digest"]) == 64
    assert lineage["training_run"]["corpora"] == [
        {"name": "prose", "sha256": corpus.sha256, "size_bytes": corpus.size_bytes, "weight": 1}]
    assert lineage["training_run"]["special_tokens"] == ["<s>"]
    assert set(lineage["training_run"]["stage_seconds"]) == {"count", "merge", "save"}
