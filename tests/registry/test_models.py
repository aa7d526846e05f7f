"""The records: content digests, row I/O of versions, names."""

import pytest

from tokenizers_app import services
from tokenizers_app.bpe import Tokenizer, train_bpe
from tokenizers_app.models import (
    MergeRule,
    TokenizerVersion,
    VocabEntry,
    check_name,
    content_digest,
    vocab_kinds,
)

from .helpers import sample_text


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    return train_bpe([sample_text(20_000)], 400, special_tokens=["<|endoftext|>"]).tokenizer()


def shuffled_ids(tokenizer: Tokenizer) -> Tokenizer:
    """The same tokens under other ids (as imported files may number them): reversed, with an
    extra token that no merge makes."""
    tokens = [tokenizer.vocab[i] for i in sorted(tokenizer.vocab)] + [b"<extra>"]
    vocab = {len(tokens) - 1 - i: token for i, token in enumerate(tokens)}
    specials = {"<|endoftext|>": len(tokens) - 1}
    return Tokenizer(vocab, tokenizer.merges, specials, tokenizer.pattern)


def store(tokenizer: Tokenizer, name: str = "t") -> TokenizerVersion:
    from tokenizers_app.models import Tokenizer as TokenizerRecord

    record, _ = TokenizerRecord.objects.get_or_create(name=name)
    return services.add_version(tokenizer=record, core=tokenizer, source="import")


def test_the_digest_is_stable_and_changes_with_anything_that_changes_ids(trained):
    digest = content_digest(trained)
    swapped = list(trained.merges)
    swapped[-2], swapped[-1] = swapped[-1], swapped[-2]
    merges_changed = Tokenizer(trained.vocab, swapped, trained.special_tokens, trained.pattern)
    pattern_changed = Tokenizer(trained.vocab, trained.merges, trained.special_tokens, "gpt4")

    assert digest == content_digest(Tokenizer(trained.vocab, trained.merges,
                                              trained.special_tokens, trained.pattern))
    assert len({digest, content_digest(merges_changed), content_digest(pattern_changed),
                content_digest(shuffled_ids(trained))}) == 4


def test_vocab_kinds_tell_special_byte_merge_and_added_tokens(trained):
    kinds = {token: kind for _, token, kind in vocab_kinds(shuffled_ids(trained))}
    assert kinds[b"<|endoftext|>"] == "special"
    assert kinds[b"a"] == "byte"
    assert kinds[trained.merges[0][0] + trained.merges[0][1]] == "merge"
    assert kinds[b"<extra>"] == "added"


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
    with pytest.raises(ValueError, match="cannot change status"):
        version.save()


@pytest.mark.parametrize("name", ["web-en-32k", "a", "v1.2_final", "9" * 100])
def test_check_name_accepts_plain_names(name):
    assert check_name("tokenizer", name) == name


@pytest.mark.parametrize("name", ["", "-x", "a@b", "a/b", "a b", "é", "x" * 101, None, 3])
def test_check_name_refuses_names_that_break_refs_or_paths(name):
    with pytest.raises(ValueError, match="tokenizer name .* is not valid"):
        check_name("tokenizer", name)


@pytest.mark.django_db
def test_deleting_a_version_deletes_its_rows(trained):
    version = store(trained)
    store(shuffled_ids(trained), name="other")

    version.delete()

    assert not MergeRule.objects.filter(version_id=version.pk).exists()
    assert not VocabEntry.objects.filter(version_id=version.pk).exists()
    assert MergeRule.objects.count() == len(trained.merges)
