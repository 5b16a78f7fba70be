"""Fiction Flows (Piper et al.) beside ours: its effect-size tables and its regression finding.

Each published row names, in its ``setting``, how the paper aggregated (``key=value`` pairs
separated by ``;``):

- ``formulation``: ``topic`` (with topic, Eq. 4) or ``context`` (no topic, Eq. 5);
- ``measure``: ``seq`` (the whole formulation), ``nll_context`` (the contextual term alone,
  NLL_C∅) or ``nll_base`` (the unconditional term alone, NLL_∅, which does not depend on h);
- ``h``: the history sizes summarised, a range ``1-9`` or a list ``1,3,9``;
- ``over_h``: ``median`` or ``mean`` of each model's g over those h;

the row's ``group`` is storyflow's contrast (``imagined_vs_recalled``, ``fic1p_vs_autobiography``,
...), its ``model`` the paper's model name or ``mean`` (the mean over the paper's models). Ours is
the same statistic over our sequentiality models of the same kind (base models for the base-model
tables, instruct models for Tables A7-A9), or over the matching model where the paper names one
that the config has (:data:`PAPER_MODELS`), with a percentile bootstrap interval over stories,
or over books where a corpus's passages come from books (its N, l. 208;
:func:`storyflow.replication.effects.aggregated_g`).

The NLL-term tables (A2, A3, A5, A6, A8, A9 and §5.3) are read with g = group a minus group b of
the term's NLL (nats/token), so a positive g means group a's sentences are *less* predictable:
the reading of l. 210 with Table A6 (fiction's higher unconditional NLL is a positive g). The
paper's l. 220 reads the negative A8/A9 values as the terms "favouring" recalled stories, which
under that convention means imagined sentences are more predictable; the two readings of the
sign cannot both hold, and storyflow follows the one that Table A6 and l. 210 share (each such
row's note says so).

Regression rows (``quantity`` ``regression_p``) name ``kind`` (gain or raw), ``h`` and
``covariate`` (or ``covariate=others``: every covariate but the named exception) and a claim on
the p-value (BH-adjusted, as the paper reports).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from storyflow import stats, tables
from storyflow.measures.sequentiality.covariates import SENTENCE_MEASURES
from storyflow.replication.effects import AggregatedG, books_of, contrast_g
from storyflow.replication.judging import Ours, result_table

#: The paper's model names (Tables A1-A9) as (family, size, variant) of a storyflow model entry.
PAPER_MODELS = {
    "GPT2": ("GPT-2", "1.5B", "base"),
    "GPT3": ("GPT-3", "175B", "base"),
    "Llama3": ("Llama 3.1", "8B", "base"),
    "Mistral3": ("Mistral 3", "8B", "base"),
    "Qwen3:8b": ("Qwen3", "8B", "base"),
    "Qwen3:small": ("Qwen3", "0.6B", "base"),
    "smoLLM": ("SmolLM3", "3B", "base"),
    "Llama3-I": ("Llama 3.1", "8B", "instruct"),
    "Mistral3-I": ("Mistral 3", "8B", "instruct"),
    "Qwen3:8b-I": ("Qwen3", "8B", "instruct"),
    "Qwen3:sm-I": ("Qwen3", "0.6B", "instruct"),
    "smoLLM-I": ("SmolLM3", "3B", "instruct"),
}
#: Published ``model`` values that mean an average over the paper's instruction-tuned models.
INSTRUCT_MEANS = ("mean-instruct", "Inst Mean")
#: The original study's units per group of each contrast (group a, group b), for the
#: small-telescopes reading: HIPPOCORPUS stories, half of each story type (the paper scores a
#: random 50% of the corpus, l. 110, of its 2,756 imagined, 1,319 retold and 2,779 recalled
#: stories: Sap et al.'s counts), and CONLIT books (Table 2's N, l. 203-206).
ORIGINAL_UNITS = {
    "imagined_vs_recalled": (1378.0, 1389.5),
    "retold_vs_recalled": (659.5, 1389.5),
    "fic1p_vs_autobiography": (221.0, 223.0),
    "fic3p_vs_biography": (196.0, 181.0),
    "fic3p_vs_nonnarrative": (196.0, 115.0),
    "biography_vs_autobiography": (181.0, 223.0),
}


def parse_setting(text: str) -> dict[str, str]:
    """``"formulation=topic; h=1-9"`` as ``{"formulation": "topic", "h": "1-9"}``."""
    pairs = (part.split("=", 1) for part in str(text).split(";") if "=" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def histories(spec: str) -> list[str]:
    """History labels of ``1-9`` (a range), ``1,3,9`` (a list) or ``0``."""
    if "-" in spec:
        first, last = (int(x) for x in spec.split("-"))
        return [str(h) for h in range(first, last + 1)]
    return [h.strip() for h in spec.split(",")]


def _models_for(
    paper_model: str, ours: Sequence[str], labels: Mapping[str, Mapping[str, str]]
) -> tuple[list[str], str]:
    """Our models compared with ``paper_model``, and a note when they are not the paper's."""
    if paper_model in PAPER_MODELS:
        family, size, variant = PAPER_MODELS[paper_model]
        same = [
            m
            for m in ours
            if (labels[m]["family"], labels[m]["size"], labels[m]["variant"])
            == (family, size, variant)
        ]
        return same, "" if same else f"no {family} {size} {variant} model in this run"
    variant = "instruct" if paper_model in INSTRUCT_MEANS else "base"
    same = [m for m in ours if labels[m]["variant"] == variant]
    if not same:
        return [], f"no {variant} sequentiality model in this run"
    return same, ""


