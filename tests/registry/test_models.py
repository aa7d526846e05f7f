"""The records: row I/O of versions, names."""

import pytest

from tests.bpe.test_canonical import shuffled_ids
from tokenizers_app.bpe import Tokenizer, train_bpe
from tokenizers_app.bpe.canonical import VOCAB_KINDS, content_digest
from tokenizers_app.errors import Conflict, Invalid
from tokenizers_app.models import (
    MergeRule,
    TokenizerVersion,
    VocabEntry,
    check_name,
)
from tokenizers_app.services.versions import add_version

from .helpers import sample_text


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    return train_bpe([sample_text(20_000)], 400, special_tokens=["<|endoftext|>"]).tokenizer()


def store(tokenizer: Tokenizer, name: str = "t") -> TokenizerVersion:
    from tokenizers_app.models import Tokenizer as TokenizerRecord

    record, _ = TokenizerRecord.objects.get_or_create(name=name)
    return add_version(tokenizer=record, core=tokenizer, source="import")


@pytest.mark.django_db
def test_load_tokenizer_rebuilds_exactly_what_was_stored(trained):
    version = store(trained)

    loaded = version.load_tokenizer()

    assert (loaded.vocab, loaded.merges, loaded.merge_counts) == (
        trained.vocab, trained.merges, trained.merge_counts)
    assert (loaded.special_ids, loaded.pattern) == (trained.special_ids, trained.pattern)
    assert MergeRule.objects.filter(version=version).count() == len(trained.merges)
    assert VocabEntry.objects.filter(version=version).count() == len(trained.vocab)


@pytest.mark.django_db
def test_a_standard_layout_vocab_is_derived_on_load_and_equals_its_rows(trained):
    version = store(trained)
    assert version.standard_layout and TokenizerVersion.objects.get(pk=version.pk).standard_layout

    rows = dict(VocabEntry.objects.filter(version=version).values_list("token_id", "token"))
    assert {i: bytes(token) for i, token in rows.items()} == version.load_tokenizer().vocab
    assert not store(shuffled_ids(trained), name="shuffled").standard_layout


@pytest.mark.django_db
def test_load_tokenizer_keeps_the_ids_of_an_imported_vocab(trained):
    imported = shuffled_ids(trained)
    version = store(imported)

    loaded = version.load_tokenizer()

    assert loaded.vocab == imported.vocab and loaded.special_ids == imported.special_ids
    assert loaded.merge_counts is None
    text = "Hello <|endoftext|> world"
    assert loaded.encode(text, allowed_special="all") == imported.encode(text,
                                                                         allowed_special="all")
    assert content_digest(loaded) == version.digest


@pytest.mark.django_db
def test_version_notes_and_lifecycle_stay_editable_once_ready(trained):
    version = store(trained)
    version.notes, version.lifecycle = "shipped in v2", "published"
    version.save()
    version.refresh_from_db()
    assert (version.notes, version.lifecycle) == ("shipped in v2", "published")


@pytest.mark.django_db
def test_a_ready_version_cannot_be_made_building_again(trained):
    version = store(trained)
    version.status = "building"
    with pytest.raises(Conflict, match="cannot change status"):
        version.save()


@pytest.mark.parametrize("name", ["web-en-32k", "a", "v1.2_final", "9" * 100])
def test_check_name_accepts_plain_names(name):
    assert check_name("tokenizer", name) == name


@pytest.mark.parametrize("name", ["", "-x", "a@b", "a/b", "a b", "é", "x" * 101, None, 3])
def test_check_name_refuses_names_that_break_refs_or_paths(name):
    with pytest.raises(Invalid, match="tokenizer name .* is not valid") as refused:
        check_name("tokenizer", name)
    assert refused.value.field == "tokenizer"


