"""The engines (``tokenizers_app.engines``) against the libraries they wrap: every kind's ids,
decoding, spans and metrics, on tokenizers trained here (``trained.py``)."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tests.engines.trained import (
    bert_wordpiece_json,
    llama_bpe_json,
    sentencepiece_model,
    unigram_json,
)
from tokenizers_app.engines.evaluation import documents
from tokenizers_app.engines import Engine, engine_digest, engine_files, evaluate, read_engine_files

KINDS = {
    "llama-bpe": lambda: {"tokenizer.json": llama_bpe_json()},
    "bert-wordpiece": lambda: {"tokenizer.json": bert_wordpiece_json()},
    "unigram": lambda: {"tokenizer.json": unigram_json()},
    "sentencepiece-bpe": lambda: {"spm.model": sentencepiece_model("bpe")},
    "sentencepiece-unigram": lambda: {"any-name.bin": sentencepiece_model("unigram")},
}
TEXTS = {
    "prose": SAMPLES["english"][:600],
    "code": "def f(x):\n    return {'a': [x, x ** 2]}  # done\n\n\tif x:\n\t\tpass\n",
    "cjk": SAMPLES["chinese"][:80] + SAMPLES["japanese"][:60],
    "emoji": SAMPLES["emoji"][:120],
    "whitespace": SAMPLES["whitespace"][:200],
}


def library(kind: str):
    """The kind's own library, loaded from the original file: ``encode(text) -> ids`` (the
    text's ids alone) and ``decode(ids)``."""
    files = KINDS[kind]()
    [data] = files.values()
    if kind.startswith("sentencepiece"):
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_proto=data)
        return processor.encode, processor.decode
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_str(data.decode())
    return (lambda text: tokenizer.encode(text, add_special_tokens=False).ids,
            lambda ids: tokenizer.decode(ids, skip_special_tokens=False))


@pytest.fixture(scope="module", params=sorted(KINDS))
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def engine(kind):
    return read_engine_files(KINDS[kind]())


def test_every_engine_is_an_engine(engine, kind):
    assert isinstance(engine, Engine)
    assert engine.algorithm == ("sentencepiece" if kind.startswith("sentencepiece") else "hf")


@pytest.mark.parametrize("text_name", sorted(TEXTS))
def test_encode_ids_equal_the_library_on_every_kind_of_text(engine, kind, text_name):
    encode, decode = library(kind)
    text = TEXTS[text_name]
    ids = engine.encode_ordinary(text)
    assert ids == encode(text) and ids
    assert engine.encode(text) == ids
    assert engine.decode(ids) == decode(ids)
    spans = engine.token_spans(text, ())
    assert [i for i, _, _ in spans] == ids
    ends = [end for _, _, end in spans]
    assert ends == sorted(ends) and ends[-1] <= len(text.encode())
    assert all(start <= end for _, start, end in spans)


def test_special_token_text_is_plain_text_unless_allowed(engine):
    special = engine.special_tokens[-1]
    text = f"a {special} b"
    with pytest.raises(ValueError, match="special token"):
        engine.encode(text)
    allowed = engine.encode(text, allowed_special={special})
    assert engine.special_ids[special] in allowed


def test_encode_ordinary_adds_no_template_tokens():
    engine = read_engine_files({"tokenizer.json": bert_wordpiece_json()})
    ids = engine.encode_ordinary("hello there")
    assert engine.special_ids["[CLS]"] not in ids and engine.special_ids["[SEP]"] not in ids


def test_the_same_content_written_otherwise_has_the_same_digest():
    doc = json.loads(llama_bpe_json())
    reformatted = json.dumps(doc, indent=None, sort_keys=True).encode()
    first = read_engine_files({"tokenizer.json": llama_bpe_json()})
    again = read_engine_files({"tokenizer.json": reformatted})
    assert engine_digest(first) == engine_digest(again)
    assert engine_digest(first) != engine_digest(read_engine_files(
        {"tokenizer.json": unigram_json()}))


