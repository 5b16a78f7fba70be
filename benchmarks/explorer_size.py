"""The story explorer's size and load time, for a finished run and for a generated corpus.

    .venv/bin/python benchmarks/explorer_size.py --results /path/to/results --corpus hippocorpus
    .venv/bin/python benchmarks/explorer_size.py --generate 5000

``--results`` builds the page of a finished run's corpus from its files, as rule
build_story_explorer does (``comparison/measures.parquet`` and its tables; a run made before
the comparison existed, with sequentiality only, gets its story table built here from the
sequentiality story scores). ``--generate N`` builds the page of N made-up stories shaped like
the default config's HIPPOCORPUS run: 18 sentences of 15 words each, two sequentiality models
with two formulations and histories 1..9 and full, three models in the story table with 13
measures, one tension curve of 6 cuts per story (fabula entropy and plot holes, run on a few
stories only, are left out).

It prints the page's size, the time to write it, and the page's load time in headless Chromium
(the page's own ``data-ready-ms``: milliseconds from the start of navigation to the table drawn
and the first story shown, median of ``--repeats`` loads), and the load time of a story chosen
by its URL. The figures in docs/explorer.md ("Size and load time") are this script's output.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def run_sources(results: Path, corpus: str):
    """The explorer's sources of a finished run's corpus."""
    from storyflow import tables
    from storyflow.comparison.story_table import measure_units, story_table
    from storyflow.comparison.verdicts import measure_verdicts
    from storyflow.explorer.gather import read_sources
    from storyflow.measures.sequentiality.scores import story_measures

    base = results / corpus
    paths = {
        "stories": base / "corpus/stories.parquet",
        "sentences": base / "corpus/sentences.parquet",
        "validity": results / "validity.csv",
        "sentence_scores": sorted(base.glob("sequentiality/scores/*/sentences.parquet")),
        "tension_curves": sorted(base.glob("tension/curves/*/*.parquet")),
        "fabula_versions": sorted(base.glob("fabula_entropy/versions.parquet")),
        "fabula_questions": sorted(base.glob("fabula_entropy/questions.parquet")),
        "fabula_answers": sorted(base.glob("fabula_entropy/answers/*.parquet")),
        "plot_hole_stories": sorted(base.glob("plot_holes/made/*.parquet")),
        "plot_hole_answers": sorted(base.glob("plot_holes/answers.parquet")),
    }
    comparison = base / "comparison"
    if (comparison / "measures.parquet").is_file():
        paths["table"] = comparison / "measures.parquet"
        paths["units"] = comparison / "tables/measure_units.csv"
        paths["verdicts"] = comparison / "tables/measure_verdicts.csv"
        return read_sources(paths)
    # a run without the comparison: its story table from the sequentiality story scores
    out = Path(tempfile.mkdtemp(prefix="explorer-"))
    stories = tables.read(tables.STORIES, paths["stories"])
    sentences = tables.read(tables.SENTENCES, paths["sentences"])
    measures = story_measures(
        tables.read_all(
            tables.STORY_SEQUENTIALITY, sorted(base.glob("sequentiality/scores/*/stories.parquet"))
        )
    )
    validity = tables.read(tables.VALIDITY, paths["validity"])
    verdicts = measure_verdicts(measures, validity, corpus)
    story_table(stories, sentences, [measures], verdicts).to_parquet(out / "measures.parquet")
    measure_units(measures, stories).to_csv(out / "units.csv", index=False)
    verdicts.to_csv(out / "verdicts.csv", index=False)
    paths |= {
        "table": out / "measures.parquet",
        "units": out / "units.csv",
        "verdicts": out / "verdicts.csv",
    }
    return read_sources(paths)


def generated_sources(n: int, seed: int = 0):
    """The sources of ``n`` made-up stories (see the module docstring)."""
    from storyflow import tables
    from storyflow.explorer import Sources

    rng = np.random.default_rng(seed)
    words = np.array(
        [
            "the",
            "a",
            "story",
            "went",
            "home",
            "car",
            "lake",
            "sister",
            "bread",
            "walked",
            "day",
            "night",
        ]
    )
    ids = [f"story{i:05d}" for i in range(n)]
    groups = np.array(["imagined", "recalled", "retold"])[np.arange(n) % 3]
    n_sent = 18
    texts = [
        [" ".join(rng.choice(words, 15)).capitalize() + "." for _ in range(n_sent)] for _ in ids
    ]
    stories = tables.STORIES.frame(
        pd.DataFrame(
            {
                "story_id": ids,
                "story_type": groups,
                "text": [" ".join(t) for t in texts],
                "topic": "a topic",
                "has_topic": True,
            }
        )
    )
    sentences = tables.SENTENCES.frame(
        pd.DataFrame(
            {
                "story_id": np.repeat(ids, n_sent),
                "sentence_idx": np.tile(np.arange(n_sent), n),
                "text": [s for t in texts for s in t],
            }
        )
    )
    seq_models = ["gemma3-270m", "smollm2-135m-instruct"]
    histories = [str(h) for h in range(1, 10)] + ["full"]
    frames = []
    for model in seq_models:
        for formulation in ("context", "topic"):
            base = rng.normal(4.2, 1.2, (n, n_sent))
            for history in histories:
                context = base - np.abs(rng.normal(1.2, 1.0, (n, n_sent)))
                context[:, 0] = base[:, 0]
                frames.append(
                    pd.DataFrame(
                        {
                            "story_id": np.repeat(ids, n_sent),
                            "sentence_idx": np.tile(np.arange(n_sent), n),
                            "model": model,
                            "formulation": formulation,
                            "history": history,
                            "n_history": 0,
                            "truncated": False,
                            "nll_base": base.ravel(),
                            "nll_context": context.ravel(),
                            "seq": (base - context).ravel(),
                        }
                    )
                )
    scores = tables.SENTENCE_SEQUENTIALITY.frame(pd.concat(frames, ignore_index=True))
    cuts = 6
    curves = tables.TENSION_CURVES.frame(
        pd.DataFrame(
            {
                "story_id": np.repeat(ids, cuts),
                "story_type": np.repeat(groups, cuts),
                "model": "smollm2-135m-instruct",
                "cut": np.tile(np.arange(cuts), n),
                "sentence_idx": np.tile(np.arange(cuts) * 3, n),
                "pct": np.tile((np.arange(cuts) * 3 + 1) / n_sent, n),
                "judge": "embedding",
                "n_samples": 4,
                "n_judged": 4,
                "n_no": 2,
                "n_unjudged": 0,
                "no_rate": rng.integers(0, 5, n * cuts) / 4,
                "no_rate_judged": 0.5,
            }
        )
    )
    models = ["gemma3-270m", "qwen2.5-coder-1.5b-instruct", "smollm2-135m-instruct"]
    measures = [f"measure.m{k:02d}" for k in range(13)]
    table = pd.DataFrame(
        {
            "story_id": np.repeat(ids, len(models)),
            "model": np.tile(models, n),
            "story_type": np.repeat(groups, len(models)),
            "n_sentences": n_sent,
            "n_words": n_sent * 15,
            "failed_measures": np.tile(["", "", "measure.m12"], n),
        }
    )
    for m in measures:
        table[m] = rng.normal(0, 1, len(table))
    units = tables.MEASURE_UNITS.frame(
        tables.MEASURE_UNITS.row(
            measure=m, unit="unit", models=" ".join(models), n_stories=n, n_missing=0
        )
        for m in measures
    )
    verdicts = tables.MEASURE_VERDICTS.frame(
        [
            tables.MEASURE_VERDICTS.row(
                measure="measure.m12",
                model="smollm2-135m-instruct",
                verdict="failed",
                failed="judge embedding balanced_accuracy",
            )
        ]
    )
    return Sources(
        stories=stories,
        sentences=sentences,
        table=tables.STORY_TABLE.check(table),
        units=units,
        verdicts=verdicts,
        validity=tables.VALIDITY.empty(),
        sentence_scores=scores,
        tension_curves=curves,
    )


def load_ms(chromium: str, url: str) -> int:
    """The page's ``data-ready-ms`` after one headless load of ``url``."""
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True).stdout
    found = re.search(r'data-ready-ms="(\d+)"', dom)
    if not found:
        raise SystemExit(f"the page did not finish loading: {url}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, help="a finished run's results folder")
    parser.add_argument("--corpus", default="hippocorpus")
    parser.add_argument("--generate", type=int, help="build the page of N made-up stories")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args()
    from storyflow.explorer import gather, write

    if args.generate:
        name, sources = f"generated-{args.generate}", generated_sources(args.generate)
    elif args.results:
        name, sources = args.corpus, run_sources(args.results, args.corpus)
    else:
        raise SystemExit("give --results (with --corpus) or --generate N")
    args.out.mkdir(parents=True, exist_ok=True)
    page = args.out / f"story_explorer-{name}.html"
    start = time.perf_counter()
    explorer = gather(args.corpus, sources)
    size = write(explorer, page)
    seconds = time.perf_counter() - start
    print(f"{name}: {len(explorer.details)} stories, {len(sources.table)} table rows")
    print(f"page: {size / 1e6:.2f} MB, gathered and written in {seconds:.1f} s")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("Chromium not found: no load time")
        return
    first = [load_ms(chromium, page.as_uri()) for _ in range(args.repeats)]
    last = explorer.index["stories"]["id"][-1]
    chosen = [load_ms(chromium, f"{page.as_uri()}#story={last}") for _ in range(args.repeats)]
    print(f"load to first story shown: median {statistics.median(first)} ms {first}")
    print(f"load with the last story chosen by URL: median {statistics.median(chosen)} ms {chosen}")


if __name__ == "__main__":
    main()
