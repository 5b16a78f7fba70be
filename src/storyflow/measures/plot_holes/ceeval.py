"""CEEval-Full (Ahuja et al.), classification scores and the answers' line-number format.

For one story with ground truth (``has_error``; for a flawed story the 1-based line sets
S_error and S_contr) and a detector's prediction (``says_error``; for a "yes", predicted
line sets), the story's CEEval-Full score (0 or 1) is

* 0 when the detector is wrong about whether the story has an error;
* 1 for a correct "no error" on an original;
* for a flawed story the detector calls flawed: 1 only when its predicted S_error contains at
  least one true S_error line **and** its predicted S_contr at least one true S_contr line.

CEEval-Full of a set of stories is the mean of these scores (a share, 0-1). On a set balanced
1:1 between flawed and original stories it equals (specificity + CEEval-Pos) / 2, CEEval-Pos
being the mean score over the flawed stories.

A localization answer that cannot be parsed has no predicted lines: under the ``wrong`` policy
(the default, the only one the paper's metric admits) it scores 0 on a flawed story.

Two answer formats are read here: the strict line-number format of ``detection.format: closed``
(:func:`parse_localization`) and the paper's tagged answer with quoted lines (format ``paper``,
:func:`paper_answer`; the quotes are matched to sentences by :mod:`.quotes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from storyflow import bootstrap
from storyflow.errors import StoryflowError
from storyflow.measures.plot_holes.quotes import match_quotes

#: Localization statuses counted as unparseable (n_unparseable): nothing could be read, a line
#: number outside the story, quotes that match no sentence.
UNREAD = ("unparseable", "out_of_range", "unmatched")

#: The localization format asked for: ``error: 4, 5; contradicts: 1`` (1-based line numbers).
ANSWER_FORMAT = "error: <line numbers>; contradicts: <line numbers>"
_LINES = r"\d+(?:\s*,\s*\d+)*"
_ANSWER = re.compile(
    rf"^\s*error(?: lines?)?\s*:\s*(?P<error>{_LINES})\s*[;,]?\s*"
    rf"contradicts(?: lines?)?\s*:\s*(?P<contr>{_LINES})\s*\.?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Localization:
    """A parsed localization answer: ``status`` ``ok``, ``out_of_range`` (a line number outside
    the story), ``unmatched`` (format paper: the quotes of a set match no sentence of the story)
    or ``unparseable``; ``error`` and ``contradicts`` are 1-based line numbers (empty unless
    ``ok``)."""

    status: str
    error: tuple[int, ...] = ()
    contradicts: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def parse_localization(text: str, n_lines: int) -> Localization:
    """Read ``text`` strictly as :data:`ANSWER_FORMAT` (only its first line counts).

    Line numbers must lie in 1..``n_lines``; anything else is ``out_of_range``; text not in the
    format (prose, one list only, other words) is ``unparseable``.
    """
    first = (text or "").strip().splitlines()
    match = _ANSWER.match(first[0]) if first else None
    if match is None:
        return Localization("unparseable")
    error = tuple(sorted({int(x) for x in re.findall(r"\d+", match["error"])}))
    contr = tuple(sorted({int(x) for x in re.findall(r"\d+", match["contr"])}))
    if any(not 1 <= line <= n_lines for line in (*error, *contr)):
        return Localization("out_of_range")
    return Localization("ok", error, contr)


def parse_yes_no(text: str) -> str | None:
    """``yes`` or ``no`` from the first word of ``text``; None otherwise."""
    word = re.match(r"\W*([A-Za-z]+)", text or "")
    value = word.group(1).lower() if word else ""
    return value if value in ("yes", "no") else None


#: A verdict in a reasoned answer: an ``Answer: yes/no`` (or ``Verdict:``) line, or a decision
#: sentence. Read as yes: "There is a continuity error ..." (storyflow's maker and detector
#: prompts ask for it, and the paper's judge prompt, `flawed_fictions.txt` l. 1548, asks for a
#: sentence that begins so). Read as no: "There is no continuity error" or "... has no
#: continuity error" (storyflow's prompts) and "No continuity error found" (the paper's,
#: l. 1548, l. 1606-1609).
_VERDICT = re.compile(
    r"(?:answer|verdict)\s*[:\-]\s*\**\s*(?P<word>yes|no)\b"
    r"|(?P<no>no continuity errors?\s+(?:(?:was|were|is|are)\s+)?(?:found|detected)"
    r"|there\s+(?:is|are)\s+no\s+continuity\s+errors?"
    r"|\b(?:has|have|contains?)\s+no\s+continuity\s+errors?)"
    r"|(?P<yes>there\s+(?:is|are)\s+(?:a\s+)?continuity errors?)",
    re.I,
)


def parse_verdict(text: str) -> str | None:
    """The verdict of a reasoned answer (the maker's judge, format paper without a decision
    tag): the last of its ``Answer: yes/no`` (or ``Verdict:``) lines and decision sentences
    (storyflow's and the paper's, :data:`_VERDICT`), else the first word when it is yes or no
    (a short answer); None otherwise (not a yes)."""
    found = list(_VERDICT.finditer(text or ""))
    if not found:
        return parse_yes_no(text)
    last = found[-1]
    if last["word"]:
        return last["word"].lower()
    return "no" if last["no"] else "yes"


def tag_block(text: str, tag: str) -> str | None:
    """The text between ``<tag>`` and ``</tag>`` (the last such block; to the end of the answer
    when the closing tag is missing), or None when the answer has no ``<tag>``."""
    opened = [m.end() for m in re.finditer(rf"<{tag}>", text or "", re.I)]
    if not opened:
        return None
    start = opened[-1]
    close = re.search(rf"</{tag}>", text[start:], re.I)
    return text[start : start + close.start()] if close else text[start:]


#: A decision block that says there is no error ("There is no continuity error", storyflow's
#: detector prompt; "No continuity error found", the paper's; "The story does not contain any
#: continuity error").
_NO_ERROR = re.compile(
    r"\bno (?:continuity )?errors?\b|\bnot (?:contain|have|find|include) any\b"
    r"|\bthere (?:is|are) no\b|\bdoes not (?:contain|have)\b"
)


def paper_decision(text: str) -> str | None:
    """The verdict of an answer in the paper's format (`flawed_fictions.txt` l. 1591-1611):
    its ``<decision>`` block is a no when it says there is no continuity error and a yes
    otherwise; without a decision block, :func:`parse_verdict` of the whole answer; None when
    neither gives one."""
    decision = tag_block(text, "decision")
    if decision is None or not decision.strip():
        return parse_verdict(text)
    said = re.sub(r"\s+", " ", decision).lower()
    return "no" if _NO_ERROR.search(said) else "yes"


def paper_answer(text: str, sentences: Sequence[str]) -> tuple[str | None, Localization]:
    """An answer in the paper's format (detection.format paper): its verdict
    (:func:`paper_decision`) and, for a yes, the sentences its ``<error_lines>`` and
    ``<contradicted_lines>`` quote (:func:`.quotes.match_quotes`, 1-based). Localization
    status: ``unparseable`` when a block is missing or quotes nothing, ``unmatched`` when the
    quotes of a block match no sentence of the story, else ``ok`` (each set holds at least one
    sentence; quotes that match nothing are ignored)."""
    verdict = paper_decision(text)
    if verdict != "yes":
        return verdict, Localization("unparseable")
    blocks = [tag_block(text, t) for t in ("error_lines", "contradicted_lines")]
    matched = [match_quotes(b, sentences) for b in blocks]
    if any(b is None for b in blocks) or any(m.n_quotes == 0 for m in matched):
        return verdict, Localization("unparseable")
    if any(not m.lines for m in matched):
        return verdict, Localization("unmatched")
    return verdict, Localization("ok", matched[0].lines, matched[1].lines)


def ceeval_full(
    has_error: bool,
    says_error: bool,
    true_error: Iterable[int] = (),
    true_contr: Iterable[int] = (),
    pred_error: Iterable[int] | None = (),
    pred_contr: Iterable[int] | None = (),
) -> int:
    """One story's CEEval-Full score, 0 or 1 (module docstring). ``pred_*`` None: the
    localization answer could not be parsed (scored as wrong)."""
    if bool(has_error) != bool(says_error):
        return 0
    if not has_error:
        return 1
    if pred_error is None or pred_contr is None:
        return 0
    hit_error = bool(set(pred_error) & set(true_error))
    hit_contr = bool(set(pred_contr) & set(true_contr))
    return int(hit_error and hit_contr)


def classification_scores(
    has_error: Sequence[bool], says_error: Sequence[bool]
) -> dict[str, float]:
    """Accuracy, precision, recall and specificity of the yes/no decision (shares, 0-1; NaN
    when undefined: precision with no "yes", recall with no flawed story)."""
    truth = np.asarray(has_error, dtype=bool)
    said = np.asarray(says_error, dtype=bool)
    if truth.shape != said.shape:
        raise StoryflowError("truth and predictions differ in length")
    tp = int(np.sum(truth & said))
    tn = int(np.sum(~truth & ~said))
    fp = int(np.sum(~truth & said))
    fn = int(np.sum(truth & ~said))

    def share(a: int, b: int) -> float:
        return a / b if b else float("nan")

    return {
        "accuracy": share(tp + tn, truth.size),
        "precision": share(tp, tp + fp),
        "recall": share(tp, tp + fn),
        "specificity": share(tn, tn + fp),
    }


def score_detector(
    answers: pd.DataFrame, *, confidence: float, resamples: int, seed: int
) -> dict[str, float | int]:
    """Scores of one detector on one set of stories.

    ``answers``: one row per story shown, with ``has_error``, ``says_error`` and ``ceeval``
    (the story's CEEval-Full score) and ``answer_status`` (``ok``, ``unparseable``,
    ``out_of_range`` or ``not_asked``). Returns n, accuracy, CEEval-Full with its bootstrap CI,
    CEEval-Pos, precision, recall, specificity and the count of unparseable answers. The CI is
    the percentile bootstrap of the mean over stories (:func:`storyflow.bootstrap.interval`,
    ``resamples`` at ``confidence``, seeded by ``seed``); a constant score's is that score.
    """
    scores = classification_scores(answers["has_error"], answers["says_error"])
    ceeval = answers["ceeval"].to_numpy(dtype=float)
    low, high = bootstrap.mean_interval(
        ceeval, confidence=confidence, resamples=resamples, seed=seed
    )
    positives = answers["has_error"].to_numpy(dtype=bool)
    return {
        "n": len(answers),
        "n_flawed": int(positives.sum()),
        "accuracy": scores["accuracy"],
        "ceeval_full": float(ceeval.mean()) if len(ceeval) else float("nan"),
        "ceeval_ci_low": low,
        "ceeval_ci_high": high,
        "ceeval_pos": float(ceeval[positives].mean()) if positives.any() else float("nan"),
        "precision": scores["precision"],
        "recall": scores["recall"],
        "specificity": scores["specificity"],
        "n_unparseable": int(answers["answer_status"].isin(UNREAD).sum()),
    }
