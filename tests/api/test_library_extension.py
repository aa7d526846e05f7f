"""Extension runs of another library's BPE: a SentencePiece BPE ``.model`` and a Hugging Face BPE
``tokenizer.json`` with byte fallback, each trained here by its own library on English, extended
on Chinese and Japanese through the service the API uses. The child's download loads in its
library and gives the server's ids; every parent id names the same piece; new ids follow the
parent's largest; English, which the new pieces do not touch, keeps the parent's ids."""

from __future__ import annotations

import io
import json

import pytest

from tests.api.conftest import bearer
from tests.bpe.corpora import CHINESE, ENGLISH, JAPANESE
from tests.engines.trained import BYTE_PIECES, stored
from tests.registry.helpers import import_text
from tokenizers_app.engines.library_extension import Addition, _placed, learn_pieces
from tokenizers_app.models import TokenizerVersion, TrainingRun
from tokenizers_app.services.extensions import start_extension_run
from tokenizers_app.services.runs import execute_training_run
from tokenizers_app.services.versions import import_tokenizer

ENGLISH_LINES = [line for line in (ENGLISH * 12).splitlines() if line.strip()]
NEW_TEXT = "\n".join([CHINESE, JAPANESE] * 10) + "\n"
OLD_TEXT = "The quick brown fox jumps over the lazy dog, and then the fox naps.\n" + ENGLISH
NEW = 80  # new pieces asked of each extension


@stored
def english_sentencepiece() -> bytes:
    """A SentencePiece BPE ``.model`` with byte fallback, trained on English only."""
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(ENGLISH_LINES), model_writer=model, vocab_size=330,
        model_type="bpe", byte_fallback=True, character_coverage=1.0,
        normalization_rule_name="identity", num_threads=1, minloglevel=2)
    return model.getvalue()