@pytest.mark.django_db
def test_deleting_a_version_deletes_its_rows(trained):
    version = store(trained)
    store(shuffled_ids(trained), name="other")

    version.delete()

    assert not MergeRule.objects.filter(version_id=version.pk).exists()
    assert not VocabEntry.objects.filter(version_id=version.pk).exists()
    assert MergeRule.objects.count() == len(trained.merges)


def test_vocab_entry_kinds_are_the_cores_vocab_kinds_then_the_engines():
    assert tuple(VocabEntry.Kind.values) == (*VOCAB_KINDS, "normal", "unknown", "control")


@pytest.mark.django_db
def test_loaded_tokenizers_are_kept_per_process_by_digest_least_recently_used_first(
        trained, settings):
    settings.LOADED_TOKENIZERS = 1
    first, same = store(trained, "a"), store(trained, "b")  # same content: one digest
    loaded = first.cached_tokenizer()
    assert same.cached_tokenizer() is loaded
    assert loaded.encode_ordinary("the text") == trained.encode_ordinary("the text")
    other = store(Tokenizer(trained.vocab, trained.merges, trained.special_tokens, "gpt4"), "c")
    assert other.cached_tokenizer() is other.cached_tokenizer()
    assert first.cached_tokenizer() is not loaded  # dropped for the other one, loaded again


@pytest.mark.django_db
def test_the_latest_version_is_the_highest_ready_number_wherever_it_is_asked(trained):
    """One definition (``VersionQuerySet.latest_first``) behind the tokenizer list's ``latest``,
    a bare name's ref and the version lists."""
    from tokenizers_app.models import Tokenizer as TokenizerRecord

    for pattern in ("gpt2", "gpt4", "none"):
        store(Tokenizer(trained.vocab, trained.merges, trained.special_tokens, pattern), "t")
    TokenizerVersion.objects.filter(number=3).update(status=TokenizerVersion.Status.BUILDING)
    TokenizerRecord.objects.create(name="empty")

    assert [v.number for v in TokenizerVersion.objects.latest_first()] == [2, 1]
    assert TokenizerVersion.objects.resolve("t").number == 2
    listed = {t.name: (t.ready_versions, t.latest) for t in TokenizerRecord.objects.with_latest()}
    assert listed == {"t": (2, 2), "empty": (0, None)}


@pytest.mark.django_db
@pytest.mark.parametrize("ref", ["t@²", "t@١", "t@Prod", "t@-1", "t@1.0"])
def test_a_ref_that_is_neither_a_number_nor_an_alias_says_so(trained, ref):
    store(trained, "t")
    with pytest.raises(Invalid, match="is not a version number or an alias: write a number"):
        TokenizerVersion.objects.resolve(ref)  # "²" once said "invalid literal for int()"
    assert TokenizerVersion.objects.resolve("t@1").number == 1


@pytest.mark.django_db
def test_loaded_tokenizers_are_bounded_by_their_measured_bytes_not_their_count(
        trained, settings):
    from tokenizers_app.caches import deep_size
    from tokenizers_app.models.version_contents import _LOADED

    _LOADED.clear()
    settings.LOADED_TOKENIZERS = 100
    first = store(trained, "a")
    one = deep_size(first.cached_tokenizer())
    assert _LOADED.bytes >= one > 0  # measured (its token table built first), held
    settings.LOADED_TOKENIZERS_BYTES = int(one * 1.5)  # room for one of them, not two
    other = store(Tokenizer(trained.vocab, trained.merges, trained.special_tokens, "gpt4"), "c")
    loaded = other.cached_tokenizer()
    assert len(_LOADED) == 1 and _LOADED.bytes <= settings.LOADED_TOKENIZERS_BYTES
    assert other.cached_tokenizer() is loaded
    settings.LOADED_TOKENIZERS_BYTES = one // 2  # smaller than any: served, never kept
    assert first.cached_tokenizer() is not first.cached_tokenizer()
    assert len(_LOADED) == 0 or first.digest not in _LOADED
