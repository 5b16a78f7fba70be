"""Reading the model maker's answers (Ahuja et al., FlawedFictionsMaker, steps 0-3): the acts,
the propositions of act 1, their relevance scores and the counterfactual story.

Each parser takes the model's raw text and returns what the maker needs, or an empty result
(None, [], {}) when nothing can be read, which the maker records as a failed step. Line
numbers are 0-based sentence indices. The maker itself is
:mod:`storyflow.measures.plot_holes.llm_maker`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


def parse_propositions(text: str, limit: int | None) -> list[str]:
    """Lines of ``text`` that start with ``-``, ``*`` or ``1.``, stripped (at most ``limit``;
    None: all)."""
    found = [m.group(1).strip() for m in re.finditer(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", text, re.M)]
    return [p for p in found if p][:limit]


@dataclass(frozen=True)
class Proposition:
    """A fact act 1 establishes and, when the model gave one, its counterfactual."""

    fact: str
    counterfactual: str | None = None

    @property
    def negated(self) -> str:
        """What the counterfactual story makes true: the given counterfactual, else
        ``not (<fact>)``."""
        return self.counterfactual or f"not ({self.fact})"


def parse_proposition(line: str) -> Proposition:
    """One proposition line: ``Fact: <fact>; Counterfactual: <counterfactual>`` (the paper's
    format, `flawed_fictions.txt` l. 1376-1388; either label optional) or a plain fact."""
    found = re.match(
        r"^\s*\**(?:fact\s*\**\s*:\s*\**)?(?P<fact>.+?)\s*[;,]?\s*\**counterfactual\s*\**\s*:\s*\**"
        r"(?P<cf>.+?)\**\s*$",
        line,
        re.I,
    )
    if found and found["fact"].strip() and found["cf"].strip():
        return Proposition(found["fact"].strip(" *;"), found["cf"].strip(" *"))
    fact = re.sub(r"^\s*\**fact\s*\**\s*:\s*\**", "", line, flags=re.I).strip(" *")
    return Proposition(fact)


def parse_importance(text: str, n_facts: int) -> dict[int, int]:
    """The importance scores (1-4) of a reasoned relevance answer in the paper's format
    (`flawed_fictions.txt` l. 1415-1428: a block ``## F<k>`` per fact, ending with
    ``### Importance Score: <1-4>``), as {fact number (1-based): score}; facts whose block or
    score is missing are left out."""
    heads = list(re.finditer(r"(?:^|\n)[\s#*]*F\s*(\d+)\b", text or ""))
    scores: dict[int, int] = {}
    for k, head in enumerate(heads):
        number = int(head.group(1))
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        block = text[head.end() : end]
        found = re.findall(r"(?:importance\s+)?score\W{0,8}([1-4])\b", block, re.I)
        if 1 <= number <= n_facts and found and number not in scores:
            scores[number] = int(found[-1])
    return scores


def parse_rewrite(text: str) -> str:
    """The counterfactual story of a rewrite answer: the text after a ``Counterfactual Story``
    heading when there is one (the paper's format, `flawed_fictions.txt` l. 1451-1468, after
    its brainstorming), without act headings (``### Act 2:``), rule lines (``-----``) and the
    ``<m></m>`` marks of modified lines; else the whole answer. Its lines are joined by spaces
    (the story the model was shown is its sentences joined by spaces)."""
    heading = list(re.finditer(r"^[#*\s]*counterfactual story[#*:\s]*$", text or "", re.I | re.M))
    body = text[heading[-1].end() :] if heading else (text or "")
    body = re.sub(r"</?m>", "", body)
    lines = []
    for line in body.splitlines():
        if re.match(r"^\s*-{3,}\s*$", line):
            continue
        line = re.sub(r"^\s*#*\s*\**\s*act\s*[123]\b[^:\n]{0,40}:\s*\**", "", line, flags=re.I)
        if heading and re.match(r"^\s*#+\s*\w*\s*$", line):
            continue
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)


def _first_line_of(quote: str, sentences: Sequence[str], after: int) -> int | None:
    """The first sentence after index ``after`` (0-based) that begins with ``quote`` or that
    ``quote`` begins with (case and whitespace ignored)."""
    q = re.sub(r"\s+", " ", quote.strip(" *\"'`“”")).lower()
    if not q:
        return None
    for i in range(after + 1, len(sentences)):
        s = re.sub(r"\s+", " ", sentences[i]).strip().lower()
        if s and (s.startswith(q[:80]) or q.startswith(s[:80])):
            return i
    return None


def parse_act_lines(text: str, sentences: Sequence[str]) -> tuple[int, int] | None:
    """The acts' bounds from an answer quoting each act's first line (the paper's format,
    `flawed_fictions.txt` l. 1351-1362: ``### Act 2: ...`` then ``**First Line:** <line>``):
    the first sentences of acts 2 and 3 are the sentences those lines begin (0-based). None
    unless both are found, act 2 after the first sentence and act 3 after act 2."""
    act, first = None, {}
    for line in (text or "").splitlines():
        named = re.match(r"^[\s#*]*act\s*([123])\b", line, re.I)
        if named:
            act = int(named.group(1))
        quoted = re.search(r"first\s+line\W*?:\W*?\s*(.*\S)", line, re.I)
        if quoted and act in (2, 3) and act not in first:
            first[act] = quoted.group(1)
    if not {2, 3} <= set(first):
        return None
    a2 = _first_line_of(first[2], sentences, 0)
    a3 = None if a2 is None else _first_line_of(first[3], sentences, a2)
    return None if a2 is None or a3 is None else (a2, a3)


def parse_acts(text: str, n_sentences: int) -> tuple[int, int] | None:
    """The acts' bounds (first sentence of act 2, first of act 3; 0-based) from an answer naming
    the lines (1-based) where acts 2 and 3 begin: ``Act 2: 4, Act 3: 9`` or the first two
    numbers of the answer. None unless 2 <= act 2 < act 3 <= ``n_sentences`` (each act holds a
    sentence). An answer quoting first lines is read by :func:`parse_act_lines`."""
    named = {
        int(act): int(line)
        for act, line in re.findall(r"act\s*([23])\D{0,20}?(\d+)", text or "", re.I)
    }
    if {2, 3} <= set(named):
        a2, a3 = named[2], named[3]
    else:
        numbers = [int(n) for n in re.findall(r"\d+", text or "")]
        if len(numbers) < 2:
            return None
        a2, a3 = numbers[:2]
    if not 2 <= a2 < a3 <= n_sentences:
        return None
    return a2 - 1, a3 - 1