def _scores(files: Mapping[str, Sequence[str]], corpus: str, min_sentences: int) -> pd.DataFrame:
    story = stats.read_story_tables(files[corpus])
    return story[story["n_sentences"] >= min_sentences]


#: The note of the rows that decide a sign of an NLL term (see the module docstring).
NLL_SIGN = (
    "g of the NLL itself: positive = group a's sentences less predictable (l. 210 with Table "
    "A6; l. 220 reads the sign the other way)"
)


def _wanted_histories(setting: Mapping[str, Any], part: pd.DataFrame) -> list[str]:
    """The history labels a setting summarises; for ``nll_base`` (the h = 0 term, the same on
    every history's row) the first scored one."""
    wanted = histories(setting["h"])
    if setting["measure"] == "nll_base":
        return [min(part["history"].unique(), key=lambda h: (h == "full", h))]
    return wanted


def _group_sizes(result: AggregatedG, *, books: bool) -> str:
    """The groups' sizes in words: stories, or passages and their books."""
    if books:
        return (
            f"{result.n_a} vs {result.n_b} passages of {result.units_a} vs {result.units_b} books"
        )
    return f"{result.n_a} vs {result.n_b} stories"


def unit_tokens(
    cost: pd.DataFrame | None, models: Sequence[str], result: AggregatedG
) -> tuple[tuple[str, float], ...]:
    """NLL tokens one unit (a story, or a book with its passages) costs with each of
    ``models``: the model's planned tokens per story (all formulations) times stories per unit
    (empty without the run's NLL cost tables). Read from the token plan, not the time
    estimate, so a changed rate changes only the hours."""
    units = result.units_a + result.units_b
    if cost is None or not set(models) <= set(cost["model"]) or not units:
        return ()
    rows = cost[cost["model"].isin(list(models))].groupby("model")
    per_story = rows["planned_tokens"].sum() / rows["story_id"].nunique()
    stories_per_unit = (result.n_a + result.n_b) / units
    return tuple((str(m), float(t) * stories_per_unit) for m, t in per_story.items())


