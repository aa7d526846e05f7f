"""Extension against training from scratch, on the same files, in the same run.

    python bench/extend.py [--parent-corpus PATH] [--corpus PATH] [--parent-size 8000]
                           [--new 2000] [--repeat 1]

A parent is trained on ``--parent-corpus`` to ``--parent-size`` tokens (not timed). Then, each in
a fresh child process, taking turns: ``extend`` continues the parent's merges on ``--corpus`` by
``--new`` tokens (``bpe.extension.extend_bpe``); ``scratch-total`` trains from scratch on
``--corpus`` to the child's total (parent + new); ``scratch-new`` trains from scratch on
``--corpus`` to 256 + ``--new`` tokens (the cost of learning the new merges alone). The script
prints the best wall time of each (and its slowest), the peak RSS, the ratios against ``extend``,
and extend / scratch-new in each round; with ``--kind sentencepiece`` (one process each, the
trainer on one thread) also the best processor seconds of each.

Without paths it writes two corpora of ``--mb`` MB each: made-up lowercase words (the parent's
domain) and random CJK text with punctuation (the new one), built from code, not downloaded.

``--kind sentencepiece``: the parent is a SentencePiece BPE model with byte fallback, trained by
``sentencepiece`` on ``--parent-corpus`` (not timed); ``extend`` segments ``--corpus`` with the
parent (the library, in this process: the registry runs that step in its sandbox child), learns
``--new`` pieces (``engines.library_extension``) and writes the child's ``.model``;
``scratch-total`` trains a SentencePiece BPE from scratch on both corpora to the child's total
(the retrain that extension avoids), ``scratch-new`` on ``--corpus`` alone to the byte pieces,
specials and ``--new`` pieces. The trainer runs with one thread, as the extension does. The
made-up CJK corpus draws words of 1-4 characters from 1,500 characters with Zipf weights (uniform
random characters would leave SentencePiece nothing to merge), in lines of 40-160 characters.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHILD = """
import json, resource, sys, time
from pathlib import Path
from tokenizers_app.bpe import load_tokenizer, train_bpe
from tokenizers_app.bpe.compiled import CORE_PATH
from tokenizers_app.bpe.extension import extend_bpe
from tokenizers_app.bpe.parameters import check_training_parameters
args = json.loads(sys.argv[1])
start = time.perf_counter()
if args["mode"] == "extend":
    parent = load_tokenizer(args["parent"])
    params = check_training_parameters(vocab_size=len(parent.vocab) + args["new"])
    result = extend_bpe(parent, Path(args["corpus"]), params)
else:
    result = train_bpe(Path(args["corpus"]), args["vocab_size"], special_tokens=["<|endoftext|>"])
seconds = time.perf_counter() - start
# this process's own peak (VmHWM, in kB): ru_maxrss starts at the forking process's size
rss = next(int(line.split()[1]) for line in open("/proc/self/status")
           if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": len(result.vocab),
                  "core": CORE_PATH}))
"""


SPM_CHILD = """
import json, resource, sys, time
from pathlib import Path
args = json.loads(sys.argv[1])
start, cpu = time.perf_counter(), time.process_time()
if args["mode"] == "extend":
    from tokenizers_app.engines import kind_named
    from tokenizers_app.engines.library_extension import learn_pieces, segment_counts
    from tokenizers_app.engines.spm import SentencePieceEngine
    parent = SentencePieceEngine(Path(args["parent"]).read_bytes())
    text = Path(args["corpus"]).read_text(encoding="utf-8")
    lines = [line for line in text.split("\\n") if line.strip()]
    words = {}
    for i in range(0, len(lines), 2000):
        for word, count in segment_counts(parent, lines[i:i + 2000]):
            key = tuple(word)
            words[key] = words.get(key, 0) + count
    learned = learn_pieces(words, parent.vocab, args["new"])
    child = SentencePieceEngine(kind_named("sentencepiece").extended_file(parent.canonical,
                                              learned.additions))
    assert all(child.vocab[i] == t for i, t in parent.vocab.items())
    vocab = len(child.vocab)
else:
    import io, sentencepiece
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        input=",".join(args["inputs"]), model_writer=model, vocab_size=args["vocab_size"],
        model_type="bpe", byte_fallback=True, character_coverage=0.9995, num_threads=1,
        minloglevel=2)
    vocab = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue()).get_piece_size()
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
# this process's own peak (VmHWM, in kB): ru_maxrss starts at the forking process's size
rss = next(int(line.split()[1]) for line in open("/proc/self/status")
           if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_kb": rss, "vocab": vocab,
                  "core": "sentencepiece"}))
