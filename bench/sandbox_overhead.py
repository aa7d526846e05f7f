"""What running another library's tokenizer in a child process costs: the same BERT-style
WordPiece evaluated on the same text in this process (``HFEngine``) and through a sandbox
child (``SandboxedEngine``: the text and the spans cross a pipe as JSON), and one short encode
of each, in one run. ``python bench/sandbox_overhead.py [MEGABYTES]``"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' trained files

from tests.engines.test_engines import KINDS
from tokenizers_app.engines.hf import HFEngine
from tokenizers_app.engines.registry import engine_digest, evaluate
from tokenizers_app.engines.remote import SandboxedEngine
from tokenizers_app.engines.sandbox import EnginePool, Limits, raise_refusal


def main(megabytes: float) -> None:
    data = KINDS["bert-wordpiece"]()["tokenizer.json"]
    local = HFEngine(data)
    digest = engine_digest(local)
    pool = EnginePool(1, Limits(2 * 1024**3, 600, 600))
    image = raise_refusal(pool.call("load", "hf", digest, local.canonical))["image"]
    remote = SandboxedEngine(image, lambda: pool, digest, None, local.canonical)
    line = "The registry keeps tokenizers, 東京 and naïve café; x = 42.\n"
    text = line * int(megabytes * 1024**2 / len(line.encode()))
    found = []
    for name, engine in (("in process", local), ("sandbox child", remote)):
        started = time.perf_counter()
        metrics = evaluate(engine, [text])
        found.append({k: v for k, v in metrics.items() if k != "encode_throughput_mb_s"})
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(200):
            engine.token_spans("hello world, a short text to encode", ())
        short = (time.perf_counter() - started) / 200
        print(f"{name:14} evaluate {megabytes:g} MB: {seconds:6.2f} s "
              f"({metrics['tokens']:,} tokens); short encode: {short * 1000:.2f} ms")
    print(f"the same metrics both ways: {'yes' if found[0] == found[1] else 'NO'}")
    pool.close()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2)
