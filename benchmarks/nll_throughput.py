"""NLL throughput benchmark: the engine against per-condition scoring and the raw forward ceiling.

    .venv/bin/python benchmarks/nll_throughput.py --model resources/models/gemma3-270m.gguf \
        --stories 1 --max-history 9 --threads 2

For one model and N real HIPPOCORPUS stories (the N whose length in characters is closest to the
corpus median), both formulations and h = 0..H plus full history, it measures in one run:

* **engine**: ``storyflow.lm.nll.engine.score_stories`` as ``score_corpus`` runs it (one pass per
  context start, prefix KV reused; with ``--n-seq`` > 1, that many passes per llama.cpp batch,
  each its own sequence);
* **per-condition**: the direct way (as minicons-style scorers and the per-prompt procedure
  Sap et al. describe work; no code of theirs was released, fiction_flows.txt l. 133): one
  prompt per (sentence, h, formulation), each evaluated from scratch in its own forward pass
  with logits at every position (as GPT-3 ``echo`` or minicons compute them); the target's
  log-probs are read;
* **ceiling**: the model's raw forward throughput on the same machine and batch settings: one
  long sequence of real story tokens (as long as the engine's context window), logits at every
  position, no log-softmax;

and prints wall time, tokens evaluated and tokens/s of each, the ratios (speedup over
per-condition, engine tokens/s over the ceiling, tokens evaluated over the lower bound: each
prefix once per story and formulation plus each target sentence once per distinct context), peak
memory (``ru_maxrss`` of a separate process per phase) and PASS/MISS against the targets of
issue 3. It also checks that the engine and per-condition scoring give the same NLLs. The figures
go to ``benchmarks/out/nll_throughput-<model>.json``.

Timings on a shared machine are noisy: the load average before and after each phase is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CSV = REPO.parent / "shared" / "data" / "hippocorpus" / "hippocorpus.csv"
TARGETS = {"speedup": 8.0, "ceiling_share": 0.85, "token_ratio": 1.1}


# --- phases (each runs in its own process, so that ru_maxrss is the phase's own peak) ----------


def _load(stories_json: Path, model: str, max_history: int):
    from storyflow.lm.backends.llama_cpp import VocabOnly
    from storyflow.lm.nll.planning import context_size, tokenize_story

    stories = json.loads(stories_json.read_text())
    vocab = VocabOnly(model)
    tokenized = [tokenize_story(vocab, s["story_id"], s["sentences"], s["topic"]) for s in stories]
    start = vocab.start_token
    needed = context_size(tokenized, ("topic", "context"), start)
    n_ctx = -(-needed // 64) * 64  # as score_corpus sizes it
    return tokenized, start, n_ctx, vocab.n_ctx_train


def _scorer(args: argparse.Namespace, n_ctx: int):
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    return LlamaCppScorer(
        args.model,
        n_ctx=n_ctx,
        n_threads=args.threads,
        n_batch=args.n_batch,
        n_gpu_layers=args.n_gpu_layers,
    )


def phase_engine(args: argparse.Namespace) -> dict:
    from storyflow.lm.connect import open_model
    from storyflow.lm.nll.engine import NllSettings, score_story
    from storyflow.lm.nll.planning import PassCounter
    from storyflow.lm.specs import ModelSpec

    tokenized, start, n_ctx, _ = _load(args.stories_json, args.model, args.max_history)
    settings = NllSettings(
        max_history=args.max_history,
        formulations=("topic", "context"),
        max_context_tokens=2048,
        n_gpu_layers=args.n_gpu_layers,
        n_batch=args.n_batch,
        n_seq=args.n_seq,
        n_threads=args.threads,
        max_story_tokens=8192,
        beyond_window="shared",
        tokens_per_second=None,
    )
    model = open_model(
        ModelSpec.local("benchmarked", n_gpu_layers=args.n_gpu_layers),
        args.model,
        n_threads=args.threads,
    )
    # as run_corpus opens it
    scorer = model.scorer(n_ctx=n_ctx, n_seq=settings.n_seq, n_batch=settings.n_batch)
    counter = PassCounter()
    nll = {}
    began = time.perf_counter()
    for story in tokenized:  # as score_corpus: both formulations of a story together
        terms = score_story(
            scorer, story, settings.formulations, start, args.max_history, n_ctx, counter
        )
        for formulation, story_terms in terms.items():
            for (c, i), term in story_terms.items():
                nll[f"{story.story_id}|{formulation}|{c}|{i}"] = term.nll
    wall = time.perf_counter() - began
    return {
        "wall_s": wall,
        "tokens": scorer.tokens_evaluated,
        "lower_bound": counter.tokens,
        "passes": counter.passes,
        "batches": getattr(scorer, "batches", counter.passes),
        "n_ctx": n_ctx,
        "logits_rows": scorer.logits_rows,
        "nll": nll,
    }


def phase_per_condition(args: argparse.Namespace) -> dict:
    from storyflow.history import FULL, history_labels
    from storyflow.lm.backends.llama_cpp import token_logprobs

    tokenized, start, n_ctx, _ = _load(args.stories_json, args.model, args.max_history)
    scorer = _scorer(args, n_ctx)
    llm = scorer.llm
    tokens = 0
    prompts = 0
    nll = {}
    began = time.perf_counter()
    for story in tokenized:
        for formulation in ("topic", "context"):
            prefix = story.prefix(formulation, start)
            for i, target in enumerate(story.sentences):
                for label in history_labels(args.max_history):
                    c = 0 if label == FULL else max(0, i - int(label))
                    prompt = prefix + [t for s in story.sentences[c:i] for t in s] + target
                    llm.reset()  # from scratch: no cached state is reused
                    llm.eval(prompt)
                    n = len(prompt)
                    logprobs = token_logprobs(llm.scores[n - 1 - len(target) : n - 1], target)
                    nll[f"{story.story_id}|{formulation}|{c}|{i}"] = -float(logprobs.mean())
                    tokens += n
                    prompts += 1
    wall = time.perf_counter() - began
    return {"wall_s": wall, "tokens": tokens, "prompts": prompts, "nll": nll}


def phase_ceiling(args: argparse.Namespace) -> dict:
    tokenized, start, n_ctx, _ = _load(args.stories_json, args.model, args.max_history)
    body = [t for story in tokenized for s in story.sentences for t in s]
    sequence = [start, *(body * (1 + n_ctx // max(1, len(body))))][:n_ctx]
    scorer = _scorer(args, n_ctx)
    llm = scorer.llm
    llm.reset()
    llm.eval(sequence[:8])  # warm-up (thread pool, first allocation)
    walls = []
    for _ in range(args.ceiling_repeats):
        llm.reset()
        began = time.perf_counter()
        llm.eval(sequence)
        walls.append(time.perf_counter() - began)
    return {"wall_s": min(walls), "walls": walls, "tokens": len(sequence)}


PHASES = {
    "engine": phase_engine,
    "per_condition": phase_per_condition,
    "ceiling": phase_ceiling,
}


def run_phase(args: argparse.Namespace) -> None:
    result = PHASES[args.phase](args)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(args.result).write_text(json.dumps(result))


# --- driver ------------------------------------------------------------------------------------


def pick_stories(csv: Path, n: int) -> list[dict]:
    """The n stories whose length is closest to the median, split into sentences with spaCy."""
    import pandas as pd

    from storyflow.sentences import load_spacy, split_sentences

    table = pd.read_csv(csv, dtype=str, keep_default_na=False)
    length = table["story"].str.len()
    chosen = table.loc[(length - length.median()).abs().sort_values(kind="stable").index[:n]]
    frame = pd.DataFrame({"story_id": chosen["AssignmentId"], "text": chosen["story"]})
    sentences = split_sentences(frame, load_spacy("en_core_web_sm"))
    return [
        {
            "story_id": row.AssignmentId,
            "topic": row.summary,
            "sentences": list(sentences.loc[sentences["story_id"] == row.AssignmentId, "text"]),
        }
        for row in chosen.itertuples()
    ]


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="GGUF file")
    parser.add_argument("--stories", type=int, default=1, help="N stories (default 1)")
    parser.add_argument("--max-history", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-batch", type=int, default=512)
    parser.add_argument(
        "--n-seq",
        type=int,
        default=1,
        help="engine passes per llama.cpp batch (nll.n_seq; > 1: the batched scorer)",
    )
    parser.add_argument(
        "--n-gpu-layers", type=int, default=0, help="layers offloaded to the GPU (-1: all)"
    )
    parser.add_argument("--ceiling-repeats", type=int, default=2)
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV, help="HIPPOCORPUS CSV")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out")
    parser.add_argument(
        "--stories-from",
        type=Path,
        help="reuse the stories (already split) of an earlier run: its out/stories-<model>.json "
        "(for a machine without spaCy or the corpus, such as a GPU node)",
    )
    parser.add_argument("--phase", choices=list(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--stories-json", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        run_phase(args)
        return

    args.out.mkdir(parents=True, exist_ok=True)
    name = Path(args.model).stem
    if args.stories_from:
        stories = json.loads(args.stories_from.read_text())[: args.stories]
    else:
        stories = pick_stories(args.csv, args.stories)
    stories_json = args.out / f"stories-{name}.json"
    stories_json.write_text(json.dumps(stories))
    results = {}
    for phase in ("ceiling", "engine", "per_condition", "ceiling_after"):
        result_path = args.out / f"phase-{name}-{phase}.json"
        load_before = load_average()
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--model",
                str(args.model),
                "--max-history",
                str(args.max_history),
                "--threads",
                str(args.threads),
                "--n-batch",
                str(args.n_batch),
                "--n-seq",
                str(args.n_seq),
                "--n-gpu-layers",
                str(args.n_gpu_layers),
                "--ceiling-repeats",
                str(args.ceiling_repeats),
                "--phase",
                phase.removesuffix("_after"),
                "--stories-json",
                str(stories_json),
                "--result",
                str(result_path),
            ],
            check=True,
        )
        results[phase] = json.loads(result_path.read_text())
        results[phase]["load_before"] = load_before
        results[phase]["load_after"] = load_average()
        result_path.unlink()
    report(args, name, stories, results)


def report(args: argparse.Namespace, name: str, stories: list[dict], results: dict) -> None:
    engine, per_cond = results["engine"], results["per_condition"]
    # the ceiling is measured before and after the other phases; the better one is the ceiling
    ceiling = min((results["ceiling"], results["ceiling_after"]), key=lambda r: r["wall_s"])
    keys = sorted(engine["nll"])
    diffs = np.abs(np.array([engine["nll"][k] - per_cond["nll"][k] for k in keys]))
    for r in (engine, per_cond, ceiling):
        r["tok_s"] = r["tokens"] / r["wall_s"]
    speedup = per_cond["wall_s"] / engine["wall_s"]
    share = engine["tok_s"] / ceiling["tok_s"]
    token_ratio = engine["tokens"] / engine["lower_bound"]
    from llama_cpp import Llama

    meta = Llama(model_path=str(args.model), vocab_only=True, verbose=False)
    vocab = meta.n_vocab()
    n_ctx_train = int(meta.metadata.get(f"{meta.metadata['general.architecture']}.context_length"))
    rows = engine["logits_rows"]  # the window (one pass at a time), or a batch's tokens
    logits_mb = rows * vocab * 4 / 2**20
    naive_mb = n_ctx_train * vocab * 4 / 2**20
    n_sent = sum(len(s["sentences"]) for s in stories)
    lines = [
        f"model {name}: {args.stories} HIPPOCORPUS stories ({n_sent} sentences), H = "
        f"{args.max_history} + full, topic and context, {args.threads} threads, n_batch "
        f"{args.n_batch}, n_seq {args.n_seq}, n_gpu_layers {args.n_gpu_layers}, vocab {vocab}",
        f"{'':16}{'wall s':>9}{'tokens':>10}{'tok/s':>9}{'peak RSS MB':>13}{'load 1m':>13}",
    ]
    for label, r in (("engine", engine), ("per-condition", per_cond), ("ceiling", ceiling)):
        lines.append(
            f"{label:16}{r['wall_s']:9.1f}{r['tokens']:10d}{r['tok_s']:9.1f}"
            f"{r['peak_rss_mb']:13.0f}{r['load_before']:6.2f}->{r['load_after']:.2f}"
        )
    checks = [
        ("speedup over per-condition", speedup, f">= {TARGETS['speedup']:.0f}x",
         speedup >= TARGETS["speedup"], f"{speedup:.2f}x"),
        ("engine tok/s / ceiling", share, f">= {TARGETS['ceiling_share']:.0%}",
         share >= TARGETS["ceiling_share"], f"{share:.1%}"),
        ("tokens / lower bound", token_ratio, f"<= {TARGETS['token_ratio']}",
         token_ratio <= TARGETS["token_ratio"],
         f"{token_ratio:.3f} ({engine['tokens']} / {engine['lower_bound']})"),
        ("logits buffer", logits_mb, "window, not training context",
         rows < n_ctx_train,
         f"{rows} x {vocab} x 4 B = {logits_mb:.0f} MB (training context {n_ctx_train}: "
         f"{naive_mb:.0f} MB)"),
    ]  # fmt: skip
    lines.append("targets:")
    for label, _, target, ok, text in checks:
        lines.append(f"  {'PASS' if ok else 'MISS'}  {label:28} {text}   (target {target})")
    lines.append(
        f"per-condition: {per_cond['prompts']} prompts, each from scratch; engine: "
        f"{engine['passes']} passes in {engine['batches']} batches. Engine vs per-condition "
        f"NLL: max |diff| "
        f"{diffs.max():.2e}, mean {diffs.mean():.2e} nats/token over {len(diffs)} terms"
    )
    lines.append(f"ceiling: one {ceiling['tokens']}-token sequence, walls {ceiling['walls']}")
    text = "\n".join(lines)
    print(text)
    figures = {
        "model": name,
        "stories": [s["story_id"] for s in stories],
        "sentences": n_sent,
        "max_history": args.max_history,
        "threads": args.threads,
        "n_batch": args.n_batch,
        "n_seq": args.n_seq,
        "n_gpu_layers": args.n_gpu_layers,
        "engine": {k: v for k, v in engine.items() if k != "nll"},
        "per_condition": {k: v for k, v in per_cond.items() if k != "nll"},
        "ceiling": ceiling,
        "speedup": speedup,
        "ceiling_share": share,
        "token_ratio": token_ratio,
        "logits_buffer_mb": logits_mb,
        "nll_max_abs_diff": float(diffs.max()),
        "nll_mean_abs_diff": float(diffs.mean()),
        "printed": text,
    }
    (args.out / f"nll_throughput-{name}.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
