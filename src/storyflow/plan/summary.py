"""The plan in words, logged once when the workflow is planned: which measures run on which
corpora with which models, how many stories each corpus holds where the config says so, each
model's rate, and where the run writes what it will cost (tokens and minutes) before any model
is asked. Read from the config alone: no corpus is tokenized here (the NLL plans and the
language-model cost estimate count tokens, as the run's first jobs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import storyflow.plan.comparison as comparison
import storyflow.plan.corpus as corpus_plan
import storyflow.plan.cost as cost
import storyflow.plan.replication as replication
import storyflow.plan.sequentiality as sequentiality
import storyflow.plan.tension as tension
from storyflow.corpora.selection import SAMPLED
from storyflow.lm.rates import Rate, model_rates, unknown_names
from storyflow.plan.layout import LM_COST, fill
from storyflow.plan.registry import MEASURES

#: Stories of a whole sampled corpus (``stories.<corpus>`` null): HANNA's 96 prompts, each with
#: its human story and six LLMs', and ROCStories' 1,871 cloze stories.
WHOLE_SAMPLED = {"hanna": 96 * 7, "rocstories": 1871}


def stories(config: Mapping[str, Any], corpus: str) -> str:
    """How many stories ``corpus`` holds, as far as the config says (no file is read): the
    HIPPOCORPUS sample, the book passages drawn, the HANNA and ROCStories samples; "every row"
    for a corpus of the user's (a CSV is not read here: its stories are counted by the run's
    first job, results/<corpus>/corpus/tables/sample_counts.csv)."""
    if corpus == "hippocorpus":
        sample = config["hippocorpus"]["sample"]
        types = len(config["hippocorpus"]["story_types"])
        if sample.get("per_type") is not None:
            return f"{sample['per_type'] * types} stories"
        return f"{sample.get('fraction')} of each story type"
    if corpus == "books":
        books = config["books"]
        per_book = books["passages"]["per_book"]
        per_genre = books["sample"]["per_genre"]
        if per_genre is None:
            return f"{per_book} passages of every book of the manifest"
        return f"{sum(per_genre.values()) * per_book} passages"
    if corpus in SAMPLED:
        block = config["stories"][corpus]
        drawn = block.get("prompts") if corpus == "hanna" else block.get("stories")
        if drawn is None:
            return f"{WHOLE_SAMPLED[corpus]} stories"
        return f"{drawn * 7 if corpus == 'hanna' else drawn} stories"
    return "every row of its file"


def _models(config: Mapping[str, Any], measure: Any) -> list[str]:
    """The models ``measure`` runs (its roles' models; tension's judges with the embedding
    judge)."""
    if measure.name == sequentiality.OUT.name:
        return sequentiality.models(config)
    if measure.name == tension.OUT.name:
        chosen = tension.models_and_corpora(config)
        names = [*chosen["forecasters"], *chosen["judges"], *chosen["pmi_models"]]
        return list(dict.fromkeys(names))
    names = [name for role in measure.roles for name in role.models(config)]
    return list(dict.fromkeys(names))


def topic_notes(config: Mapping[str, Any]) -> list[str]:
    """One line per corpus of the user's in the sequentiality analysis that has no topic column
    while ``nll.formulations`` asks for the topic formulation: only the context formulation runs
    on it (its tables' ``formulation`` column holds context alone)."""
    if "topic" not in config["nll"]["formulations"]:
        return []
    return [
        f"corpus {corpus} has no topic column (corpora.{corpus}.columns.topic), so the topic "
        "formulation will not run on it, only the context one; add the column to run it"
        for corpus in sequentiality.corpora(config)
        if (columns := corpus_plan.user_columns(config, corpus)) is not None
        and not columns.get("topic")
    ]


def _rate(rate: Rate | None) -> str:
    return f"{rate.tokens_per_second:,.4g} ({rate.source})" if rate else "? (no rate)"


def _rate_lines(config: Mapping[str, Any]) -> list[str]:
    """Each model's rates and where each came from (:func:`storyflow.lm.rates.model_rates`);
    the names a rate setting gives that no model bears."""
    out = ["  model rates (tokens/s; ? = no rate: tokens, no minutes):"]
    for name, rate in model_rates(config).items():
        out.append(
            f"    {name}: NLL {_rate(rate.nll)}; prompt {_rate(rate.prompt)}; "
            f"generate {_rate(rate.generate)}"
        )
    unknown = unknown_names(config)
    if unknown:
        out.append(
            "    rates given for no model (cost.rates, nll.tokens_per_second): "
            + ", ".join(unknown)
        )
    return out


def lines(config: Mapping[str, Any], read: Sequence[str]) -> list[str]:
    """The plan in a few lines (:mod:`storyflow.plan.summary`): the corpora ``read`` (every
    corpus whose file the run reads, :func:`storyflow.plan.read_corpora`) with their story
    counts, each measure's corpora and models (or "off"), each model's rates, the comparison
    and the papers replicated, and where the cost tables are written."""
    out = ["the plan (what runs on which corpora with which models):"]
    out.append("  corpora read: " + "; ".join(f"{c} ({stories(config, c)})" for c in read))
    for measure in MEASURES:
        if not measure.enabled(config):
            out.append(f"  {measure.name}: off")
            continue
        models = _models(config, measure)
        line = f"  {measure.name}: {', '.join(measure.corpora(config)) or 'no corpus'}"
        out.append(line + (f" x {', '.join(models)}" if models else " (no language model)"))
    compared = comparison.corpora(config)
    papers = replication.papers(config)
    out.append(f"  comparison: {', '.join(compared) if compared else 'none'}")
    out.append(f"  replication: {', '.join(papers) if papers else 'none'}")
    out.extend(_rate_lines(config))
    estimates = [fill(sequentiality.NLL_ESTIMATE, corpus=c) for c in sequentiality.corpora(config)]
    costs = f"; other language-model stages: {LM_COST}" if cost.settings(config) else ""
    out.append(
        "  cost (tokens and minutes, written before any model runs): NLL: "
        + ", ".join(estimates)
        + costs
    )
    return out
