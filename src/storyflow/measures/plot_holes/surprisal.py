"""The surprisal baseline: does a contradicted sentence become less predictable?

Each story version is scored in one pass (plain format: the model's start token, then the
sentences, each tokenized on its own with a leading space after the first): the NLL of sentence
i is the mean −ln p of its tokens given every sentence before it (nats/token).

Controls (controlled maker, :mod:`.controlled`), at the changed sentence c:

* **F − O**: flawed minus original. It mixes the contradiction with the loss of the repeated
  word (the earlier mention of the original value made it predictable);
* **F − D**: flawed minus the flawed story without the establishing sentence: the same changed
  sentence, with and without something to contradict: the contradiction effect proper;
* **C − D**: consistent change minus D: what seeing the new value earlier does without any
  contradiction (a repetition effect). A model that notices the contradiction gives
  F − D > 0 and F − D > C − D.

Per story each contrast is a difference of two sentence NLLs (nats/token). The **rank** of the
changed sentence among F's sentences by NLL (1 = most surprising) is compared with the rate
1/n of a random pick; the story-level **AUROC** of F against O uses each version's highest
sentence NLL as its score.

As a detector (:func:`surprisal_answers`): a version is called flawed when its highest sentence
NLL exceeds its sentences' mean by more than ``z`` standard deviations; S_error is that
sentence, S_contr the earlier sentence sharing the most words with it.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from storyflow import tables
from storyflow.lm.backends import Scorer
from storyflow.lm.connect import LanguageModel
from storyflow.measures.plot_holes.ceeval import ceeval_full
from storyflow.measures.plot_holes.detect import answer_row
from storyflow.measures.plot_holes.versions import each_version

log = logging.getLogger(__name__)

CONTRASTS = (("f_minus_d", "F", "D"), ("c_minus_d", "C", "D"), ("f_minus_o", "F", "O"))


def sentence_nlls(scorer: Scorer, sentences: Sequence[str], n_ctx: int) -> list[tuple[int, float]]:
    """(n_tokens, mean NLL in nats/token) per sentence given the ones before it; NaN NLLs when
    the version does not fit ``n_ctx`` tokens."""
    pieces = [scorer.tokenize(s if i == 0 else " " + s) for i, s in enumerate(sentences)]
    total = sum(len(p) for p in pieces) + 1
    if total > n_ctx:
        return [(len(p), math.nan) for p in pieces]
    logprobs = scorer.logprobs([scorer.start_token], [t for p in pieces for t in p])
    out, start = [], 0
    for piece in pieces:
        chunk = logprobs[start : start + len(piece)]
        out.append((len(piece), float(-chunk.mean()) if len(piece) else math.nan))
        start += len(piece)
    return out


def score_versions(scorer: Scorer, made: pd.DataFrame, model: str, n_ctx: int) -> pd.DataFrame:
    """PLOT_HOLE_SURPRISAL rows for every version of ``made`` (PLOT_HOLE_STORIES rows)."""
    rows = []
    too_long = 0
    for item in each_version(made, f"surprisal ({model})", unit="version"):
        nlls = sentence_nlls(scorer, list(item.sentences), n_ctx)
        too_long += any(math.isnan(x) for _, x in nlls)
        for i, (n, nll) in enumerate(nlls):
            rows.append(
                tables.PLOT_HOLE_SURPRISAL.row(
                    item_id=item.item_id,
                    story_id=item.story_id,
                    version=item.version,
                    model=model,
                    sentence_idx=i,
                    n_tokens=n,
                    nll=nll,
                )
            )
    if too_long:
        log.warning("%d version(s) longer than n_ctx = %d tokens: NLL NaN", too_long, n_ctx)
    return tables.PLOT_HOLE_SURPRISAL.frame(rows)


def score_model(model: LanguageModel, made: pd.DataFrame, *, n_ctx: int | None) -> pd.DataFrame:
    """PLOT_HOLE_SURPRISAL rows of every version of ``made`` scored by ``model`` (opened on its
    backend and device: :func:`storyflow.lm.connect.open_job_model`). The window is the
    longest version (plus the start token, rounded up to 64) that fits ``n_ctx`` (None: the
    model's trained context); a longer version gets NaN NLLs (logged)."""
    vocab = model.vocab
    limit = n_ctx if n_ctx is not None else vocab.n_ctx_train
    lengths = [
        1 + sum(len(vocab.tokenize(s if i == 0 else " " + s)) for i, s in enumerate(sents))
        for sents in made["sentences"]
    ]
    fitting = [n for n in lengths if n <= limit]
    window = min(limit, max(64, -(-max(fitting, default=64) // 64) * 64))
    log.info(
        "%s: window %d tokens (%d versions, longest %d)",
        model.name,
        window,
        len(made),
        max(lengths, default=0),
    )
    return score_versions(model.scorer(n_ctx=window), made, model.name, window)


def story_contrasts(surprisal: pd.DataFrame, made: pd.DataFrame) -> pd.DataFrame:
    """Per story and model: the changed sentence's NLL in each version, the contrasts
    (nats/token), its rank among F's sentences (1 = highest NLL), n sentences of F, and the
    highest sentence NLL of O and F."""
    target = made.set_index("item_id")["target_idx"]
    rows = []
    for (story, model), group in surprisal.groupby(["story_id", "model"], sort=True):
        at, top = {}, {}
        for version, v in group.groupby("version"):
            idx = int(target[v["item_id"].iloc[0]])
            at[version] = float(v.loc[v["sentence_idx"] == idx, "nll"].iloc[0])
            top[version] = float(v["nll"].max())
        f = group[group["version"] == "F"].sort_values("sentence_idx")
        f_target = at.get("F", math.nan)
        rank = int((f["nll"] > f_target).sum() + 1) if not math.isnan(f_target) else -1
        row = {"story_id": story, "model": model, "n_sentences": len(f), "rank": rank}
        row.update({f"nll_{k}": at.get(k, math.nan) for k in ("O", "F", "C", "D")})
        row.update({name: at.get(a, math.nan) - at.get(b, math.nan) for name, a, b in CONTRASTS})
        row.update({"max_nll_O": top.get("O", math.nan), "max_nll_F": top.get("F", math.nan)})
        rows.append(row)
    return pd.DataFrame(rows)


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(score of a positive > score of a negative) + ½ P(tie) (Mann-Whitney U / n₊n₋)."""
    pos, neg = np.asarray(positive, float), np.asarray(negative, float)
    if not len(pos) or not len(neg):
        return math.nan
    u = sps.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u / (len(pos) * len(neg)))


def contrast_summary(per_story: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Per model: each contrast's mean with a t-based CI and the share of stories above 0
    (nats/token); the share of stories whose changed sentence ranks first against the random
    rate (mean 1/n); the AUROC of F vs O."""
    rows = []
    for model, g in per_story.groupby("model", sort=True):
        for name, _, _ in CONTRASTS:
            x = g[name].dropna().to_numpy()
            mean = float(x.mean()) if len(x) else math.nan
            if len(x) > 1 and x.std(ddof=1) > 0:
                low, high = sps.t.interval(confidence, len(x) - 1, loc=mean, scale=sps.sem(x))
            else:
                low = high = math.nan
            rows.append(
                {
                    "model": model,
                    "statistic": name,
                    "unit": "nats/token",
                    "n": len(x),
                    "value": mean,
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "share_positive": float((x > 0).mean()) if len(x) else math.nan,
                }
            )
        ranked = g[g["rank"] > 0]
        rows.append(
            {
                "model": model,
                "statistic": "rank_first",
                "unit": "share of stories",
                "n": len(ranked),
                "value": float((ranked["rank"] == 1).mean()),
                "ci_low": math.nan,
                "ci_high": math.nan,
                "share_positive": float((1 / ranked["n_sentences"]).mean()),
            }
        )
        ok = g.dropna(subset=["max_nll_O", "max_nll_F"])
        rows.append(
            {
                "model": model,
                "statistic": "auroc_f_vs_o",
                "unit": "AUROC",
                "n": len(ok),
                "value": auroc(ok["max_nll_F"], ok["max_nll_O"]),
                "ci_low": math.nan,
                "ci_high": math.nan,
                "share_positive": math.nan,
            }
        )
    return pd.DataFrame(rows)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def surprisal_answers(
    surprisal: pd.DataFrame, items: pd.DataFrame, model: str, z: float
) -> pd.DataFrame:
    """The surprisal detector's PLOT_HOLE_ANSWERS rows for ``items`` (story versions scored in
    ``surprisal``); see the module docstring. Versions with NaN NLLs say "no error"."""
    nll = {
        k: g.sort_values("sentence_idx")["nll"].to_numpy()
        for k, g in surprisal[surprisal["model"] == model].groupby("item_id")
    }
    rows = []
    for item in items.itertuples(index=False):
        x = nll.get(item.item_id)
        says, pe, pc = False, [], []
        if x is not None and not np.isnan(x).any() and len(x) > 2 and x.std() > 0:
            top = int(np.argmax(x))
            says = bool((x[top] - x.mean()) / x.std() > z)
            if says:
                sents = list(item.sentences)
                overlap = [len(_words(sents[i]) & _words(sents[top])) for i in range(top)]
                pe = [top + 1]
                pc = [int(np.argmax(overlap)) + 1] if overlap else []
        score = ceeval_full(item.has_error, says, item.error_lines, item.contr_lines, pe, pc)
        rows.append(
            answer_row(
                item,
                f"surprisal:{model}",
                p_error=math.nan,
                says_error=says,
                answer="",
                answer_status="ok" if says else "not_asked",
                pred_error=pe,
                pred_contr=pc,
                ceeval=score,
                n_prompt_tokens=0,
            )
        )
    return tables.PLOT_HOLE_ANSWERS.frame(rows)