@stored
def english_bpe_json() -> bytes:
    """A Llama-2-style BPE ``tokenizer.json`` (Metaspace, byte fallback to ``<0xNN>`` pieces at
    ids 3-258), trained on English only by ``BpeTrainer``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                           decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    specials = ["<unk>", "<s>", "</s>"]
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=specials + BYTE_PIECES,
                                  show_progress=False)
    tokenizer.train_from_iterator(ENGLISH_LINES, trainer)
    doc = json.loads(tokenizer.to_str())  # the byte pieces are ordinary vocab
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] in specials]
    return json.dumps(doc, ensure_ascii=False).encode()


KINDS = {  # kind: (file name, the parent's file, the library's loader of the child's download)
    "sentencepiece": ("tokenizer.model", english_sentencepiece),
    "hf": ("tokenizer.json", english_bpe_json),
}


def library_encoder(kind: str, data: bytes):
    """``encode(text) -> ids`` of a file, loaded by its own library in this test."""
    if kind == "sentencepiece":
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_proto=data)
        return lambda text: processor.encode(text)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(data.decode())
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def library_vocab(kind: str, data: bytes) -> dict[int, str]:
    if kind == "sentencepiece":
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_proto=data)
        return {i: processor.id_to_piece(i) for i in range(processor.get_piece_size())}
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_str(data.decode()).get_vocab(with_added_tokens=True)
    return {i: piece for piece, i in vocab.items()}


def download(client, key: str, version: TokenizerVersion, kind: str) -> bytes:
    answer = client.get(f"/api/tokenizers/{version.tokenizer.name}/versions/{version.number}"
                        f"/download?format={kind}", **bearer(key))
    assert answer.status_code == 200, answer.content
    return b"".join(answer.streaming_content) if answer.streaming else answer.content


def server_ids(client, key: str, version: TokenizerVersion, text: str) -> list[int]:
    answer = client.post(f"/api/tokenizers/{version.tokenizer.name}/versions/{version.number}"
                         f"/encode", {"text": text}, content_type="application/json",
                         **bearer(key))
    assert answer.status_code == 200, answer.content
    return answer.json()["ids"]


def import_parent(kind: str, staff) -> TokenizerVersion:
    name, make = KINDS[kind]
    return import_tokenizer(files={name: make()}, tokenizer_name=f"english-{kind}",
                            created_by=staff)


def check_child(client, key, kind: str, parent: TokenizerVersion, child: TokenizerVersion):
    """The checks every extended library model passes (see the module's docstring)."""
    assert child.tokenizer_id == parent.tokenizer_id and child.algorithm == kind
    assert child.lineage()["extends"] == parent.label
    parent_file, child_file = (download(client, key, v, kind) for v in (parent, child))
    before, after = library_vocab(kind, parent_file), library_vocab(kind, child_file)
    assert all(after[i] == piece for i, piece in before.items())  # every parent id kept
    assert sorted(set(after) - set(before)) == list(range(max(before) + 1, max(before) + 1 + NEW))
    assert child.vocab_size == len(after) == len(before) + NEW
    encode, encode_parent = library_encoder(kind, child_file), library_encoder(kind, parent_file)
    for text in (NEW_TEXT, OLD_TEXT, CHINESE + " and English " + JAPANESE):
        assert encode(text) == server_ids(client, key, child, text)  # the download = the server
    assert len(encode(CHINESE)) < len(encode_parent(CHINESE)) / 2  # new pieces serve CJK
    assert encode(OLD_TEXT) == encode_parent(OLD_TEXT)  # untouched: the parent's ids
    new_ids = set(range(max(before) + 1, max(after) + 1))
    assert new_ids & set(encode(NEW_TEXT)) and not new_ids & set(encode(OLD_TEXT))
    diff = client.get(f"/api/diff?from={parent.label}&to={child.label}", **bearer(key))
    assert diff.status_code == 200 and diff.json()["verdict"] == "extends", diff.content
    return parent_file, child_file


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_library_bpe_extends_keeping_every_parent_id(client, registry, kind):
    staff, key = registry["staff"], registry["staff_key"]
    parent = import_parent(kind, staff)
    import_text(NEW_TEXT, "cjk")
    run = start_extension_run(extends=parent.label, corpora=["cjk"],
                              vocab_size=parent.vocab_size + NEW, created_by=staff)
    assert run.algorithm == kind and run.extends_id == parent.pk
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    child = run.versions.get()
    parent_file, child_file = check_child(client, key, kind, parent, child)
    if kind == "sentencepiece":  # scored below every parent piece, in learned order
        import sentencepiece

        old = sentencepiece.SentencePieceProcessor(model_proto=parent_file)
        new = sentencepiece.SentencePieceProcessor(model_proto=child_file)
        size = old.get_piece_size()
        scores = [new.get_score(i) for i in range(size, new.get_piece_size())]
        assert max(scores) < min(old.get_score(i) for i in range(size))
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    else:  # new merges after the parent's, each joining two pieces of the vocab
        old, new = json.loads(parent_file)["model"], json.loads(child_file)["model"]
        assert new["merges"][:len(old["merges"])] == old["merges"]
        added = new["merges"][len(old["merges"]):]
        assert added and all("".join(m if isinstance(m, list) else m.split(" ")) in new["vocab"]
                             for m in added)


@pytest.mark.django_db
def test_a_sentencepiece_extension_over_the_api(client, registry, settings):
    """``POST /api/runs`` with ``extends`` on a SentencePiece BPE version, end to end; counted
    in one worker by the library's segmentation even above the fan-out's threshold."""
    settings.FANOUT_MIN_BYTES = 1
    staff, key = registry["staff"], registry["staff_key"]
    parent = import_parent("sentencepiece", staff)
    import_text(NEW_TEXT, "cjk")
    answer = client.post("/api/runs", json.dumps({
        "extends": parent.label, "corpora": ["cjk"], "vocab_size": parent.vocab_size + NEW}),
        content_type="application/json", **bearer(key))
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["extends"] == parent.label and body["algorithm"] == "sentencepiece"
    execute_training_run(run_id=body["id"])
    done = client.get(f"/api/runs/{body['id']}", **bearer(key)).json()
    assert done["status"] == "succeeded", done["error"]
    child = TokenizerVersion.objects.resolve(done["versions"][-1])
    check_child(client, key, "sentencepiece", parent, child)
    swept = client.post("/api/runs", json.dumps({
        "extends": parent.label, "corpora": ["cjk"], "vocab_size": parent.vocab_size + NEW,
        "sweep": [parent.vocab_size + 10]}), content_type="application/json", **bearer(key))
    assert swept.status_code == 400 and "sweep of a SentencePiece" in swept.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("make, name", [
    ("sentencepiece_unigram", "tokenizer.model"), ("bert_wordpiece_json", "tokenizer.json"),
    ("unigram_json", "tokenizer.json")])
def test_unigram_and_wordpiece_models_are_refused_in_words(client, registry, make, name):
    from tests.engines import trained

    data = trained.sentencepiece_model("unigram") if make == "sentencepiece_unigram" else \
        getattr(trained, make)()
    parent = import_tokenizer(files={name: data}, tokenizer_name="no-merges",
                              created_by=registry["staff"])
    import_text(NEW_TEXT, "cjk")
    answer = client.post("/api/runs", json.dumps({
        "extends": parent.label, "corpora": ["cjk"], "vocab_size": parent.vocab_size + 10}),
        content_type="application/json", **bearer(registry["staff_key"]))
    assert answer.status_code == 400
    assert "Unigram and WordPiece have no merge order to continue" in answer.json()["detail"]


def test_a_pair_whose_join_is_a_piece_already_is_never_learned():
    """The parent leaves ``a`` + ``bc`` apart though ``abc`` is a piece (it makes it otherwise):
    the loop skips that pair, as byte-level extension does, and learns the next best."""
    vocab = {0: b"a", 1: b"bc", 2: b"abc", 3: b"d"}
    learned = learn_pieces({(0, 1): 9, (1, 3): 4}, vocab, 1)
    assert learned.additions == [Addition("bcd", "bc", "d")] and learned.counts == [4]


def test_characters_spelled_by_bytes_become_pieces_when_a_merge_takes_them():
    vocab = {0: b"<unk>", 1: "▁".encode()}
    learned = learn_pieces({(1, "中", "文"): 5, (1, "中"): 2}, vocab, 4)
    assert learned.additions == [Addition("中"), Addition("▁中", "▁", "中"), Addition("文"),
                                 Addition("▁中文", "▁中", "文")]
    # a merge needing two new characters does not fit in the last two ids: they hold those
    additions, kept = _placed([("中".encode(), "文".encode())], {"中".encode(), "文".encode()}, 2)
    assert additions == [Addition("中"), Addition("文")] and kept == 0


@pytest.mark.django_db
def test_the_pages_extend_a_tokenizer_json_bpe_and_show_its_lineage(registry):
    """"Extend this version" on a tokenizer.json BPE's page, the run form, the run page and the
    child's page (the pages' own client: the form is posted as a browser posts it)."""
    from django.test import Client

    browser = Client()
    browser.force_login(registry["staff"])
    parent = import_parent("hf", registry["staff"])
    import_text(NEW_TEXT, "cjk")
    version_page = browser.get(f"/tokenizers/english-hf/{parent.number}/").content.decode()
    assert "Extend this version" in version_page
    assert browser.get("/runs/new/?extends=english-hf%401").status_code == 200
    browser.post("/runs/new/", {"extends": parent.label, "corpus": "cjk",
                                "vocab_size": parent.vocab_size + NEW, "min_frequency": 1})
    run = TrainingRun.objects.get(extends=parent)
    execute_training_run(run_id=run.pk)
    run_page = browser.get(f"/runs/{run.pk}/").content.decode()
    assert "Extends" in run_page and "every id of it kept" in run_page
    child = run.versions.get()
    child_page = browser.get(f"/tokenizers/english-hf/{child.number}/").content.decode()
    assert "every id of it names the same token here" in child_page
    from tests.engines.trained import sentencepiece_model

    unigram = import_tokenizer(files={"tokenizer.model": sentencepiece_model("unigram")},
                               tokenizer_name="english-unigram", created_by=registry["staff"])
    assert "Extend this version" not in browser.get(
        f"/tokenizers/english-unigram/{unigram.number}/").content.decode()



@pytest.mark.django_db
def test_the_train_command_extends_a_sentencepiece_bpe(registry):
    """``manage.py train --extends NAME@REF`` on a SentencePiece BPE version."""
    from django.core.management import call_command

    parent = import_parent("sentencepiece", registry["staff"])
    import_text(NEW_TEXT, "cjk")
    out = io.StringIO()
    call_command("train", "--extends", parent.label, "--corpus", "cjk", "--vocab-size",
                 str(parent.vocab_size + NEW), stdout=out)
    run = TrainingRun.objects.get(extends=parent)
    assert f"extends {parent.label}" in out.getvalue() and run.algorithm == "sentencepiece"
    execute_training_run(run_id=run.pk)
    child = run.versions.get()
    assert child.vocab_size == parent.vocab_size + NEW
    kept = child.load_engine().vocab
    assert all(kept[i] == piece for i, piece in parent.load_engine().vocab.items())


def mixed_cjk(size: int = 3000, seed: int = 4) -> str:
    """Lines of made-up text from a few Chinese, Japanese and Korean characters, spaces and
    punctuation: many pairs of equal count, so the tie-break decides often."""
    import random

    rng = random.Random(seed)
    alphabet = "我们今天学习字节对编码日本語のテキスト한국어 、。"
    return "\n".join("".join(rng.choices(alphabet, k=rng.randint(5, 40)))
                     for _ in range(size // 20))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_learned_pieces_equal_the_plain_reference_addition_for_addition(kind):
    """On the library's own segmentation of CJK text (with ties), the learned pieces equal
    ``reference_extend_pieces`` in tests/bpe/reference.py, piece for piece, in order."""
    from tests.bpe.reference import reference_extend_pieces
    from tokenizers_app.engines.hf import HFEngine
    from tokenizers_app.engines.library_extension import segment_counts
    from tokenizers_app.engines.spm import SentencePieceEngine

    parent = (SentencePieceEngine if kind == "sentencepiece" else HFEngine)(KINDS[kind][1]())
    lines = [line for line in (NEW_TEXT + mixed_cjk()).splitlines() if line.strip()]
    words = {tuple(word): count for word, count in segment_counts(parent, lines)}
    as_bytes = {tuple(symbol for s in word  # a run of characters: each its own symbol
                      for symbol in ([parent.vocab[s]] if isinstance(s, int)
                                     else [char.encode() for char in s])): count
                for word, count in words.items()}
    for wanted in (1, 7, 60, 150):
        learned = learn_pieces(words, parent.vocab, wanted)
        expected = reference_extend_pieces(set(parent.vocab.values()), as_bytes, wanted)
        assert [(a.piece.encode(), a.left and a.left.encode(), a.right and a.right.encode())
                for a in learned.additions] == expected
        assert len(learned.additions) == wanted


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_segmentation_sends_a_run_of_characters_as_one_string(kind):
    """The sandbox child's answer to ``segment``: each word a list of piece ids and of runs of
    characters the parent spells with byte pieces, a run one string (never empty, never two
    side by side), each word of two symbols or more, counted."""
    from tokenizers_app.engines.hf import HFEngine
    from tokenizers_app.engines.library_extension import segment_counts
    from tokenizers_app.engines.spm import SentencePieceEngine

    parent = (SentencePieceEngine if kind == "sentencepiece" else HFEngine)(KINDS[kind][1]())
    words = segment_counts(parent, ["日本語のテキスト", "日本語のテキスト", "the 日本 cat"])
    assert any(count == 2 and "日本語のテキスト" in word for word, count in words)
    for word, _ in words:
        assert all(isinstance(s, int) or s for s in word)
        assert not any(isinstance(a, str) and isinstance(b, str) for a, b in zip(word, word[1:]))
        assert sum(1 if isinstance(s, int) else len(s) for s in word) >= 2


@pytest.mark.django_db
def test_a_library_extension_run_stops_when_cancelled(registry, monkeypatch):
    """A cancel noticed while the library segments the corpus ends the run, saving nothing."""
    from tokenizers_app.services.attempts import RunReporter

    parent = import_parent("hf", registry["staff"])
    import_text(NEW_TEXT, "cjk")
    run = start_extension_run(extends=parent.label, corpora=["cjk"],
                              vocab_size=parent.vocab_size + NEW, created_by=registry["staff"])
    monkeypatch.setattr(RunReporter, "should_stop", lambda self: True)
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.CANCELLED and not run.versions.exists()
