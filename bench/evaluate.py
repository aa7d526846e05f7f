"""Evaluation of every kind: ``evaluate()`` (all metrics) against the kind's own library encoding
the same documents, in the same run: for the core's kinds, the text in pieces cut where no token
can cross (the whole text's tokens); for the library kinds, its paragraphs, each in one call, as
the evaluation encodes them (a SentencePiece model or a Llama-style ``tokenizer.json`` marks the
start of every text it encodes, so the whole text in one call has other tokens).

    python bench/evaluate.py --corpus PATH [--megabytes 16] [--repeat 3] [--fixtures DIR] [--cpu]

Kinds: byte-level BPE (GPT-2's vocabulary; peer tiktoken), character-level BPE (trained here;
peer Hugging Face ``tokenizers`` on its ``tokenizer.json``), and the ``hf`` and
``sentencepiece`` kinds (a Llama-style BPE with byte fallback, a BERT WordPiece, a Unigram, and
SentencePiece BPE and Unigram, trained here on the corpus's first 2 MB with the libraries' own
trainers; peer: that library's encode). Prints seconds per run (wall; ``--cpu``: processor
seconds of this process and its children), median and min-max over ``--repeat`` runs, and the ratio evaluate /
peer encode; checks that the token counts agree (the peers encode special-token text as plain
text, as ``encode_ordinary`` does: a corpus may hold a literal ``</s>``). ``--only hf,sentencepiece`` runs the kinds whose name holds one of those.

Over workers, as the registry fans an evaluation out (issue 29):

    python bench/evaluate.py --workers 2 --megabytes 1024 [--corpus PATH] [--part-megabytes 16]

writes the corpus's first N MB to a file (all of it when it is smaller: the size printed is
what was evaluated; without ``--corpus``: the Python standard library's sources, repeated to N MB,
documents joined by blank lines), plans its parts at each kind's safe cuts
(``bpe.eval_parts``), evaluates them on ``--workers`` processes (each loads the tokenizer from
its files, reads its byte ranges from the file, and returns its totals and its peak RSS), merges
the totals, and prints per kind: wall seconds of the evaluation over the workers, the kind's own
library encoding the same text (the same documents: in one process, a batch at a time), their
ratio, the same in processor seconds (the parts' own, summed over the workers, against the
library's: the work done, whatever else the machine runs), the peak RSS of each worker (``+N``:
its sandbox child's, with ``--sandboxed``), and whether the merged totals equal a one-process
evaluation's (``--no-check`` skips that second evaluation).

The library kinds run in this process (each worker) by default. ``--sandboxed`` runs them as a
registry worker does: the library in a sandbox child of the process, which counts each batch
and sends its totals back (``engines.totals_wire``); the processor seconds are then the
child's and its parent's.
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
from tokenizers_app.engines import read_engine_files  # noqa: E402
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
    def wanted(name: str) -> bool:
        return only is None or any(part in name for part in only.split(","))

    for name, tokenizer, peer in all_kinds(fixtures, training, wanted):
        yield name, tokenizer, peer


def all_kinds(fixtures: Path, training: str, wanted=lambda name: True):
    """Each kind ``wanted`` by its name, built (trained) only then."""
    import tiktoken
    import tokenizers

    from tokenizers_app.bpe.pretokenize import GPT2_PATTERN

    lines = [line for line in training.splitlines() if line.strip()]
    gpt2 = load_tokenizer(fixtures)
    ranks = {t: i for i, t in gpt2.vocab.items() if i not in gpt2.special_ids.values()}
    tik = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                            special_tokens=dict(gpt2.special_ids))
    if wanted("byte_bpe (GPT-2) / tiktoken"):
        yield "byte_bpe (GPT-2) / tiktoken", gpt2, tik.encode_ordinary
    if wanted("char_bpe / HF tokenizers"):
        char = train_char_bpe([training[:1_000_000]], vocab_size=VOCAB).tokenizer()
        char_peer = tokenizers.Tokenizer.from_str(dumps_tokenizer(char, "hf")["tokenizer.json"]
                                                  .decode())
        yield "char_bpe / HF tokenizers", char, lambda t: char_peer.encode(
            t, add_special_tokens=False).ids
    yield from _library_kinds(lines, wanted)


def _library_kinds(lines: list[str], wanted):
    import sentencepiece
    import tokenizers

    for kind in ("llama-bpe", "wordpiece", "unigram"):
        if not wanted(f"hf {kind} / HF tokenizers"):
            continue
        engine = read_engine_files({"tokenizer.json": hf_trained(kind, lines)})
        peer = tokenizers.Tokenizer.from_str(engine.canonical.decode())
        peer.encode_special_tokens = True  # special-token text as plain text, as ours
        yield f"hf {kind} / HF tokenizers", engine, lambda t, p=peer: p.encode(
            t, add_special_tokens=False).ids
    for model_type in ("bpe", "unigram"):
        if not wanted(f"sentencepiece {model_type} / sentencepiece"):
            continue
        data = sentencepiece_trained(model_type, lines)
        peer = sentencepiece.SentencePieceProcessor(model_proto=data)
        yield f"sentencepiece {model_type} / sentencepiece", read_engine_files(
            {"m.model": data}), peer.encode


def evaluate_as_registry(tokenizer, blocks) -> dict:
    """The metrics as a registry evaluation computes them, with the frequent words (for the
    compare page) in the same pass (``engines.evaluation_pass``)."""
    from tokenizers_app.engines.evaluation_pass import totals_and_words
    from tokenizers_app.engines.registry import metrics_of_totals

    totals, frequent = totals_and_words(tokenizer, blocks)
    frequent.most_common(2000)
    return metrics_of_totals(tokenizer, totals)


CLOCK = time.perf_counter  # ``--cpu``: time.process_time (this process's processor seconds)


def timed(function):
    started = CLOCK()
    result = function()
    return result, CLOCK() - started


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


# -- over workers ---------------------------------------------------------------------------------

_LOADED = None
SANDBOX_MEMORY = 2 * 1024 ** 3  # a registry worker's sandbox child's (ENGINE_WORKER_MEMORY_BYTES)


def sandboxed(tokenizer):
    """A library kind as a registry worker runs it: a ``SandboxedEngine`` whose library runs
    in a child of this process, which counts each batch's totals (the core's kinds as they
    are)."""
    if not hasattr(tokenizer, "canonical"):
        return tokenizer
    from tokenizers_app.engines.registry import engine_digest
    from tokenizers_app.engines.remote import SandboxedEngine
    from tokenizers_app.engines.sandbox import EnginePool, Limits
    from tokenizers_app.engines.untrusted import image

    pool = EnginePool(1, Limits(SANDBOX_MEMORY, 24 * 3600, 3600.0), 3600.0)
    return SandboxedEngine(image(tokenizer), lambda: pool, engine_digest(tokenizer), None)


def processor_seconds() -> float:
    """This process's processor seconds and its living children's (a sandbox child's)."""
    tick, total = os.sysconf("SC_CLK_TCK"), time.process_time()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _load(recipe) -> None:
    global _LOADED
    kind, files, in_sandbox = recipe
    if kind == "core":
        from tokenizers_app.bpe.formats import loads_tokenizer

        _LOADED = loads_tokenizer(files, "native")
    else:
        _LOADED = read_engine_files(files)
        _LOADED = sandboxed(_LOADED) if in_sandbox else _LOADED
        _LOADED.encode_ordinary("a")  # (a sandbox child loads it now, before the clock)


def _evaluate_part(path: str, start: int, end: int):
    from tokenizers_app.bpe.eval_parts import part_blocks
    from tokenizers_app.engines.evaluation_pass import totals_and_words

    # as a registry part does: the totals, and the words (for the compare page) in one pass
    used = processor_seconds()
    totals, frequent = totals_and_words(_LOADED, part_blocks(path, start, end))
    frequent.most_common(50_000)
    return (totals.to_json(), os.getpid(), (_peak_rss(), _children_peak_rss()),
            processor_seconds() - used)


def _peak_rss() -> int:
    """This process's peak resident bytes (``VmHWM``: ``ru_maxrss`` would keep the parent's
    peak across the exec that started it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _children_peak_rss() -> int:
    """The largest peak resident bytes of this process's living children (its sandbox child's,
    which holds the library and, until they cross, the words of the part)."""
    found = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(os.getpid()):
            found = max(found, int(fields.get("VmHWM", "0 kB").split()[0]) * 1024)
    return found


def recipe_of(tokenizer, in_sandbox: bool = False):
    if hasattr(tokenizer, "canonical"):
        name = "tokenizer.json" if tokenizer.algorithm == "hf" else "m.model"
        return "engine", {name: tokenizer.canonical}, in_sandbox
    return "core", dumps_tokenizer(tokenizer, "native"), False


def over_workers(tokenizer, path: str, workers: int, part_bytes: int, in_sandbox: bool = False):
    """``(merged totals, wall seconds, {worker pid: (peak RSS bytes, its children's)}, parts,
    the parts' processor seconds)``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tokenizers_app.bpe.eval_parts import plan_parts
    from tokenizers_app.bpe.eval_totals import EvalTotals
    from tokenizers_app.engines.registry import cut_rule

    ranges = plan_parts(path, cut_rule(tokenizer), part_bytes)
    merged, peaks, processor = EvalTotals(), {}, 0.0
    context = multiprocessing.get_context("spawn")  # a worker holds only what it reads
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_load,
                             initargs=(recipe_of(tokenizer, in_sandbox),)) as pool:
        list(pool.map(_noop, range(workers)))  # both started before the clock
        started = time.perf_counter()
        for data, pid, rss, used in pool.map(_evaluate_part,
                                             *zip(*[(path, a, b) for a, b in ranges])):
            merged.merge(EvalTotals.from_json(data))
            peaks[pid] = tuple(map(max, peaks.get(pid, (0, 0)), rss))
            processor += used
        seconds = time.perf_counter() - started
    return merged, seconds, peaks, len(ranges), processor


def _noop(_):
    return None


def library_documents(tokenizer, path: str):
    """The text of the file at ``path`` as the evaluation encodes it (``text_documents``)."""
    from tokenizers_app.bpe.corpus import read_lines

    return text_documents(tokenizer, read_lines(path, 1 << 62))


def text_documents(tokenizer, blocks):
    """The text ``"".join(blocks)`` as the evaluation encodes it, in batches of about 1 MB:
    pieces cut where no token crosses (core kinds, joined: the same tokens), paragraphs
    (library kinds, a list of documents each encoded on its own)."""
    from tokenizers_app.bpe.evaluation import LineCounter
    from tokenizers_app.engines.evaluation import batches, documents

    lines = LineCounter(blocks)
    if hasattr(tokenizer, "canonical"):
        for batch in batches(documents(lines)):
            yield ["".join(doc) for doc in batch]
    else:
        from tokenizers_app.bpe.evaluation import document_pieces

        cuts = tokenizer.pretokenizer.line_cuts if tokenizer.algorithm == "byte_bpe" else True
        for piece in document_pieces(lines, cuts, 1 << 20):
            yield [piece]


def corpus_file(path: str | None, megabytes: float, folder: str) -> str:
    """The first ``megabytes`` MB of ``path`` (cut at a line end), or of the standard library's
    sources, as a file in ``folder``."""
    import sysconfig

    out, most = Path(folder) / "corpus.txt", int(megabytes * 1e6)
    with open(out, "wb") as sink:
        if path:
            with open(path, "rb") as stream:
                data = stream.read(most)
            sink.write(data[:data.rfind(b"\n") + 1])
            return str(out)
        written = 0
        while written < most:
            for source in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
                try:
                    data = source.read_bytes().decode("utf-8").encode()
                except (UnicodeDecodeError, OSError):
                    continue
                data = data.rstrip(b"\n") + b"\n\n"
                data = data[:most - written]
                data = data[:data.rfind(b"\n") + 1]
                sink.write(data)
                written += len(data)
                if written >= most - 100:
                    return str(out)
    return str(out)


def main_workers(opts) -> None:
    import tempfile

    from tokenizers_app.engines.registry import evaluate_totals

    fixtures = Path(opts.fixtures)
    fixtures = fixtures / "gpt2" if (fixtures / "gpt2").is_dir() else fixtures
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        path = corpus_file(opts.corpus, opts.megabytes, folder)
        size = os.path.getsize(path)
        with open(path, encoding="utf-8") as stream:
            training = stream.read(2_000_000)
        print(f"corpus {opts.corpus or 'Python standard library sources'}: {size / 1e6:.1f} MB; "
              f"{opts.workers} workers, parts of {opts.part_megabytes} MB; load average "
              f"{os.getloadavg()[0]:.1f}")
        print(f"{'kind / peer':<40}{'workers s':>10}{'peer s':>9}{'ratio':>8}"
              f"{'cpu s':>9}{'peer cpu':>9}{'ratio':>8}  {'peak RSS per worker(+child) MB':<32}"
              f"{'parts':>6}  totals")
        for name, tokenizer, peer in kinds(fixtures, training, opts.only):
            merged, seconds, peaks, parts, cpu = over_workers(
                tokenizer, path, opts.workers, int(opts.part_megabytes * 1e6), opts.sandboxed)
            started, used, peer_tokens = time.perf_counter(), time.process_time(), 0
            for batch in library_documents(tokenizer, path):
                peer_tokens += sum(len(peer(text)) for text in batch)
            peer_seconds = time.perf_counter() - started
            peer_cpu = time.process_time() - used
            if opts.check:
                one = evaluate_totals(tokenizer, _file_lines(path))
                same = "equal" if one.comparable() == merged.comparable() else "DIFFER"
            else:
                same = "not checked"
            same += "" if merged.counts["tokens"] == peer_tokens else \
                f"; tokens {merged.counts['tokens']} vs library {peer_tokens}"
            failed |= "DIFFER" in same or "library" in same
            rss = ", ".join(f"{own / 2**20:.0f}" + (f"+{child / 2**20:.0f}" if child else "")
                            for own, child in peaks.values())
            print(f"{name:<40}{seconds:>10.1f}{peer_seconds:>9.1f}"
                  f"{seconds / peer_seconds:>7.2f}x{cpu:>9.1f}{peer_cpu:>9.1f}"
                  f"{cpu / peer_cpu:>7.2f}x  {rss:<32}{parts:>6}  {same}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    sys.exit(1 if failed else 0)


def _file_lines(path: str):
    from tokenizers_app.bpe.corpus import read_lines

    return read_lines(path, 1 << 62)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="a UTF-8 text file (required without --workers)")
    parser.add_argument("--workers", type=int, default=0,
                        help="evaluate in parts over this many worker processes")
    parser.add_argument("--part-megabytes", type=float, default=16)
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="with --workers: skip the one-process evaluation")
    parser.add_argument("--megabytes", type=float, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu", action="store_true",
                        help="time in processor seconds (time.process_time), not wall seconds "
                             "(one process: on a shared machine the steadier figure)")
    parser.add_argument("--sandboxed", action="store_true",
                        help="run the library kinds as a registry worker does: in a sandbox "
                             "child that counts each batch (processor seconds: the child's too)")
    parser.add_argument("--only", help="run only the kinds whose name holds one of these "
                                       "comma-separated texts (hf,sentencepiece)")
    parser.add_argument("--fixtures", default=os.environ.get(
        "TOKENIZER_FIXTURES", str(REPO.parent / "shared" / "fixtures" / "gpt2")))
    opts = parser.parse_args()
    if opts.workers:
        return main_workers(opts)
    global CLOCK
    CLOCK = (processor_seconds if opts.sandboxed else time.process_time) if opts.cpu else CLOCK
    if not opts.corpus:
        parser.error("--corpus is required without --workers")
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
        texts = [t for batch in text_documents(tokenizer, blocks) for t in batch]
        evaluated = sandboxed(tokenizer) if opts.sandboxed else tokenizer
        evaluated.encode_ordinary("a")  # (a sandbox child loads it now, before the clock)
        for _ in range(opts.repeat):
            metrics, seconds = timed(lambda: evaluate_as_registry(evaluated, blocks))
            tokens, peer_seconds = timed(lambda: sum(len(peer(t)) for t in texts))
            ours.append(seconds)
            theirs.append(peer_seconds)
            ratios.append(seconds / peer_seconds)
        same = metrics["tokens"] == tokens
        failed |= not same
        print(f"{name:<40}{spread(ours):>22}{spread(theirs):>22}{spread(ratios):>18}x"
              f"{'' if same else '  TOKEN COUNTS DIFFER'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