"""


def run(args: dict, child: str = CHILD) -> dict:
    out = subprocess.run([sys.executable, "-c", child, json.dumps(args)], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def write_corpora(folder: Path, megabytes: float) -> tuple[Path, Path]:
    from tests.bpe.corpora import _random_cjk

    size = int(megabytes * 1e6)
    words, cjk = folder / "words.txt", folder / "cjk.txt"
    rng = random.Random(3)
    made_up = [" ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9)))
                        for _ in range(12)) + "\n" for _ in range(size // 70)]
    words.write_text("".join(made_up), encoding="utf-8")
    rng = random.Random(5)
    cjk.write_text("".join(_random_cjk(rng, 4000) for _ in range(size // 12000)) + "\n",
                   encoding="utf-8")
    return words, cjk


def write_zipf_cjk(path: Path, megabytes: float) -> Path:
    """Made-up CJK text: words of 1-4 characters from 1,500 characters with Zipf weights, in
    lines of 40-160 characters ended by punctuation (SentencePiece needs repeated pairs)."""
    rng = random.Random(7)
    chars = [chr(c) for c in rng.sample(range(0x4E00, 0x9FFF), 1500)]
    weights = [1 / (rank + 1) for rank in range(len(chars))]
    lexicon = ["".join(rng.choices(chars, weights, k=rng.choice((1, 2, 2, 3, 4))))
               for _ in range(6000)]
    word_weights = [1 / (rank + 1) for rank in range(len(lexicon))]
    lines, size = [], 0
    while size < megabytes * 1e6:
        line = "".join(rng.choices(lexicon, word_weights, k=rng.randint(20, 70)))[:160]
        lines.append(line + rng.choice("。！？") + "\n")
        size += len(lines[-1].encode())
    path.write_text("".join(lines), encoding="utf-8")
    return path


def spm_jobs(folder: Path, parent_corpus: Path, corpus: Path, parent_size: int,
             new: int) -> tuple[dict, int]:
    """The SentencePiece parent (trained here, not timed) and the jobs of ``--kind
    sentencepiece``."""
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        input=str(parent_corpus), model_writer=model, vocab_size=parent_size, model_type="bpe",
        byte_fallback=True, character_coverage=1.0, num_threads=1, minloglevel=2)
    parent = folder / "parent.model"
    parent.write_bytes(model.getvalue())
    size = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue()).get_piece_size()
    jobs = {"extend": {"mode": "extend", "parent": str(parent), "corpus": str(corpus),
                       "new": new},
            "scratch-total": {"mode": "scratch", "inputs": [str(parent_corpus), str(corpus)],
                              "vocab_size": size + new},
            "scratch-new": {"mode": "scratch", "inputs": [str(corpus)],
                            "vocab_size": 259 + new}}
    return jobs, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parent-corpus", type=Path)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--parent-size", type=int, default=8000)
    parser.add_argument("--new", type=int, default=2000)
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--kind", choices=("byte_bpe", "sentencepiece"), default="byte_bpe")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parent_corpus, corpus = args.parent_corpus, args.corpus
        if parent_corpus is None or corpus is None:
            parent_corpus, corpus = write_corpora(folder, args.mb)
            if args.kind == "sentencepiece":
                corpus = write_zipf_cjk(folder / "cjk-zipf.txt", args.mb)
        if args.kind == "sentencepiece":
            jobs, size = spm_jobs(folder, parent_corpus, corpus, args.parent_size, args.new)
            results = {name: [] for name in jobs}
            for _ in range(max(1, args.repeat)):
                for name, job in jobs.items():
                    results[name].append(run(job, SPM_CHILD))
            print(f"SentencePiece BPE parent: {size:,} pieces on {parent_corpus.name} "
                  f"({parent_corpus.stat().st_size / 1e6:.1f} MB); new corpus {corpus.name} "
                  f"({corpus.stat().st_size / 1e6:.1f} MB); +{args.new:,} pieces")
            return report(results)
        from tokenizers_app.bpe import save_tokenizer, train_bpe

        parent = train_bpe(parent_corpus, args.parent_size, ["<|endoftext|>"]).tokenizer()
        [parent_file] = save_tokenizer(parent, folder / "parent.json", "native")
        total = len(parent.vocab) + args.new
        jobs = {"extend": {"mode": "extend", "parent": str(parent_file), "corpus": str(corpus),
                           "new": args.new},
                "scratch-total": {"mode": "scratch", "corpus": str(corpus), "vocab_size": total},
                "scratch-new": {"mode": "scratch", "corpus": str(corpus),
                                "vocab_size": 257 + args.new}}
        results: dict[str, list[dict]] = {name: [] for name in jobs}
        for _ in range(max(1, args.repeat)):
            for name, job in jobs.items():
                results[name].append(run(job))
        print(f"parent: {len(parent.vocab):,} tokens on {parent_corpus.name} "
              f"({parent_corpus.stat().st_size / 1e6:.1f} MB); new corpus {corpus.name} "
              f"({corpus.stat().st_size / 1e6:.1f} MB); +{args.new:,} tokens; core "
              f"{results['extend'][0]['core']}")
    report(results)


def report(results: dict[str, list[dict]]) -> None:
    """The best time of each, its spread over the repeats, and ``extend``'s time over
    ``scratch-new``'s in each round (they take turns, so a round's two ran under the same load)."""
    best = {name: (min(r["seconds"] for r in rs), max(r["rss_kb"] for r in rs), rs[0]["vocab"])
            for name, rs in results.items()}
    for name, (seconds, rss, vocab) in best.items():
        ratio = seconds / best["extend"][0]
        worst = max(r["seconds"] for r in results[name])
        print(f"{name:14} {seconds:8.2f} s  (up to {worst:.2f} s)  {rss / 1024:6.0f} MB peak RSS  "
              f"{vocab:7,} tokens  time x{ratio:.2f} of extend")
    rounds = [e["seconds"] / s["seconds"]
              for e, s in zip(results["extend"], results["scratch-new"])]
    print(f"extend / scratch-new: best {best['extend'][0] / best['scratch-new'][0]:.2f}; per "
          f"round {', '.join(f'{r:.2f}' for r in rounds)}")
    if all("cpu" in r for rs in results.values() for r in rs):  # --kind sentencepiece
        cpu = {name: min(r["cpu"] for r in rs) for name, rs in results.items()}
        print(f"processor seconds (best; the load moves them less): "
              f"{', '.join(f'{name} {seconds:.2f}' for name, seconds in cpu.items())}; "
              f"extend / scratch-new {cpu['extend'] / cpu['scratch-new']:.2f}")


if __name__ == "__main__":
    main()
