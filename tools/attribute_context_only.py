"""Attribute the context-only disagreement with Fiction Flows (docs/replication.md, "Attribution
of the two disagreements"): the replication rows of the context-only formulation and of its
unconditional term, recomputed on a finished run under two variants of the NLL terms.

    .venv/bin/python tools/attribute_context_only.py RUN_DIR CONFIG [CONFIG ...] [--out CSV]

RUN_DIR is the folder the run wrote (``results/``, ``resources/``), CONFIG its config files in
the order they were given to Snakemake. For each sequentiality model of the config it reads the
run's NLL table and sentences, scores the context-only unconditional terms again with and
without the target's leading space (one short pass per sentence,
``storyflow.measures.sequentiality.variants``; the spaced pass reproduces the run's terms and the
largest difference is printed), then computes Fiction Flows' rows (``storyflow.replication``,
the run's statistics and verdict settings) four times:

- ``as run``: the run's own terms (the replication table's values);
- ``first token left out``: every term averaged over the target's tokens after the first;
- ``unconditional rescored alone``: the context-only terms without history from the spaced
  passes of one sentence each (the reference of the next variant: Gemma's log-probabilities
  move with a pass's length, so its terms read from the run's longer passes differ a little);
- ``unconditional without leading space``: those terms scored as "[start] s_i".

It prints a Markdown table of the rows in :data:`ROWS` under each variant, the first token's
mean −ln p after the start token (h = 0) and after a previous sentence (h = 1), and the mean
sentence length per story type (every type, retold included), and a table of each variant's
context-only Hedges' g per model, contrast and history size (h = 1 .. 9 and full, with the
median over 1-9 that Table A1 reports), so that a reader sees at which histories the first
token matters, and the spread of the first token's effect at h = 1 over samples of
``--subsample`` stories per type drawn from the run's (to set a smaller check on other stories
against). ``--out`` gets every replication row (CSV), ``--per-h`` the g per h (CSV);
``--no-rescore`` computes only the variants read from the run's NLL table (no model loaded).
Needs the run's weights (``resources/models/``); about 30,000 tokens per model for the 90-story
run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from replication_markdown import markdown_table
from snakemake.utils import update_config

from storyflow import config_files, stats, tables
from storyflow.lm.specs import ModelSpec, model_specs
from storyflow.measures.sequentiality import scores, variants
from storyflow.plan import corpus as corpus_plan
from storyflow.plan import models as models_plan
from storyflow.plan import replication as replication_plan
from storyflow.plan import sequentiality as sequentiality_plan
from storyflow.plan.layout import fill
from storyflow.replication import papers
from storyflow.replication.effects import aggregated_g

REPO = Path(__file__).resolve().parents[1]
#: The replication rows the attribution reads: context-only sequentiality and its terms.
ROWS = (
    "A1.topic.imagined_vs_recalled.mean",
    "A1.context.imagined_vs_recalled.mean",
    "A1.context.retold_vs_recalled.mean",
    "A2.nll_context.imagined_vs_recalled.mean",
    "A2.nll_context.retold_vs_recalled.mean",
    "A3.nll_base.imagined_vs_recalled.mean",
    "A3.nll_base.retold_vs_recalled.mean",
    "A7.context.imagined_vs_recalled.mean-instruct",
    "A7.context.retold_vs_recalled.mean-instruct",
    "A8.nll_context.imagined_vs_recalled.mean-instruct",
    "A8.nll_context.retold_vs_recalled.mean-instruct",
    "A9.nll_base.imagined_vs_recalled.mean-instruct",
    "A9.nll_base.retold_vs_recalled.mean-instruct",
)
VARIANTS = (
    "as run",
    "first token left out",
    "unconditional rescored alone",
    "unconditional without leading space",
)


def load_config(paths: list[str]) -> dict:
    """The config files merged in order, with the schema's defaults filled."""
    config: dict = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    problem = config_files.schema_problem(
        config, REPO / "workflow" / "schemas" / "config.schema.yaml"
    )
    if problem:
        sys.exit(f"config: {problem}")
    return config