def _effect(
    row: Mapping[str, Any],
    scores: pd.DataFrame,
    members: Mapping[str, tuple[set[str], set[str]]],
    settings: Mapping[str, Any],
    books: Mapping[str, str],
    cost: pd.DataFrame | None = None,
    available: Mapping[str, float] | None = None,
) -> Ours:
    """Our aggregated Hedges' g (:func:`storyflow.replication.effects.contrast_g`) of one
    published effect ``row`` (books resampled when ``books`` maps story → book); missing, with
    why, when the run lacks it."""
    setting = parse_setting(row["setting"])
    contrast = str(row["group"])
    if contrast not in members:
        return Ours.missing(f"contrast {contrast} is not in this run's config")
    models, why = _models_for(
        str(row["model"]), sorted(scores["model"].unique()), settings["models"]
    )
    if not models:
        return Ours.missing(why)
    formulation = setting["formulation"]
    part = scores[scores["formulation"] == formulation]
    if part.empty:
        return Ours.missing(f"formulation {formulation} was not scored")
    wanted = _wanted_histories(setting, part)
    missing = sorted(set(wanted) - set(part["history"]))
    if missing:
        return Ours.missing(f"history sizes {', '.join(missing)} were not scored (nll.max_history)")
    a, b = members[contrast]
    result = contrast_g(
        part, a, b, measure=setting["measure"], models=models, histories=wanted,
        over_histories=setting.get("over_h", "median"), confidence=settings["confidence"],
        resamples=settings["resamples"], seed=settings["seed"], clusters=books,
    )  # fmt: skip
    held = (available or {}).get(contrast, math.nan)
    return _ours_of(row, result, models, settings, books=bool(books), cost=cost, available=held)


def _ours_of(
    row: Mapping[str, Any],
    result: AggregatedG,
    models: Sequence[str],
    settings: Mapping[str, Any],
    *,
    books: bool,
    cost: pd.DataFrame | None,
    available: float = math.nan,
) -> Ours:
    """Our counterpart of an effect ``row`` from its aggregated g: the groups' sizes, a group
    under ``min_group_size`` marked failed, the notes, and what deciding it would cost."""
    measure = parse_setting(row["setting"])["measure"]
    units = "books" if books else "stories"
    small = min(result.units_a, result.units_b) < settings["min_group_size"]
    notes = [
        "" if len(models) > 1 or row["model"] != "mean" else "one model: the mean is its value",
        NLL_SIGN if measure != "seq" else "",
        "intervals resample books, not passages" if books else "",
    ]
    return Ours(
        result.value,
        result.ci,
        "",
        _group_sizes(result, books=books),
        ", ".join(models),
        f"failed: fewer than {settings['min_group_size']} {units} in a group"
        if small
        else "not checked",
        "; ".join(note for note in notes if note),
        True,
        units=float(min(result.units_a, result.units_b)),
        unit=units,
        unit_tokens=unit_tokens(cost, models, result),
        original_units=ORIGINAL_UNITS.get(str(row["group"]), (math.nan, math.nan)),
        available=math.nan if books else available,
    )


def available_units(
    counts: pd.DataFrame | None, contrasts: Sequence[Mapping[str, object]]
) -> dict[str, float]:
    """The stories a corpus holds in the smaller side of each contrast, by its name: the usable
    stories (``n_in_corpus`` less ``n_excluded``) of the story types on each side, from its
    :data:`storyflow.tables.SAMPLE_COUNTS`; only contrasts whose sides filter on the story type
    alone (another filter's population is not counted: left out)."""
    if counts is None:
        return {}
    kept = counts["n_in_corpus"] - counts["n_excluded"]
    usable = dict(zip(counts["story_type"].astype(str), kept, strict=True))
    found: dict[str, float] = {}
    for contrast in contrasts:
        sides = [stats.group_filters(contrast[s]) for s in ("a", "b")]  # type: ignore[arg-type]
        if all(set(f) == {"story_type"} for f in sides):
            found[str(contrast["name"])] = float(
                min(sum(usable.get(str(t), 0) for t in f["story_type"]) for f in sides)
            )
    return found


