"""Evaluating a version on a parallel set of 99 languages (Django's own translations: every
``django.po`` of the installed Django with a translated message, English as the pivot) against
its own library encoding the same text, in the same run.

    python bench/parity.py [--fixtures DIR] [--repeat 3] [--kinds gpt2,llama-bpe,sentencepiece]

Each language's text is its translated messages, one per line (the pivot's: every ``msgid``),
as a set's corpus holds them. "ours" is what a worker does per language of a set:
``engines.evaluate`` (every metric, the text encoded whole) on each language's lines, in turn;
"peer" is the kind's library encoding each language's text whole (tiktoken for GPT-2, Hugging
Face ``tokenizers`` for a Llama-style BPE trained here, ``sentencepiece`` for a SentencePiece
BPE trained here). Prints seconds (median, min-max over ``--repeat`` runs), the ratio ours /
peer, and checks that the token counts, and so every premium, agree language by language. (The
languages' texts are not aligned here, since few messages are translated in all 98: the bench
times the work per language; the set's premium comes from aligned lines.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.evaluate import hf_trained, sentencepiece_trained  # noqa: E402
from tokenizers_app.bpe import load_tokenizer  # noqa: E402
from tokenizers_app.bpe.parallel_text import gettext_to_bcp47  # noqa: E402
from tokenizers_app.bpe.po_files import read_po  # noqa: E402
from tokenizers_app.engines import evaluate, read_engine_files  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def languages() -> dict[str, str]:
    """``{language: text}``: each language's translated messages, one per line, and the pivot
    ``en`` with every msgid."""
    import django

    messages: dict[str, dict] = {}
    for path in sorted(Path(django.__file__).parent.glob("**/locale/*/LC_MESSAGES/django.po")):
        catalog = read_po(path.read_bytes(), str(path))
        if catalog.messages and path.parts[-3] != "en":
            messages.setdefault(gettext_to_bcp47(path.parts[-3]), {}).update(catalog.messages)
    pivot = {key: key[1] for found in messages.values() for key in found}
    texts = {"en": pivot, **messages}
    return {lang: "".join(" ".join(text.split()) + "\n" for text in found.values())
            for lang, found in texts.items()}


def kinds(fixtures: Path, texts: dict[str, str], chosen: set[str]):
    """``(name, tokenizer, peer encode)``."""
    lines = [line for text in texts.values() for line in text.splitlines()] * 3
    if "gpt2" in chosen:
        import tiktoken

        from tokenizers_app.bpe.pretokenize import GPT2_PATTERN

        gpt2 = load_tokenizer(fixtures)
        ranks = {t: i for i, t in gpt2.vocab.items() if i not in gpt2.special_ids.values()}
        peer = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                                 special_tokens=dict(gpt2.special_ids))
        yield "byte_bpe GPT-2 / tiktoken", gpt2, peer.encode_ordinary
    if "llama-bpe" in chosen:
        import tokenizers

        engine = read_engine_files({"tokenizer.json": hf_trained("llama-bpe", lines)})
        hf = tokenizers.Tokenizer.from_str(engine.canonical.decode())
        hf.encode_special_tokens = True
        yield "hf llama-bpe / HF tokenizers", engine, lambda t: hf.encode(
            t, add_special_tokens=False).ids
    if "sentencepiece" in chosen:
        import sentencepiece

        data = sentencepiece_trained("bpe", lines)
        spm = sentencepiece.SentencePieceProcessor(model_proto=data)
        yield "sentencepiece bpe / sentencepiece", read_engine_files({"m.model": data}), \
            spm.encode


def timed(function):
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", default=str(REPO.parent / "shared" / "fixtures" / "gpt2"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default="gpt2,llama-bpe,sentencepiece")
    args = parser.parse_args()
    texts = languages()
    size = sum(len(text.encode()) for text in texts.values())
    print(f"set: {len(texts)} languages (pivot en), {size / 1e6:.2f} MB, "
          f"{sum(t.count(chr(10)) for t in texts.values())} lines")
    for name, tokenizer, peer in kinds(Path(args.fixtures), texts, set(args.kinds.split(","))):
        ours_times, peer_times = [], []
        for _ in range(args.repeat):
            metrics, seconds = timed(lambda: {lang: evaluate(tokenizer, text.splitlines(True))
                                              for lang, text in texts.items()})
            ours_times.append(seconds)
            counts, seconds = timed(lambda: {lang: len(peer(text))
                                             for lang, text in texts.items()})
            peer_times.append(seconds)
        agree = all(metrics[lang]["tokens"] == counts[lang] for lang in texts)
        print(f"{name}: ours (evaluate, every metric) {spread(ours_times)}; peer encode "
              f"{spread(peer_times)}; ratio ours/peer "
              f"{statistics.median(ours_times) / statistics.median(peer_times):.1f}x; token "
              f"counts agree in every language: {'yes' if agree else 'NO'}")


if __name__ == "__main__":
    main()