def story_table(nll: pd.DataFrame, stories: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """Story-level sequentiality of one model's (variant) NLL table."""
    return scores.story_sequentiality(scores.sentence_sequentiality(nll), stories, counts)


def first_token_costs(nll: pd.DataFrame, labels: pd.DataFrame) -> str:
    """One line per story type: the first token's mean −ln p at h = 0 and at h = 1 (context
    only) and the mean sentence length in tokens."""
    context = nll[nll["formulation"] == variants.CONTEXT].merge(
        labels[["story_id", "story_type"]], on="story_id"
    )
    h0 = context[context["history"] == "0"]
    h1 = context[(context["history"] == "1") & (context["sentence_idx"] > 0)]
    lines = []
    for story_type, part in h0.groupby("story_type"):
        after_stop = h1[h1["story_type"] == story_type]
        lines.append(
            f"  {story_type}: first token {part['nll_first'].mean():.2f} nats after the start "
            f"(h = 0), {after_stop['nll_first'].mean():.2f} after the previous sentence "
            f"(h = 1); {part['n_tokens'].mean():.1f} tokens per sentence"
        )
    return "\n".join(lines)


#: The contrasts and history labels of the per-h table.
CONTRASTS = {
    "imagined_vs_recalled": ("imagined", "recalled"),
    "retold_vs_recalled": ("retold", "recalled"),
}
HISTORIES = (*map(str, range(1, 10)), "full")


def g_per_history(
    story: pd.DataFrame, labels: pd.DataFrame, settings: dict, variant: str, model: str
) -> list[dict]:
    """The context-only Hedges' g of SEQ' (group a minus b) with its bootstrap interval, per
    contrast and history label, for one model's story table under one variant."""
    part = story[(story["formulation"] == variants.CONTEXT)]
    part = part[part["n_sentences"] >= settings["min_sentences"]]
    types = dict(zip(labels["story_id"].astype(str), labels["story_type"], strict=True))
    rows = []
    for contrast, (a_type, b_type) in CONTRASTS.items():
        a = {s for s, t in types.items() if t == a_type}
        b = {s for s, t in types.items() if t == b_type}
        for history in HISTORIES:
            result = aggregated_g(
                part, a, b, measure="seq", models=[model], histories=[history],
                over_histories="median", confidence=settings["confidence"],
                resamples=settings["resamples"], seed=settings["seed"],
            )  # fmt: skip
            rows.append({"variant": variant, "model": model, "contrast": contrast,
                         "history": history, "g": result.value, "ci_low": result.ci[0],
                         "ci_high": result.ci[1]})  # fmt: skip
    return rows


def subsample_changes(
    stories_by_variant: dict[str, dict[str, pd.DataFrame]],
    labels: pd.DataFrame,
    *,
    per_type: int,
    draws: int,
    seed: int,
    history: str = "1",
) -> pd.DataFrame:
    """How much leaving the first token out moves the context-only imagined-vs-recalled g at
    one ``history`` in samples of ``per_type`` stories per type drawn (without replacement)
    from the run's: per model, the quantiles (5%, 50%, 95%) over ``draws`` samples of g as run,
    g without the first token, and their difference. A check on one smaller sample of other
    stories can be set against this spread."""
    rng = np.random.default_rng(seed)
    types = labels.set_index(labels["story_id"].astype(str))["story_type"]
    pools = {t: types.index[types == t].to_numpy() for t in ("imagined", "recalled")}
    rows = []
    for model in stories_by_variant["as run"]:
        cells = {}
        for variant in ("as run", "first token left out"):
            story = stories_by_variant[variant][model]
            part = story[(story["formulation"] == variants.CONTEXT) & (story["history"] == history)]
            cells[variant] = part.set_index(part["story_id"].astype(str))["seq"]
        values = []
        for _ in range(draws):
            a = rng.choice(pools["imagined"], per_type, replace=False)
            b = rng.choice(pools["recalled"], per_type, replace=False)
            gs = [
                stats.hedges_g(cells[v].reindex(a).dropna(), cells[v].reindex(b).dropna(), 0.95)[0]
                for v in ("as run", "first token left out")
            ]
            values.append((gs[0], gs[1], gs[1] - gs[0]))
        q = np.quantile(np.array(values), [0.05, 0.5, 0.95], axis=0)
        for name, column in (("as run", 0), ("first token left out", 1), ("change", 2)):
            rows.append(
                {"model": model, "h": history, "quantity": name, "q05": q[0, column],
                 "median": q[1, column], "q95": q[2, column]}
            )  # fmt: skip
    return pd.DataFrame(rows)


def per_history_table(per_h: pd.DataFrame) -> str:
    """The per-h g as Markdown: one line per model, contrast and variant, one column per h and
    the median over h = 1-9 (Table A1's statistic)."""
    lines = []
    for (model, contrast, variant), part in per_h.groupby(
        ["model", "contrast", "variant"], sort=False
    ):
        g = part.set_index("history")["g"]
        median = float(np.median([g[h] for h in HISTORIES if h != "full"]))
        lines.append([model, contrast, variant, *(f"{g[h]:.2f}" for h in HISTORIES),
                      f"{median:.2f}"])  # fmt: skip
    return markdown_table(["model", "contrast", "variant", *HISTORIES, "median 1-9"], lines)


def rescore(
    run: Path,
    spec: ModelSpec,
    nll: pd.DataFrame,
    sentences: pd.DataFrame,
    stories: pd.DataFrame,
    threads: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The context-only unconditional terms of one model scored again alone, with and without
    the target's leading space; prints how far the spaced ones are from the run's terms and what
    the first token costs without its space."""
    model = spec.name
    weights = run / models_plan.weights(spec)
    spaced, bare = (
        variants.score_unconditional(
            model, weights, sentences, prompt=spec.prompt, spaced=with_space, n_threads=threads
        )
        for with_space in (True, False)
    )
    key = ["story_id", "sentence_idx"]
    run_h0 = nll[(nll["formulation"] == variants.CONTEXT) & (nll["history"] == "0")]
    check = run_h0.merge(spaced, on=key, suffixes=("", "_again"))
    gap = (check["nll"] - check["nll_again"]).abs()
    print(
        f"  {len(check)} unconditional terms rescored alone with the leading space; difference "
        f"from the run's terms {gap.mean():.2g} on average, {gap.max():.2g} at most (nats/token)"
    )
    typed = bare.merge(stories[["story_id", "story_type"]], on="story_id")
    print(
        "  without the leading space the first token costs "
        + ", ".join(
            f"{t} {part['nll_first'].mean():.2f}" for t, part in typed.groupby("story_type")
        )
        + " nats after the start"
    )
    return spaced, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the folder the run wrote")
    parser.add_argument("configs", nargs="+", help="the run's config files, in order")
    parser.add_argument("--out", type=Path, default=None, help="CSV of every row and variant")
    parser.add_argument("--per-h", type=Path, default=None, help="CSV of g per model and h")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--no-rescore", action="store_true",
        help="only the variants read from the run's NLL table (no model is loaded)",
    )  # fmt: skip
    parser.add_argument(
        "--subsample", type=int, default=20, help="stories per type of the spread check"
    )
    args = parser.parse_args()
    config = load_config(args.configs)
    specs = model_specs(config["models"])
    run = args.run

    def path(template: str, **wildcards: str) -> Path:
        return run / fill(template, **wildcards)

    stories = tables.read(tables.STORIES, path(corpus_plan.STORIES, corpus="hippocorpus"))
    sentences = tables.read(tables.SENTENCES, path(corpus_plan.SENTENCES, corpus="hippocorpus"))
    counts = tables.read(
        tables.SENTENCE_COUNTS, path(corpus_plan.SENTENCE_COUNTS, corpus="hippocorpus")
    )
    by_variant: dict[str, dict[str, pd.DataFrame]] = {v: {} for v in VARIANTS}
    for model in sequentiality_plan.models(config):
        nll = tables.read(
            tables.NLL, path(sequentiality_plan.NLL, corpus="hippocorpus", model=model)
        )
        print(f"{model}:")
        print(first_token_costs(nll, stories))
        by_variant["as run"][model] = nll
        by_variant["first token left out"][model] = variants.without_first_token(nll)
        if not args.no_rescore:
            spaced, bare = rescore(run, specs[model], nll, sentences, stories, args.threads)
            by_variant["unconditional rescored alone"][model] = variants.with_unconditional(
                nll, spaced
            )
            by_variant["unconditional without leading space"][model] = variants.with_unconditional(
                nll, bare
            )
    by_variant = {v: nlls for v, nlls in by_variant.items() if nlls}
    settings = replication_plan.settings(config, "fiction_flows")
    settings["contrasts"] = {"hippocorpus": settings["contrasts"]["hippocorpus"]}
    found = []
    per_h: list[dict] = []
    stories_by_variant: dict[str, dict[str, pd.DataFrame]] = {v: {} for v in by_variant}
    with tempfile.TemporaryDirectory() as folder:
        for variant, nlls in by_variant.items():
            files = {
                "published": [
                    str(replication_plan.inputs(config, "fiction_flows")["published"][0])
                ],
                "hippocorpus_labels": [str(path(corpus_plan.STORIES, corpus="hippocorpus"))],
                "hippocorpus": [],
            }
            for model, nll in nlls.items():
                target = Path(folder) / f"{variant}-{model}.parquet".replace(" ", "_")
                story = story_table(nll, stories, counts)
                story.to_parquet(target, index=False)
                stories_by_variant[variant][model] = story
                files["hippocorpus"].append(str(target))
                per_h += g_per_history(story, stories, settings, variant, model)
            table = papers.compare("fiction_flows", files, settings)
            found.append(table[table["id"].isin(ROWS)].assign(variant=variant))
    result = pd.concat(found, ignore_index=True)
    if args.out:
        result.to_csv(args.out, index=False)
    rows = []
    for row_id in ROWS:
        part = result[result["id"] == row_id].set_index("variant")
        if part.empty or part["ours"].isna().all():
            continue
        cells = [
            f"{part.loc[v, 'ours']:.2f} [{part.loc[v, 'ci_low']:.2f}, {part.loc[v, 'ci_high']:.2f}]"
            f" {part.loc[v, 'verdict']}"
            for v in by_variant
        ]
        rows.append([row_id, f"{part['published'].iloc[0]:.3g}", *cells])
    print()
    print(markdown_table(["figure", "published", *by_variant], rows))
    per_h_frame = pd.DataFrame(per_h)
    if args.per_h:
        per_h_frame.to_csv(args.per_h, index=False)
    print()
    print("Context-only Hedges' g of SEQ' per history size (point estimates):")
    print(per_history_table(per_h_frame))
    spread = subsample_changes(
        stories_by_variant, stories, per_type=args.subsample, draws=500, seed=settings["seed"]
    )
    print()
    print(f"Imagined vs recalled at h = 1 in 500 samples of {args.subsample} stories per type "
          "drawn from the run's (5% / median / 95%):")  # fmt: skip
    print(markdown_table(
        ["model", "quantity", "5%", "median", "95%"],
        [[r.model, r.quantity, f"{r.q05:.2f}", f"{r.median:.2f}", f"{r.q95:.2f}"]
         for r in spread.itertuples()],
    ))  # fmt: skip


if __name__ == "__main__":
    main()
