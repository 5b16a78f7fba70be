"""Answers and samples on the transformers backend: asked together against one at a time.

The roles that answer and sample (the fabula-entropy readers and the tension judge ask a call's
closed-choice prompts together; the tension forecaster draws K endings of a prompt) run on a
Hugging Face checkpoint through ``storyflow.lm.backends.transformers``. For each model this
measures, on the same prompts:

* **answers**: ``--prompts`` prompts of ``--prompt-tokens`` tokens (each length drawn between half
  and all of it), two options of two single-token variants each (as the readers' Yes/yes and
  No/no), asked one at a time (``n_seq`` 1: the prompt's cache reused for each option, as a model
  opened for one prompt at a time answers) and together (padded batches of ``--k`` prompts and at
  most ``n_batch`` tokens, as a model opened with ``share_prefix`` answers): answers/s, the
  speedup and the largest difference in an option's log-probability;
* **samples**: K = ``--k`` samples of one prompt of 64 tokens, ``--max-tokens`` tokens each at
  temperature 1 (no end token: every sample runs its full length), drawn one at a time
  (``n_seq`` 1) and together (``n_seq`` K, one batch per step): generated tokens/s, the speedup
  and how many samples equal their one-at-a-time twins (same seeds).

Models: ``--shapes`` builds random-weight models of real shapes on the device (bfloat16; as
``gpu_nll_throughput.py``, whose shapes it uses), ``--checkpoint`` loads a real checkpoint
(float32), e.g. the SmolLM2 checkpoint on a CPU (``BENCH_DEVICE=cpu``). Prompts are random token
ids (costs depend on lengths, not on the text). The figures go to
``$OUT/batched_answers_samples.json`` (or ``--out``).
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
sys.path.insert(0, str(REPO / "benchmarks"))

from gpu_nll_throughput import DEVICE, SHAPES, build, load, synchronize  # noqa: E402

#: The shapes a plain run measures: the 135M, 1.5B and 8B sizes.
DEFAULT_SHAPES = ["SmolLM2-135M", "Qwen2.5-1.5B", "Llama-3.1-8B"]
#: Answer options: two options of two single-token variants (ids given by ``OptionTokens``).
OPTIONS = {"yes": ["Yes", "yes"], "no": ["No", "no"]}


class OptionTokens:
    """A stand-in tokenizer of the option strings alone (random-weight models have none):
    each option string is one fixed token id."""

    def __init__(self) -> None:
        self.ids = {text: 10 + i for i, text in enumerate(v for vs in OPTIONS.values() for v in vs)}

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self.ids[text]]

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return " ".join(map(str, ids))


def answers_rate(
    model: Any, n_prompts: int, prompt_tokens: int, k: int, n_batches: list[int]
) -> list[dict]:
    """Answers one at a time against padded batches of ``k`` prompts and each of ``n_batches``
    tokens (see the module docstring): one row per ``n_batch``."""
    import numpy as np

    from storyflow.lm.answers import answers
    from storyflow.lm.backends.transformers import TransformersScorer

    vocab = model.config.vocab_size
    rng = np.random.default_rng(0)
    prompts = [
        rng.integers(100, vocab, int(rng.integers(prompt_tokens // 2, prompt_tokens + 1))).tolist()
        for _ in range(n_prompts)
    ]
    mean_tokens = float(np.mean([len(p) for p in prompts]))

    def timed(rows: int, n_batch: int) -> tuple[list, float]:
        scorer = TransformersScorer.of_loaded(
            model, OptionTokens(), device=DEVICE, n_seq=rows, n_batch=n_batch
        )
        answers(scorer, prompts[:2], OPTIONS)  # warm-up
        synchronize()
        began = time.perf_counter()
        got = answers(scorer, prompts, OPTIONS)
        synchronize()
        return got, time.perf_counter() - began

    alone, one_s = timed(1, max(n_batches))
    out = []
    for n_batch in n_batches:
        together, together_s = timed(k, n_batch)
        gaps = [
            abs(a - b)
            for x, y in zip(alone, together, strict=True)
            for xs, ys in zip(x.variant_logprobs, y.variant_logprobs, strict=True)
            for a, b in zip(xs, ys, strict=True)
        ]
        out.append(
            {
                "n_batch": n_batch,
                "prompts": n_prompts,
                "mean_prompt_tokens": mean_tokens,
                "one": {"seconds": one_s, "answers_per_s": n_prompts / one_s},
                "together": {"seconds": together_s, "answers_per_s": n_prompts / together_s},
                "speedup": one_s / together_s,
                "max_abs_logprob_diff": max(gaps),
                "same_best": sum(x.best == y.best for x, y in zip(alone, together, strict=True)),
            }
        )
    return out


def samples_rate(model: Any, k: int, max_tokens: int) -> dict:
    """K samples one at a time against K together (see the module docstring)."""
    import numpy as np

    from storyflow.lm.backends.transformers import TransformersSampler
    from storyflow.lm.sampling import SamplingSettings

    vocab = model.config.vocab_size
    prompt = np.random.default_rng(1).integers(100, vocab, 64).tolist()
    settings = SamplingSettings(temperature=1.0, top_p=1.0, max_tokens=max_tokens, seed=5)
    out: dict = {"k": k, "max_tokens": max_tokens}
    drawn = {}
    for name, rows in (("one", 1), ("together", k)):
        sampler = TransformersSampler.of_loaded(model, OptionTokens(), device=DEVICE, n_seq=rows)
        sampler.end_ids = frozenset()  # every sample runs max_tokens
        sampler.n_ctx = 1 << 20
        sampler.sample_ids(prompt, 2, SamplingSettings(max_tokens=4))  # warm-up
        synchronize()
        sampler.tokens_generated = 0
        began = time.perf_counter()
        drawn[name] = sampler.sample_ids(prompt, k, settings)
        synchronize()
        wall = time.perf_counter() - began
        out[name] = {"seconds": wall, "tokens_per_s": sampler.tokens_generated / wall}
    out["speedup"] = out["together"]["tokens_per_s"] / out["one"]["tokens_per_s"]
    out["equal_one_at_a_time"] = sum(
        a == b for a, b in zip(drawn["one"], drawn["together"], strict=True)
    )
    return out


def run(args: argparse.Namespace) -> None:
    import torch

    device = torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE
    report: dict = {"device": device, "torch": torch.__version__, "k": args.k, "rows": []}
    names = args.shapes if args.checkpoint is None else [args.checkpoint.name]
    for name in names:
        model = build(name, torch.bfloat16) if args.checkpoint is None else load(args.checkpoint)
        for got in answers_rate(model, args.prompts, args.prompt_tokens, args.k, args.n_batch):
            report["rows"].append({"model": name, "what": "answers", **got})
            print(
                f"{name:14s} answers, {args.prompts} prompts of ~{got['mean_prompt_tokens']:.0f} "
                f"tokens, {args.k} per batch of <= {got['n_batch']} tokens: "
                f"{got['together']['answers_per_s']:7.1f}/s together, "
                f"{got['one']['answers_per_s']:7.1f}/s one at a time = {got['speedup']:5.1f}x "
                f"(max |diff| {got['max_abs_logprob_diff']:.1e} nats, "
                f"same best {got['same_best']}/{args.prompts})",
                flush=True,
            )
        got = samples_rate(model, args.k, args.max_tokens)
        report["rows"].append({"model": name, "what": "samples", **got})
        print(
            f"{name:14s} samples, K = {args.k} x {args.max_tokens} tokens: "
            f"{got['together']['tokens_per_s']:7.1f} tok/s together, "
            f"{got['one']['tokens_per_s']:7.1f} one at a time = {got['speedup']:5.1f}x "
            f"({got['equal_one_at_a_time']}/{args.k} equal one at a time)",
            flush=True,
        )
        del model
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"-> {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES, choices=list(SHAPES))
    parser.add_argument("--checkpoint", type=Path, default=None, help="a real checkpoint folder")
    parser.add_argument("--k", type=int, default=16, help="prompts per batch; samples per prompt")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--prompt-tokens", type=int, default=400)
    parser.add_argument("--n-batch", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--max-tokens", type=int, default=32)
    default_out = Path(os.environ.get("OUT", REPO / "benchmarks/out"))
    parser.add_argument("--out", type=Path, default=default_out / "batched_answers_samples.json")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