def test_a_sentencepiece_model_is_recognised_by_its_content_not_its_name():
    assert read_engine_files({"weights.bin": sentencepiece_model("bpe")}).algorithm == \
        "sentencepiece"
    assert read_engine_files({"notes.model": b"minbpe v1\nnot sentencepiece"}) is None
    assert read_engine_files({"junk.model": b"\x08\x96\x01junk"}) is None


def test_a_tokenizer_json_the_library_cannot_load_is_refused_in_words():
    with pytest.raises(ValueError, match="Hugging Face tokenizers cannot load"):
        read_engine_files({"tokenizer.json": b'{"model": {"type": "Nonsense"}}'})


def test_each_download_loads_back_in_its_library_with_the_same_ids(engine, kind):
    text = "".join(TEXTS.values())
    formats = ("sentencepiece",) if engine.algorithm == "sentencepiece" else ("hf",
                                                                                "transformers")
    for format in formats:
        files = engine_files(engine, format, "t")
        back = read_engine_files(files)
        assert back.encode_ordinary(text) == engine.encode_ordinary(text)
    with pytest.raises(ValueError, match="downloads as"):
        engine_files(engine, "tiktoken", "t")


def test_a_transformers_download_loads_in_auto_tokenizer_with_the_same_ids(tmp_path):
    transformers = pytest.importorskip("transformers")
    engine = read_engine_files({"tokenizer.json": bert_wordpiece_json()})
    for name, data in engine_files(engine, "transformers", "bert").items():
        (tmp_path / name).write_bytes(data)
    loaded = transformers.AutoTokenizer.from_pretrained(tmp_path)
    text = TEXTS["prose"] + TEXTS["cjk"]
    assert loaded.encode(text, add_special_tokens=False) == engine.encode_ordinary(text)


# -- metrics ---------------------------------------------------------------------------------

def _paragraphs(text: str) -> list[str]:
    """The documents an engine's evaluation encodes: the text cut after each blank line."""
    return ["".join(doc) for doc in documents(text.splitlines(keepends=True))]


def test_stored_numbers_equal_the_library_on_each_document(engine, kind):
    """Each paragraph (through a blank line) is encoded whole by the library, in one call."""
    encode, _decode = library(kind)
    text = "".join(TEXTS.values()) * 3
    result = evaluate(engine, text.splitlines(keepends=True))
    tokens = sum(len(encode(doc)) for doc in _paragraphs(text))
    assert result["tokens"] == tokens
    assert result["compression_ratio"] == len(text.encode()) / tokens
    assert result["chars_per_token"] == len(text) / tokens
    assert result["tokens_per_word"] == tokens / len(text.split())


def test_wordpiece_has_an_unknown_rate_on_unseen_characters():
    engine = read_engine_files({"tokenizer.json": bert_wordpiece_json()})
    result = evaluate(engine, ["plain words here\n", "Ωμέγα ☃ 東京\n"])
    assert result["unknown_rate"] > 0 and "byte_fallback_rate" not in result
    assert evaluate(engine, ["plain words here\n"])["unknown_rate"] == 0.0


def test_bert_lowercasing_is_lossy():
    engine = read_engine_files({"tokenizer.json": bert_wordpiece_json()})
    assert evaluate(engine, ["The Quick fox\n", "the dog\n"])["lossless_rate"] == 0.5


@pytest.mark.parametrize("kind", ["unigram", "sentencepiece-unigram", "sentencepiece-bpe"])
def test_the_lossless_rate_checks_each_line_without_its_line_end(kind):
    """A SentencePiece normalizer (or Metaspace) drops the newline: checked with it, no line
    would round-trip."""
    engine = read_engine_files(KINDS[kind]())
    lines = ["the cat sat on the mat\n", "a dog\r\n", "the end"]
    assert evaluate(engine, lines)["lossless_rate"] == 1.0


