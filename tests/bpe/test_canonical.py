"""A tokenizer's canonical content: the digest and the kinds of vocab entries."""

import pytest

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import Tokenizer, train_bpe
from tokenizers_app.bpe.canonical import content_digest, vocab_kinds


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    text = "".join(SAMPLES.values())
    return train_bpe([text], 400, special_tokens=["<|endoftext|>"]).tokenizer()


def shuffled_ids(tokenizer: Tokenizer) -> Tokenizer:
    """The same tokens under other ids (as imported files may number them): reversed, with an
    extra token that no merge makes."""
    tokens = [tokenizer.vocab[i] for i in sorted(tokenizer.vocab)] + [b"<extra>"]
    vocab = {len(tokens) - 1 - i: token for i, token in enumerate(tokens)}
    specials = {"<|endoftext|>": len(tokens) - 1}
    return Tokenizer(vocab, tokenizer.merges, specials, tokenizer.pattern)


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
