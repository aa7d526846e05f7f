"""Evaluation of every kind: ``evaluate()`` (all metrics, the text encoded whole) against the
kind's own library encoding the same text whole, in the same run.

    python bench/evaluate.py --corpus PATH [--megabytes 16] [--repeat 3] [--fixtures DIR]

Kinds: byte-level BPE (GPT-2's vocabulary; peer tiktoken), character-level BPE (trained here;
peer Hugging Face ``tokenizers`` on its ``tokenizer.json``), and the ``hf`` and
``sentencepiece`` kinds (a Llama-style BPE with byte fallback, a BERT WordPiece, a Unigram, and
SentencePiece BPE and Unigram, trained here on the corpus's first 2 MB with the libraries' own
trainers; peer: that library's encode). Prints seconds per run (median, min-max over
``--repeat`` runs) and the ratio evaluate / peer encode; checks that the token counts agree
(the peers encode special-token text as plain text, as ``encode_ordinary`` does: a corpus may
hold a literal ``</s>``). ``--only hf,sentencepiece`` runs the kinds whose name holds one of those.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokenizers_app.bpe import dumps_tokenizer, load_tokenizer, train_char_bpe  # noqa: E402
from tokenizers_app.engines import evaluate, read_engine_files  # noqa: E402
from tokenizers_app.engines.demo import train_wordpiece  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VOCAB = 8000


def read_text(path: str, megabytes: float) -> str:
    """The first ``megabytes`` MB of a UTF-8 file, cut at a line end."""
    with open(path, "rb") as stream:
        data = stream.read(int(megabytes * 1e6))
    return data[:data.rfind(b"\n") + 1].decode("utf-8", errors="replace")


def hf_trained(kind: str, lines: list[str]):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    if kind == "wordpiece":
        return train_wordpiece(lines, VOCAB)
    if kind == "llama-bpe":
        tokenizer = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=specials,
                                      limit_alphabet=500, show_progress=False)
    else:
        tokenizer = Tokenizer(models.Unigram())
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=VOCAB, special_tokens=["<unk>"],
                                          unk_token="<unk>", show_progress=False)
    tokenizer.train_from_iterator(lines, trainer)
    import json

    doc = json.loads(tokenizer.to_str())
    doc["added_tokens"] = [t for t in doc["added_tokens"] if not t["content"].startswith("<0x")]
    return json.dumps(doc).encode()


def sentencepiece_trained(model_type: str, lines: list[str]) -> bytes:
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=VOCAB,
        model_type=model_type, byte_fallback=model_type == "bpe", num_threads=2,
        minloglevel=2)
    return model.getvalue()


def kinds(fixtures: Path, training: str, only: str | None = None):
    """``(name, tokenizer, peer encode)`` for each kind (whose name holds ``only``)."""
    for name, tokenizer, peer in all_kinds(fixtures, training):
        if only is None or any(part in name for part in only.split(",")):
            yield name, tokenizer, peer


def all_kinds(fixtures: Path, training: str):
    import sentencepiece
    import tiktoken
    import tokenizers

    from tokenizers_app.bpe.pretokenize import GPT2_PATTERN

    lines = [line for line in training.splitlines() if line.strip()]
    gpt2 = load_tokenizer(fixtures)
    ranks = {t: i for i, t in gpt2.vocab.items() if i not in gpt2.special_ids.values()}
    tik = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                            special_tokens=dict(gpt2.special_ids))
    yield "byte_bpe (GPT-2) / tiktoken", gpt2, tik.encode_ordinary
    char = train_char_bpe([training[:1_000_000]], vocab_size=VOCAB).tokenizer()
    char_peer = tokenizers.Tokenizer.from_str(dumps_tokenizer(char, "hf")["tokenizer.json"]
                                              .decode())
    yield "char_bpe / HF tokenizers", char, lambda t: char_peer.encode(
        t, add_special_tokens=False).ids
    for kind in ("llama-bpe", "wordpiece", "unigram"):
        engine = read_engine_files({"tokenizer.json": hf_trained(kind, lines)})
        peer = tokenizers.Tokenizer.from_str(engine.canonical.decode())
        peer.encode_special_tokens = True  # special-token text as plain text, as ours
        yield f"hf {kind} / HF tokenizers", engine, lambda t, p=peer: p.encode(
            t, add_special_tokens=False).ids
    for model_type in ("bpe", "unigram"):
        data = sentencepiece_trained(model_type, lines)
        peer = sentencepiece.SentencePieceProcessor(model_proto=data)
        yield f"sentencepiece {model_type} / sentencepiece", read_engine_files(
            {"m.model": data}), peer.encode


def timed(function):
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--megabytes", type=float, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the kinds whose name holds one of these "
                                       "comma-separated texts (hf,sentencepiece)")
    parser.add_argument("--fixtures", default=os.environ.get(
        "TOKENIZER_FIXTURES", str(REPO.parent / "shared" / "fixtures" / "gpt2")))
    opts = parser.parse_args()
    fixtures = Path(opts.fixtures)
    fixtures = fixtures / "gpt2" if (fixtures / "gpt2").is_dir() else fixtures
    text = read_text(opts.corpus, opts.megabytes)
    blocks = text.splitlines(keepends=True)
    print(f"corpus {opts.corpus}: {len(text.encode()) / 1e6:.1f} MB, {len(blocks)} lines; "
          f"{opts.repeat} runs; load average {os.getloadavg()[0]:.1f}")
    print(f"{'kind / peer':<40}{'evaluate s':>22}{'peer encode s':>22}{'ratio':>18}")
    failed = False
    for name, tokenizer, peer in kinds(fixtures, text[:2_000_000], opts.only):
        ours, theirs, ratios = [], [], []
        for _ in range(opts.repeat):
            metrics, seconds = timed(lambda: evaluate(tokenizer, blocks))
            ids, peer_seconds = timed(lambda: peer(text))
            ours.append(seconds)
            theirs.append(peer_seconds)
            ratios.append(seconds / peer_seconds)
        same = metrics["tokens"] == len(ids)
        failed |= not same
        print(f"{name:<40}{spread(ours):>22}{spread(theirs):>22}{spread(ratios):>18}x"
              f"{'' if same else '  TOKEN COUNTS DIFFER'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
