"""Refit Fiction Flows' §5.4 gain models once per variant of their covariates or outcome
(docs/regression.md, "The §5.4 variants") on a finished run, and print one Markdown table of
what each fit says of the claim "all p > .20 but the length delta at H1".

    .venv/bin/python tools/refit_regressions.py RUN_DIR CONFIG [CONFIG ...] [--out CSV]

RUN_DIR is the folder the run wrote (``results/``), CONFIG its config files in the order they
were given to Snakemake. It reads HIPPOCORPUS's sentences, covariate table, sentence
sequentiality and NLL terms of the regression models, parses the sentences again with the
run's spaCy pipeline and embeds them with the run's encoder, mean-pooled as run and first-token
pooled (``storyflow.lm.embeddings.load_encoder``), builds the variants of
``storyflow.measures.sequentiality.refits.VARIANTS`` and fits the run's gain specifications
(``regression.histories``, ``regression.formulation``, ``regression.models``) on each with
lme4 (``storyflow.measures.sequentiality.regression.fit_specifications``). It first prints how
closely the recomputed covariates, sequentiality and as-run fit reproduce the run's files, and
last the seconds each stage took. ``--out`` writes every variant's coefficients (CSV, column
``variant``). Needs R with lme4 and lmerTest; no language model is run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from attribute_context_only import load_config
from replication_markdown import markdown_table

from storyflow import tables
from storyflow.lm.embeddings import load_encoder
from storyflow.measures.sequentiality import covariates as cv
from storyflow.measures.sequentiality import refits, regression, scores, variants
from storyflow.measures.sequentiality.covariates import variants as cv_variants
from storyflow.plan import corpus as corpus_plan
from storyflow.plan import sequentiality as sequentiality_plan
from storyflow.plan import spacy_model, statistics
from storyflow.plan.layout import fill

CORPUS = "hippocorpus"


def timed(costs: dict[str, float], stage: str, work: Callable[[], object]) -> object:
    """Run ``work``, adding its wall-clock seconds to ``costs[stage]``."""
    start = time.perf_counter()
    result = work()
    costs[stage] = costs.get(stage, 0.0) + time.perf_counter() - start
    return result


def read_run(run: Path, config: dict) -> dict[str, pd.DataFrame]:
    """The run's sentences, covariates, sentence sequentiality and NLL terms (the regression
    models'), and its narrative-sense story covariates when its regressions used them."""

    def path(template: str, **wildcards: str) -> Path:
        found = run / fill(template, corpus=CORPUS, **wildcards)
        if not found.is_file():
            sys.exit(
                f"{found} is missing: give the folder of a finished run whose regressions were "
                "fitted, and the config files it was run with"
            )
        return found

    models = sequentiality_plan.regression_models(config)
    story = sequentiality_plan.narrative_sense_covariate(config, CORPUS)
    return {
        "sentences": tables.read(tables.SENTENCES, path(corpus_plan.SENTENCES)),
        "covariates": pd.read_parquet(path(sequentiality_plan.COVARIATES)),
        "sequentiality": regression.read_sequentiality(
            [path(sequentiality_plan.SENTENCE_SCORES, model=m) for m in models]
        ),
        "nll": pd.concat(
            [tables.read(tables.NLL, path(sequentiality_plan.NLL, model=m)) for m in models],
            ignore_index=True,
        ),
        "coefficients": regression.read_coefficients(
            path(sequentiality_plan.REGRESSION_COEFFICIENTS)
        ),
        **(
            {"story": regression.story_covariates(tables.read(tables.PAIR_SCORES, path(story[0])))}
            if story
            else {}
        ),
    }


def build_inputs(
    run: dict[str, pd.DataFrame], config: dict, threads: int, costs: dict[str, float]
) -> refits.RefitInputs:
    """Parse and embed the sentences again and build what the variants need; print how closely
    the recomputed covariates and sequentiality reproduce the run's."""
    settings = config["covariates"]
    windows = [int(w) for w in settings["windows"]]
    lexicon = sequentiality_plan.connectives(config) or sequentiality_plan.packaged_connectives()
    matcher = cv.ConnectiveMatcher(cv.load_connectives(lexicon))
    nlp = cv.load_pipeline(spacy_model(config))
    parsed = timed(costs, "parse", lambda: cv.parse_sentences(
        run["sentences"], nlp, matcher, zipf_threshold=float(settings["zipf_threshold"])
    ))  # fmt: skip
    name = settings["embedding_model"]
    embedded = {
        pooling: timed(costs, "embed", lambda p=pooling: cv.embed(
            load_encoder(name, threads=threads, pooling=p), parsed.sentences
        ))
        for pooling in (None, "cls")
    }  # fmt: skip
    backward, forward, pooled = (
        cv_variants.pair_table(parsed, embedded[p], windows, direction=d)
        for p, d in ((None, "backward"), (None, "forward"), ("cls", "backward"))
    )
    columns = cv_variants.pair_columns(windows)
    print(
        f"pair measures recomputed backward: largest difference from the run's covariates "
        f"{refits.largest_gap(backward, run['covariates'], columns):.2g}"
    )
    nll = run["nll"]
    again = scores.sentence_sequentiality(nll)
    without = scores.sentence_sequentiality(variants.without_first_token(nll))
    key = [*cv_variants.KEYS, "model", "formulation", "history"]
    check = again.astype({"history": str}).merge(
        run["sequentiality"], on=key, suffixes=("", "_run")
    )
    print(
        f"sequentiality recomputed from the NLL terms: {len(check)} rows, largest difference "
        f"{(check['seq'] - check['seq_run']).abs().max():.2g} nats/token"
    )
    return refits.RefitInputs(
        sequentiality=run["sequentiality"],
        without_first_token=without.astype({"history": str, "story_id": str}),
        covariates=run["covariates"],
        forward=forward,
        first_token_pooled=pooled,
        encoder=name,
    )


