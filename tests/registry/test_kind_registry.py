"""The registry of kinds (``engines.registry``): a kind defined and registered here, in this test
module only, is listed among the kinds, stored as a version, loaded back and evaluated, with no
other module touched. Adding a kind to the house is one ``TokenizerKind`` and its tests."""

import json
from collections.abc import Iterable

import pytest

from tests.registry.helpers import import_text
from tokenizers_app.engines import KINDS, Engine, kind_choices, kind_named, register
from tokenizers_app.engines.registry import TokenizerKind
from tokenizers_app.models import Kind, Tokenizer, TokenizerVersion, TrainingRun
from tokenizers_app.models.version_contents import _LOADED
from tokenizers_app.services.evaluations import evaluate_version
from tokenizers_app.services.versions import add_version

TEXT = "the cat sat on the mat\nthe dog sat on the log\n\nÆther ☃ and more\n" * 20


class ByteTokenizer:
    """One token per byte, nothing merged: the smallest tokenizer that meets the protocol."""

    algorithm = "bytes"
    pattern = ""
    merges: list = []
    special_ids: dict = {}
    special_tokens: list = []
    unk_id = None
    byte_ids = frozenset()
    options: dict = {}
    merge_counts = None

    def __init__(self, vocab: dict[int, bytes] | None = None):
        self.vocab = vocab if vocab is not None else {i: bytes([i]) for i in range(256)}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode_ordinary(self, text: str) -> list[int]:
        return list(text.encode())

    def encode_ordinary_batch(self, texts: list[str]) -> list[list[int]]:
        return [self.encode_ordinary(text) for text in texts]

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all"):
        return self.encode_ordinary(text)

    def decode(self, ids: Iterable[int]) -> str:
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def decode_batch(self, batch: list[list[int]]) -> list[str]:
        return [self.decode(ids) for ids in batch]

    def token_bytes(self, token_id: int) -> bytes:
        return self.vocab[token_id]

    def token_spans(self, text: str, allowed_special="all"):
        return [(byte, i, i + 1) for i, byte in enumerate(text.encode())]

    def encoding_json(self, text: str, allowed_special=frozenset(), disallowed_special="all"):
        return str(self.encode_ordinary(text))


class ByteKind(TokenizerKind):
    """Stored as rows (its 256 bytes), evaluated as any protocol tokenizer is."""

    name, label = "bytes", "one token per byte"
    description = "each UTF-8 byte is a token of its own"

    def from_rows(self, vocab, merges, counts, special_ids, pattern, options):
        return ByteTokenizer({i: bytes(token) for i, token in vocab.items()})

    def notes(self, canonical: bytes) -> list[str]:
        return ["Every byte is one token: compression is 1 byte per token."]


@pytest.fixture
def byte_kind():
    kind = register(ByteKind())
    yield kind
    del KINDS[kind.name]
    _LOADED.clear()


def test_the_four_kinds_are_registered_and_the_enum_is_theirs():
    assert list(KINDS)[:4] == ["byte_bpe", "char_bpe", "hf", "sentencepiece"]
    assert [(k.value, k.label) for k in Kind] == kind_choices()[:4]
    assert [name for name, _ in kind_choices(trains=True)] == ["byte_bpe", "char_bpe"]
    assert kind_named("hf").stored_in == "file" and kind_named("char_bpe").stored_in == "rows"
    with pytest.raises(ValueError, match="no kind 'nope'; kinds: byte_bpe, char_bpe"):
        kind_named("nope")


def test_a_kind_registered_in_a_test_is_listed(byte_kind):
    assert ("bytes", "one token per byte") in kind_choices()
    field = TokenizerVersion._meta.get_field("algorithm")
    assert ("bytes", "one token per byte") in list(field.choices)
    run_field = TrainingRun._meta.get_field("algorithm")
    assert "bytes" not in dict(run_field.choices)  # it does not train
    assert isinstance(ByteTokenizer(), Engine)


