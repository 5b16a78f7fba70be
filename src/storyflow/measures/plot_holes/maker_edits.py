"""The model maker's edit (Ahuja et al., FlawedFictionsMaker, steps 4-5): a counterfactual
story patched into the original and the filter an edit must pass.

:func:`patch` keeps act 1 of the original and takes acts 2-3 from the counterfactual, aligned
sentence by sentence; :func:`filter_reason` says why an edit is dropped (None: kept); the
judge reads the patched story with its modified lines marked (:func:`marked_story`,
:func:`tagged_story`). Line numbers are 0-based sentence indices. The maker itself is
:mod:`storyflow.measures.plot_holes.llm_maker`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

#: How a modified line is marked in the story the judge reads.
MARK = "[modified]"


@dataclass(frozen=True)
class Patch:
    """The patched story and its ground truth (0-based sentence indices).

    ``error``: patched sentences of acts 2-3 that differ from the original (S_error);
    ``contradicted``: act-1 sentences the counterfactual changed (S_contr; empty when it changed
    none); ``changed_acts``: whether act 2 and act 3 of the counterfactual differ from the
    original's (A2 ≠ A2¬φ, A3 ≠ A3¬φ); ``n_changes``: changed, inserted or deleted sentences of
    the counterfactual against the original, over the whole story."""

    sentences: list[str]
    error: list[int]
    contradicted: list[int]
    changed_acts: tuple[bool, bool] = (True, True)
    n_changes: int = 0


def _at(opcodes: Sequence[tuple[str, int, int, int, int]], i: int, n_b: int) -> int:
    """The position in b that corresponds to position ``i`` of a."""
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= i < i2:
            return j1 + (i - i1 if tag == "equal" else round((i - i1) * (j2 - j1) / (i2 - i1)))
    return n_b


def _changes(opcodes: Sequence[tuple[str, int, int, int, int]]) -> int:
    """Sentences changed, inserted or deleted by ``opcodes`` (a replacement of k by m: max)."""
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def patch(original: Sequence[str], counterfactual: Sequence[str], bounds: tuple[int, int]) -> Patch:
    """Act 1 of ``original`` + acts 2-3 of ``counterfactual`` (sentence lists); ``bounds``: the
    original's first sentence of act 2 and of act 3 (0-based, :func:`.acts.act_bounds`). See
    the module docstring for the ground truth. A sentence inserted before original sentence i
    belongs to i's act (at the end of the story: act 3)."""
    act1_len, act3 = bounds
    matcher = SequenceMatcher(a=list(original), b=list(counterfactual), autojunk=False)
    j = _at(matcher.get_opcodes(), act1_len, len(counterfactual))
    tail = list(counterfactual[j:])
    later = SequenceMatcher(a=list(original[act1_len:]), b=tail, autojunk=False).get_opcodes()
    error = [act1_len + k for tag, _, _, j1, j2 in later if tag != "equal" for k in range(j1, j2)]
    changed = {2: False, 3: False}
    for tag, i1, i2, _, _ in later:
        if tag == "equal":
            continue
        positions = range(act1_len + i1, act1_len + i2) if i2 > i1 else [act1_len + i1]
        for pos in positions:
            changed[2 if pos < act3 else 3] = True
    first = SequenceMatcher(
        a=list(original[:act1_len]), b=list(counterfactual[:j]), autojunk=False
    ).get_opcodes()
    contradicted = [k for tag, i1, i2, _, _ in first if tag != "equal" for k in range(i1, i2)]
    return Patch(
        list(original[:act1_len]) + tail,
        error,
        contradicted,
        (changed[2], changed[3]),
        _changes(first) + _changes(later),
    )


def filter_reason(edit: Patch, max_changed: int) -> str | None:
    """Why an edit is dropped before the judge (None: it passes); see the module docstring."""
    if not edit.contradicted:
        return "act 1 unchanged (the proposition was not located: no contradicted line)"
    acts = zip(("act 2", "act 3"), edit.changed_acts, strict=True)
    unchanged = [name for name, changed in acts if not changed]
    if unchanged:
        return f"{' and '.join(unchanged)} unchanged"
    if not edit.error:
        return "no changed line in acts 2-3 (only deletions)"
    if edit.n_changes > max_changed:
        return f"{edit.n_changes} changes (more than {max_changed})"
    return None


def tagged_story(sentences: Sequence[str], modified: Sequence[int]) -> str:
    """The story as plain text, each modified sentence (0-based indices) enclosed in
    ``<m></m>`` (the paper's marks, `flawed_fictions.txt` l. 1449, l. 1472)."""
    marked = set(modified)
    return " ".join(f"<m>{s}</m>" if i in marked else s for i, s in enumerate(sentences))


def marked_story(sentences: Sequence[str], modified: Sequence[int]) -> str:
    """The story as numbered lines, each modified line (0-based indices) marked with
    :data:`MARK`: ``5. [modified] She ...``."""
    marked = set(modified)
    return "\n".join(
        f"{i + 1}. {MARK + ' ' if i in marked else ''}{s}" for i, s in enumerate(sentences)
    )
