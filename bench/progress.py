"""Progress and cancellation latency of training, measured on a real corpus.

    python bench/progress.py --corpus PATH [--vocab-size 32000]

Trains twice: once to the end, recording when each ``progress`` call came (the longest gap per
stage is printed: it should stay under a second), and once with ``should_stop`` turning True a
few seconds into the merge loop (the delay until training raised is printed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokenizers_app.bpe import TrainingCancelled, train_bpe  # noqa: E402


def longest_gaps(corpus: Path, vocab_size: int) -> dict[str, float]:
    calls: list[tuple[float, str]] = []
    start = time.monotonic()
    train_bpe(corpus, vocab_size, ["<|endoftext|>"],
              progress=lambda stage, done, total: calls.append((time.monotonic(), stage)))
    gaps: dict[str, float] = {}
    previous = start
    for when, stage in calls:
        gaps[stage] = max(gaps.get(stage, 0.0), when - previous)
        previous = when
    return gaps


def cancel_delay(corpus: Path, vocab_size: int, after: float) -> float:
    state = {"stop_at": None}

    def progress(stage, done, total):
        if stage == "merge" and state["stop_at"] is None:
            state["stop_at"] = time.monotonic() + after

    def should_stop():
        return state["stop_at"] is not None and time.monotonic() >= state["stop_at"]

    try:
        train_bpe(corpus, vocab_size, ["<|endoftext|>"], progress=progress,
                  should_stop=should_stop)
    except TrainingCancelled:
        return time.monotonic() - state["stop_at"]
    raise SystemExit("training finished before the stop was asked for: use a larger vocab")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--stop-after", type=float, default=2.0)
    opts = parser.parse_args()
    for stage, gap in longest_gaps(opts.corpus, opts.vocab_size).items():
        print(f"longest gap before a progress call, stage {stage:<6}: {gap:.2f} s")
    delay = cancel_delay(opts.corpus, opts.vocab_size, opts.stop_after)
    print(f"should_stop turned True {opts.stop_after:.1f} s into merging; training raised "
          f"TrainingCancelled {delay:.2f} s later")


if __name__ == "__main__":
    main()
