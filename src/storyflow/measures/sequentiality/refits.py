"""The §5.4 gain models refitted once per variant of their covariates or outcome, and what each
fit says of the paper's claim (docs/regression.md, "The §5.4 variants").

*Fiction Flows* §5.4 (``fiction_flows.txt`` l. 214) reports that no coherence covariate is
associated with the contextual gain at H1 or H3 (all p > .20) but the length delta at H1
(p = 0.0016, longer sentences gaining less). Its Table C1 and Appendix B leave four choices
open or contradict each other; each variant of :data:`VARIANTS` changes one of them (two
combine two), on the run's sentences, models and regression settings, and
:func:`summarize` reads the claim from each fit as the replication table does
(``storyflow.replication.fiction_flows``): on the BH-adjusted p of every covariate but the
sentence-difficulty controls (:data:`CONTROLS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from storyflow.measures.sequentiality.covariates import SENTENCE_MEASURES
from storyflow.measures.sequentiality.covariates.variants import (
    KEYS,
    absolute_length_delta,
    adjacent_pairs,
    pair_columns,
    with_columns,
)

#: The variants, in the table's order: name -> what differs from the run.
VARIANTS = {
    "as run": "the run's covariates and outcome (backward windows, window means at H3, signed "
    "length delta, gain of every token, mean pooling)",
    "forward pairs": "lexical overlap, embedding similarity and tense distance against the w "
    "sentences after the sentence (at H1 the pair (s_i, s_{i+1}) on row i, Table C1)",
    "adjacent pairs at H3": "at H3 the three pair measures of the adjacent pair (s_{i-1}, s_i) "
    "instead of the 3-sentence window",
    "forward adjacent pairs": "both: the pair (s_i, s_{i+1}) at H1 and at H3",
    "absolute length delta": "|length delta| at H1 and H3 (Appendix B.1, l. 399)",
    "forward pairs, absolute length delta": "both: the forward pair measures and |length "
    "delta|, Table C1's pair formulas read forward together with B.1's absolute delta",
    "gain without the first token": "outcome from every term's tokens after the first",
    "first-token (CLS) pooling": "embedding similarity from the same encoder's first-token "
    "vector instead of its mean-pooled one",
}
#: Sentence difficulty, controlled in Eq. 7 and outside the claim (l. 396-402, l. 214).
CONTROLS = SENTENCE_MEASURES
#: The claim's exception: the length delta at H1 (l. 214).
EXCEPTION = ("1", "length_delta")


@dataclass(frozen=True)
class RefitInputs:
    """What the variants are built from.

    Attributes:
        sequentiality: The run's sentence sequentiality of the regression models.
        without_first_token: The same, from NLL terms without their first token
            (``storyflow.measures.sequentiality.variants.without_first_token``).
        covariates: The run's covariate table.
        forward: Pair measures against the following sentences
            (:func:`~storyflow.measures.sequentiality.covariates.variants.pair_table`, forward,
            the run's embeddings), at the run's windows.
        first_token_pooled: Pair measures backward from the first-token (CLS) embeddings, at the
            run's windows (only their embedding similarity is used).
        encoder: The run's embedding model (labels the pooled variant).
    """

    sequentiality: pd.DataFrame
    without_first_token: pd.DataFrame
    covariates: pd.DataFrame
    forward: pd.DataFrame
    first_token_pooled: pd.DataFrame
    encoder: str


def variant_tables(
    inputs: RefitInputs, windows: Sequence[int]
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """(sentence sequentiality, covariates) of each variant of :data:`VARIANTS`, in its order;
    the adjacent-pair variants replace the pair measures of every window above 1."""
    seq, cov = inputs.sequentiality, inputs.covariates
    forward = with_columns(cov, inputs.forward)
    adjacent, forward_adjacent = cov, forward
    for w in (int(w) for w in windows if int(w) > 1):
        adjacent = adjacent_pairs(adjacent, w)
        forward_adjacent = adjacent_pairs(forward_adjacent, w)
    similarity = [c for c in pair_columns(windows) if c.startswith("embedding_sim_")]
    pooled = inputs.first_token_pooled[[*KEYS, *similarity]].assign(
        embedding_model=f"{inputs.encoder}, first-token pooling"
    )
    tables = {
        "as run": (seq, cov),
        "forward pairs": (seq, forward),
        "adjacent pairs at H3": (seq, adjacent),
        "forward adjacent pairs": (seq, forward_adjacent),
        "absolute length delta": (seq, absolute_length_delta(cov)),
        "forward pairs, absolute length delta": (seq, absolute_length_delta(forward)),
        "gain without the first token": (inputs.without_first_token, cov),
        "first-token (CLS) pooling": (seq, with_columns(cov, pooled)),
    }
    return {name: tables[name] for name in VARIANTS}


@dataclass(frozen=True)
class ClaimReading:
    """What one variant's gain fits say of §5.4's claim.

    Attributes:
        n_obs: Rows (sentences × models) of each history's fit ("1", "3").
        n_stories: Stories of the fits (the most of any history).
        embedding: Estimate (nats/token per SD), CI and BH-adjusted p of embedding similarity
            at the exception's history, H1 (``estimate``, ``ci_low``, ``ci_high``, ``p_fdr``).
        smallest: Per history, the coherence covariate with the smallest BH-adjusted p and that
            p; at H1 embedding similarity and the length delta are left out (their own columns).
        length: Estimate (nats/token per SD) and BH-adjusted p of the length delta at H1.
        at_or_below: "h1:covariate" of every coherence covariate (the exception apart) whose
            BH-adjusted p is at or below the threshold.
    """

    n_obs: dict[str, int]
    n_stories: int
    embedding: dict[str, float]
    smallest: dict[str, tuple[str, float]]
    length: dict[str, float]
    at_or_below: list[str]

    @property
    def holds(self) -> bool:
        """Whether every coherence covariate but the exception has p above the threshold."""
        return not self.at_or_below


def _term(spec: pd.DataFrame, covariate: str) -> dict[str, float]:
    hit = spec[spec["covariate"] == covariate]
    if hit.empty:
        return dict.fromkeys(("estimate", "ci_low", "ci_high", "p_fdr"), math.nan)
    row = hit.iloc[0]
    return {c: float(row[c]) for c in ("estimate", "ci_low", "ci_high", "p_fdr")}


def summarize(
    coefficients: pd.DataFrame,
    histories: Sequence[str],
    *,
    threshold: float = 0.20,
    exception: tuple[str, str] = EXCEPTION,
) -> ClaimReading:
    """Read the claim "all p > ``threshold`` but ``exception``" from one variant's gain fits.

    Args:
        coefficients: The fits' coefficient table (``storyflow.tables.COEFFICIENTS``), gain
            specifications of ``histories``.
        histories: The histories fitted ("1", "3").
        threshold: The claim's bound on the BH-adjusted p (the paper's .20).
        exception: (history, covariate) outside the claim (the length delta at H1).

    Raises:
        ValueError: a history has no gain fit in ``coefficients``.
    """
    gain = coefficients[(coefficients["kind"] == "gain") & (coefficients["role"] == "covariate")]
    n_obs, smallest, at_or_below = {}, {}, []
    for h in histories:
        spec = gain[gain["history"].astype(str) == h]
        if spec.empty:
            raise ValueError(f"no gain fit at h = {h} in the coefficients")
        n_obs[h] = int(spec["n_obs"].max())
        coherence = spec[~spec["covariate"].isin(CONTROLS)]
        if h == exception[0]:
            coherence = coherence[coherence["covariate"] != exception[1]]
        low_p = coherence.loc[coherence["p_fdr"] <= threshold, "covariate"]
        at_or_below += [f"h{h}:{c}" for c in low_p]
        own_column = "embedding_sim" if h == exception[0] else None
        others = coherence[coherence["covariate"] != own_column]
        low = others.loc[others["p_fdr"].idxmin()]
        smallest[h] = (str(low["covariate"]), float(low["p_fdr"]))
    at_exception = gain[gain["history"].astype(str) == exception[0]]
    return ClaimReading(
        n_obs=n_obs,
        n_stories=int(gain["n_stories"].max()),
        embedding=_term(at_exception, "embedding_sim"),
        smallest=smallest,
        length=_term(at_exception, exception[1]),
        at_or_below=at_or_below,
    )


def largest_gap(ours: pd.DataFrame, theirs: pd.DataFrame, columns: Sequence[str]) -> float:
    """The largest absolute difference of ``columns`` between two tables of the same sentences
    (matched on ``story_id``, ``sentence_idx``; NaN in both counts as equal): how closely a
    recomputation reproduces the run's values."""
    joined = ours[[*KEYS, *columns]].merge(
        theirs[[*KEYS, *columns]].astype({"story_id": str}),
        on=KEYS,
        suffixes=("", "_run"),
        validate="one_to_one",
    )
    gaps = [
        (joined[c] - joined[f"{c}_run"])
        .abs()
        .fillna(0.0)
        .where(joined[c].isna() == joined[f"{c}_run"].isna(), math.inf)
        for c in columns
    ]
    return float(max((g.max() for g in gaps), default=0.0))


def coefficient_gap(ours: pd.DataFrame, run: pd.DataFrame, specs: Sequence[str]) -> float:
    """The largest absolute difference between the estimates (nats/token per SD) of two
    coefficient tables over the terms of ``specs`` (``gain_h1``, ...): the as-run refit against
    the run's own table; infinite when a term of ours is not in the run's."""
    keys = ["spec", "term"]
    mine = ours[ours["spec"].isin(list(specs))]
    joined = mine[[*keys, "estimate"]].merge(
        run[[*keys, "estimate"]], on=keys, suffixes=("", "_run"), validate="one_to_one"
    )
    if len(joined) != len(mine):
        return math.inf
    return float((joined["estimate"] - joined["estimate_run"]).abs().max())