def fit_variants(
    inputs: refits.RefitInputs,
    run: dict[str, pd.DataFrame],
    config: dict,
    costs: dict[str, float],
) -> dict[str, pd.DataFrame]:
    """Every variant's gain fits (coefficient tables, by variant name)."""
    specs = [s for s in sequentiality_plan.regressions(config)[0] if s.startswith("gain_")]
    fitted = {}
    for name, (seq, cov) in refits.variant_tables(inputs, config["covariates"]["windows"]).items():
        coefficients, _ = timed(costs, "fit", lambda s=seq, c=cov: regression.fit_specifications(
            s, c, [regression.Spec.parse(x) for x in specs],
            models=sequentiality_plan.regression_models(config),
            formulation=config["regression"]["formulation"],
            fdr_alpha=float(config["regression"]["fdr_alpha"]),
            confidence=float(statistics.settings(config, "confidence")["confidence"]),
            story_covariates=run.get("story"),
        ))  # fmt: skip
        fitted[name] = coefficients
    gap = refits.coefficient_gap(fitted["as run"], run["coefficients"], specs)
    print(f"as-run refit: largest difference from the run's estimates {gap:.2g} nats/token per SD")
    return fitted


def _p(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value:.2g}" if value < 0.01 else f"{value:.2f}"


def table_rows(fitted: dict[str, pd.DataFrame], histories: list[str]) -> list[list[str]]:
    """One Markdown row per variant (columns of :data:`HEADER`)."""
    rows = []
    for name, coefficients in fitted.items():
        reading = refits.summarize(coefficients, histories)
        e, length = reading.embedding, reading.length
        rows.append(
            [
                name,
                " / ".join(f"{reading.n_obs[h]:,}" for h in histories),
                f"{e['estimate']:+.3f} [{e['ci_low']:+.3f}, {e['ci_high']:+.3f}], {_p(e['p_fdr'])}",
                "; ".join(f"H{h}: {_p(p)} ({c})" for h, (c, p) in reading.smallest.items()),
                f"{length['estimate']:+.3f}, {_p(length['p_fdr'])}",
                "yes" if reading.holds else f"no ({', '.join(reading.at_or_below)})",
            ]
        )
    return rows


HEADER = [
    "variant",
    "rows H1 / H3 (sentences × models)",
    "embedding similarity H1: estimate [95% CI], p_fdr",
    "smallest p_fdr of the other coherence covariates (which)",
    "length delta H1: estimate, p_fdr",
    "all p > .20 but length at H1",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the folder the run wrote")
    parser.add_argument("configs", nargs="+", help="the run's config files, in order")
    parser.add_argument("--out", type=Path, default=None, help="CSV of every variant's fits")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    costs: dict[str, float] = {}
    config = load_config(args.configs)
    run = timed(costs, "read", lambda: read_run(args.run, config))
    inputs = build_inputs(run, config, args.threads, costs)
    fitted = fit_variants(inputs, run, config, costs)
    histories = [h for h in config["regression"]["histories"] if f"gain_h{h}" in set(
        fitted["as run"]["spec"])]  # fmt: skip
    if args.out:
        pd.concat([t.assign(variant=n) for n, t in fitted.items()]).to_csv(args.out, index=False)
    print(
        f"\n{CORPUS}: {run['sentences']['story_id'].nunique()} stories, models "
        f"{', '.join(sequentiality_plan.regression_models(config))}, formulation "
        f"{config['regression']['formulation']}, gain models at h = {', '.join(histories)}; "
        "p_fdr: Benjamini-Hochberg within each fit; estimates in nats/token per SD\n"
    )
    print(markdown_table(HEADER, table_rows(fitted, histories)))
    print()
    print(
        f"{time.perf_counter() - started:.0f} s in all: "
        + ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in costs.items())
    )


if __name__ == "__main__":
    main()
