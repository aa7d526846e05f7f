"""Training: ours against Hugging Face `tokenizers`, on the same file, in the same run.

    python bench/train.py --corpus PATH --vocab-size 32000 [--pattern gpt2] [--special-token T]
                          [--repeat 1] [--algorithm char_bpe]

``--algorithm char_bpe``: character-level BPE (words split at whitespace, ``</w>``, ``<unk>``)
against Hugging Face's ``BpeTrainer(end_of_word_suffix="</w>")`` (what its ``CharBPETokenizer``
trains) on the same words (``WhitespaceSplit``); the script checks that both learn the same
number of tokens.

Each trainer runs in a fresh child process, one after the other (``--repeat`` times, taking
turns); the script prints the best wall time, the highest peak RSS (the child's own peak plus its
largest worker's, for ours), the ratios ours / peer, and the spread of the time ratio over the
rounds (each round's ours / peer). It also prints which core ours runs (``compiled.CORE_PATH``:
set ``BPE_PURE_PYTHON=1`` to time the pure-Python loops).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

OURS = """
import json, resource, sys, time
from pathlib import Path
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.compiled import CORE_PATH
args = json.loads(sys.argv[1])
start = time.perf_counter()
result = train_bpe(Path(args["corpus"]), args["vocab_size"], special_tokens=args["special"],
                   pattern=args["pattern"])
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(
    resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": len(result.vocab),
                  "core": CORE_PATH}))
"""

PEER = """
import json, resource, sys, time
from tokenizers import Tokenizer, models, pre_tokenizers, trainers, Regex
args = json.loads(sys.argv[1])
start = time.perf_counter()
tok = Tokenizer(models.BPE())
if args["pattern"] == "gpt2":
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
else:
    from tokenizers_app.bpe.pretokenize import pattern_regex
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern_regex(args["pattern"])), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
tok.add_special_tokens(args["special"])
trainer = trainers.BpeTrainer(vocab_size=args["vocab_size"], special_tokens=args["special"],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                              min_frequency=0, show_progress=False)
tok.train([args["corpus"]], trainer)
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": tok.get_vocab_size()}))
"""


OURS_CHAR = """
import json, resource, sys, time
from pathlib import Path
from tokenizers_app.bpe import train_char_bpe
from tokenizers_app.bpe.compiled import CORE_PATH
args = json.loads(sys.argv[1])
start = time.perf_counter()
result = train_char_bpe([Path(args["corpus"])], args["vocab_size"], special_tokens=args["special"])
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(
    resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": len(result.vocab),
                  "core": CORE_PATH}))
"""

PEER_CHAR = """
import json, resource, sys, time
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
args = json.loads(sys.argv[1])
start = time.perf_counter()
tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
trainer = trainers.BpeTrainer(vocab_size=args["vocab_size"], special_tokens=args["special"],
                              end_of_word_suffix="</w>", min_frequency=0, show_progress=False)
tok.train([args["corpus"]], trainer)
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": tok.get_vocab_size()}))
"""


def run(code: str, args: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def best_of(codes: list[str], args: dict, repeat: int) -> list[dict]:
    """For each trainer, the best time and the highest peak RSS of ``repeat`` runs; the trainers
    take turns, so that drift hits all alike."""
    runs = [[] for _ in codes]
    for _ in range(max(1, repeat)):
        for code, results in zip(codes, runs):
            results.append(run(code, args))
    return [{"seconds": min(r["seconds"] for r in results),
             "rss_kb": max(r["rss_kb"] for r in results), "vocab": results[0]["vocab"],
             "core": results[0].get("core"), "rounds": [r["seconds"] for r in results]}
            for results in runs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--vocab-size", type=int, required=True)
    parser.add_argument("--pattern", default="gpt2")
    parser.add_argument("--special-token", action="append", default=None)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each trainer")
    parser.add_argument("--algorithm", default="byte_bpe", choices=["byte_bpe", "char_bpe"])
    opts = parser.parse_args()
    char_level = opts.algorithm == "char_bpe"
    default_special = ["<unk>"] if char_level else ["<|endoftext|>"]
    args = {"corpus": str(Path(opts.corpus).resolve()), "vocab_size": opts.vocab_size,
            "pattern": opts.pattern, "special": opts.special_token or default_special}
    size_mb = Path(args["corpus"]).stat().st_size / 1e6
    split = "words split at whitespace, </w>" if char_level else f"pattern {opts.pattern}"
    print(f"corpus {opts.corpus} ({size_mb:.1f} MB), {opts.algorithm}, vocab {opts.vocab_size}, "
          f"{split}, special {args['special']}, best of {opts.repeat}")
    ours, peer = best_of([OURS_CHAR, PEER_CHAR] if char_level else [OURS, PEER], args,
                         opts.repeat)
    if char_level and ours["vocab"] != peer["vocab"]:
        raise SystemExit(f"the trainers made {ours['vocab']} and {peer['vocab']} tokens: not "
                         f"the same task")
    print(f"ours runs the core: {ours['core']}")
    print(f"{'trainer':<28}{'wall s':>10}{'peak RSS MB':>14}{'vocab':>8}")
    for name, r in (("ours", ours), ("HF tokenizers (Rust)", peer)):
        print(f"{name:<28}{r['seconds']:>10.2f}{r['rss_kb'] / 1024:>14.0f}{r['vocab']:>8}")
    print(f"ratio ours/HF: time {ours['seconds'] / peer['seconds']:.2f}x, "
          f"peak RSS {ours['rss_kb'] / peer['rss_kb']:.2f}x")
    ratios = [o / p for o, p in zip(ours["rounds"], peer["rounds"])]
    print(f"time ratio per round: {', '.join(f'{r:.2f}x' for r in ratios)} "
          f"(spread {min(ratios):.2f}x to {max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