@pytest.mark.parametrize("files", [lambda: {"tokenizer.json": llama_bpe_json()},
                                   lambda: {"m.model": sentencepiece_model("bpe")}],
                         ids=["llama-bpe", "sentencepiece-bpe"])
def test_byte_fallback_bpe_has_a_byte_fallback_rate_on_cjk(files):
    engine = read_engine_files(files())
    cjk = evaluate(engine, [SAMPLES["japanese"][:100] + "\n", "鬱蒼とした森\n"])
    assert 0 < cjk["byte_fallback_rate"] <= 1
    assert evaluate(engine, ["the quick brown fox"])["byte_fallback_rate"] == 0.0  # no "\\n"


@functools.cache
def engine_of(kind: str) -> Engine:
    return read_engine_files(KINDS[kind]())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab.' \t\nÉé東🍕\u3000", max_size=20), max_size=6),
       st.sampled_from(sorted(KINDS)))
def test_evaluated_counts_equal_the_documents_for_every_engine(blocks, kind):
    engine, text = engine_of(kind), "".join(blocks)
    result = evaluate(engine, blocks)
    assert result["tokens"] == sum(len(engine.encode_ordinary(doc)) for doc in _paragraphs(text))
    assert result["bytes"] == len(text.encode()) and result["words"] == len(text.split())


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_special_token_text_in_a_corpus_is_encoded_as_the_library_encodes_plain_text(kind):
    import tokenizers

    [data] = KINDS[kind]().values()
    peer = tokenizers.Tokenizer.from_str(data.decode())
    peer.encode_special_tokens = True
    engine = engine_of(kind)
    text = "strike <s>this</s> out, [CLS] and <unk> stay text\n"
    assert engine.encode_ordinary(text) == peer.encode(text, add_special_tokens=False).ids
    assert evaluate(engine, [text])["tokens"] == len(engine.encode_ordinary(text))


def test_sentencepiece_bpe_merges_read_from_its_pieces_encode_as_the_library():
    """The merges read from a SentencePiece BPE model's pieces and scores, run by Hugging Face's
    BPE (with byte fallback, as a Llama tokenizer.json is) give the library's ids on running
    text; SentencePiece's own split of whitespace runs is not a merge, so those are left out."""
    from tokenizers import Tokenizer, models, normalizers

    spm = read_engine_files({"spm.model": sentencepiece_model("bpe")})
    assert len(spm.merges) > 100
    peer = Tokenizer(models.BPE(vocab={t.decode(): i for i, t in spm.vocab.items()},
                                merges=[(a.decode(), b.decode()) for a, b in spm.merges],
                                unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    peer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                            normalizers.Replace(" ", "▁")])
    for name in ("prose", "cjk", "emoji"):
        assert peer.encode(TEXTS[name], add_special_tokens=False).ids == \
            spm.encode_ordinary(TEXTS[name])
    unigram = read_engine_files({"u.model": sentencepiece_model("unigram")})
    assert unigram.merges == []


def test_a_frequent_word_is_cut_as_in_running_text_for_every_kind():
    """"the" in a SentencePiece model is one piece, ▁the, as in running text (encoding " the"
    alone gave ▁ ▁the: its own word-start mark, then the space's)."""
    from tokenizers_app.bpe.inspection import frequent_word_tokens

    lines = ["the cat and the dog\n"] * 3
    for kind in KINDS:
        engine = read_engine_files(KINDS[kind]())
        words = dict((word, ids) for word, _, ids in frequent_word_tokens(engine, lines))
        running = engine.encode_ordinary("the cat and the dog")
        assert words["the"] == running[:len(words["the"])], kind
        assert [engine.vocab[i] for i in words["dog"]] == \
            [engine.vocab[i] for i in running[-len(words["dog"]):]], kind
    spm = read_engine_files(KINDS["sentencepiece-bpe"]())
    assert [spm.vocab[i] for i in frequent_word_tokens(spm, lines)[0][2]] == ["▁the".encode()]