@pytest.mark.django_db
def test_a_kind_registered_in_a_test_is_stored_loaded_and_evaluated(byte_kind):
    tokenizer = Tokenizer.objects.create(name="bytes")
    version = add_version(tokenizer=tokenizer, core=ByteTokenizer(),
                          source=TokenizerVersion.Source.IMPORT)
    assert version.algorithm == "bytes" and version.status == TokenizerVersion.Status.READY
    assert version.get_algorithm_display() == "one token per byte"
    assert version.kind is byte_kind and version.vocab_entries.count() == 256
    assert version.kind_notes() == ["Every byte is one token: compression is 1 byte per token."]

    _LOADED.clear()
    loaded = TokenizerVersion.objects.get(pk=version.pk).load_tokenizer()
    assert isinstance(loaded, ByteTokenizer) and loaded.vocab == ByteTokenizer().vocab
    assert loaded.encode_ordinary("Æ") == [0xC3, 0x86]

    corpus = import_text(TEXT, "bytes-text", is_evaluation=True)
    evaluation = evaluate_version(version=version, corpus=corpus)
    assert evaluation.status == evaluation.Status.SUCCEEDED, evaluation.error
    assert evaluation.metrics["compression_ratio"] == pytest.approx(1.0)
    assert evaluation.metrics["lossless_rate"] == 1.0
    assert "unknown_rate" not in evaluation.metrics


def test_an_engine_kind_notes_read_its_file_fields_not_its_description():
    bert = json.dumps({"model": {"type": "WordPiece"},
                       "normalizer": {"type": "Sequence",
                                      "normalizers": [{"type": "BertNormalizer"}]}}).encode()
    notes = kind_named("hf").notes(bert)
    assert any("WordPiece cannot spell is one [UNK]" in note for note in notes)
    assert any("lowercases and strips accents" in note for note in notes)
    plain = kind_named("hf").notes(json.dumps({"model": {"type": "BPE"}}).encode())
    assert not any("[UNK]" in note or "Lossless" in note for note in plain)
    assert kind_named("byte_bpe").notes(b"")[0].startswith("Byte-fallback rate")


class Counted:
    """What a trainer returns (``save_training_result`` reads it): the tokenizer, its merges and
    why it stopped."""

    merges: list = []
    stop_reason = ""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer

    def tokenizer(self):
        return self._tokenizer


class TrainedByteKind(ByteKind):
    """The same kind, trained: its trainer keeps the bytes the corpus holds (in one worker: it
    does not fan its counting out)."""

    trains = True
    fans_out = False

    def train(self, source, params, *, progress=None, should_stop=None,
              max_pretoken_bytes=None, weights=None):
        seen = sorted({byte for path in source for byte in open(path, "rb").read()})
        return Counted(ByteTokenizer({n: bytes([byte]) for n, byte in enumerate(seen)}))


@pytest.fixture
def trained_byte_kind():
    kind = register(TrainedByteKind())
    yield kind
    del KINDS[kind.name]
    _LOADED.clear()


@pytest.mark.django_db
def test_a_kind_registered_in_a_test_trains_through_the_registry(trained_byte_kind):
    from tokenizers_app.services.runs import execute_training_run

    assert "bytes" in dict(TrainingRun._meta.get_field("algorithm").choices)  # it trains
    corpus = import_text("abcab\n", "bytes-corpus")
    run = TrainingRun.objects.create(
        tokenizer=Tokenizer.objects.create(name="bytes-trained"), algorithm="bytes",
        parameters={"vocab_size": 4, "special_tokens": [], "pattern": "", "min_frequency": 1,
                    "sweep": [], "algorithm": "bytes", "lowercase": False,
                    "split": "whitespace", "min_word_frequency": 1})
    run.corpora.set([corpus])
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    version = run.versions.get()
    assert version.kind is trained_byte_kind and version.vocab_size == 4
    assert version.load_tokenizer().vocab == {0: b"\n", 1: b"a", 2: b"b", 3: b"c"}


def test_whether_a_kind_extends_and_sweeps_is_the_kinds_to_say():
    hf = kind_named("hf")
    assert hf.extendable(json.dumps({"model": {"type": "BPE"}}).encode())  # its file's type
    assert not hf.extendable(json.dumps({"model": {"type": "WordPiece"}}).encode())
    assert not hf.extendable(b"not json") and not hf.fans_out
    assert kind_named("byte_bpe").extendable(b"") and kind_named("char_bpe").extendable(b"")
    assert kind_named("byte_bpe").sweeps and not kind_named("char_bpe").sweeps
    assert not hf.sweeps and not kind_named("sentencepiece").sweeps
    assert kind_named("char_bpe").default_special_tokens == ("<unk>",)