def _regression(row: Mapping[str, Any], coefficients: pd.DataFrame | None) -> Ours:
    if coefficients is None:
        return Ours.missing("the regressions are off (regression.enabled)")
    setting = parse_setting(row["setting"])
    spec = coefficients[
        (coefficients["kind"] == setting["kind"]) & (coefficients["history"] == setting["h"])
    ]
    spec = spec[spec["role"] == "covariate"] if "role" in spec else spec
    if spec.empty:
        return Ours.missing(f"no {setting['kind']} regression at h = {setting['h']}")
    n = f"{int(spec['n_obs'].max())} sentence pairs, {int(spec['n_stories'].max())} stories"
    covariate = setting["covariate"]
    if covariate == "others":
        # the paper's claim is about the coherence measures, sentence difficulty controlled
        # (Eq. 7/8: length, rare-word rate, clause count, tree depth are its controls)
        left_out = {*setting.get("except", "").split(","), *SENTENCE_MEASURES}
        others = spec[~spec["covariate"].isin(left_out)]
        low = others.loc[others["p_fdr"].idxmin()]
        found = f"p_fdr = {low['p_fdr']:.3g} ({low['covariate']})"
        return Ours(
            float(low["p_fdr"]), (math.nan, math.nan), found, n, "", "not checked",
            "smallest BH-adjusted p of the other coherence covariates (sentence difficulty: "
            f"{', '.join(SENTENCE_MEASURES)}, controlled as in the paper)",
            False,
        )  # fmt: skip
    hit = spec[spec["covariate"] == covariate]
    if hit.empty:
        return Ours.missing(
            f"covariate {covariate} is not in the {setting['kind']} h{setting['h']} fit"
        )
    found = hit.iloc[0]
    return Ours(
        float(found["p_fdr"]),
        (math.nan, math.nan),
        "+" if found["estimate"] > 0 else "-",
        n,
        "",
        "not checked",
        f"estimate {found['estimate']:.3g} [{found['ci_low']:.3g}, {found['ci_high']:.3g}] "
        "nats/token per SD",
        False,
    )


def ours(
    published: pd.DataFrame,
    files: Mapping[str, Sequence[str]],
    settings: Mapping[str, Any],
) -> dict[str, Ours]:
    """Our figure for every published Fiction Flows row, by id (see the module docstring). No
    validity check covers the sequentiality models; a contrast with a group smaller than
    ``min_group_size`` is marked failed, as the effect-size tables mark it untested."""
    scores: dict[str, pd.DataFrame] = {}
    members: dict[str, dict[str, tuple[set[str], set[str]]]] = {}
    books: dict[str, dict[str, str]] = {}
    costs: dict[str, pd.DataFrame | None] = {}
    available: dict[str, dict[str, float]] = {}
    for corpus, contrasts in settings["contrasts"].items():
        scores[corpus] = _scores(files, corpus, settings["min_sentences"])
        costs[corpus] = (
            tables.read_all(tables.NLL_COST, files[f"{corpus}_nll_cost"])
            if f"{corpus}_nll_cost" in files
            else None
        )
        labels = pd.read_parquet(files[f"{corpus}_labels"][0])
        members[corpus] = stats.contrast_members(labels, contrasts)
        books[corpus] = books_of(labels)
        counts = result_table(tables.SAMPLE_COUNTS, files, f"{corpus}_counts")
        available[corpus] = available_units(counts, contrasts)
    coefficients = result_table(tables.COEFFICIENTS, files, "regression")
    found: dict[str, Ours] = {}
    for row in published.to_dict("records"):
        corpus = str(row["corpus"])
        if row["quantity"] == "regression_p":
            found[row["id"]] = _regression(row, coefficients)
        elif row["quantity"] != "hedges_g":
            found[row["id"]] = Ours.missing(f"storyflow does not compute {row['quantity']}")
        elif corpus not in scores:
            found[row["id"]] = Ours.missing(f"{corpus} is not scored in this run")
        else:
            found[row["id"]] = _effect(
                row,
                scores[corpus],
                members[corpus],
                settings,
                books[corpus],
                costs[corpus],
                available[corpus],
            )
    return found
