"""A corpus's story versions, questions, corruptions and exclusions (rule make_fabula_items).

Each story's *original version* is its first ``lines`` sentences (the shared spaCy split,
``results/<corpus>/sentences.parquet``). For each index kind the corpus is configured for:

- ``etc``: a ``shuffle`` version (a span of ``span`` lines reordered) and, with
  ``wrong_ending`` on a corpus that has the column (ROCStories), a ``wrong_ending`` version (the
  last line replaced by the cloze's wrong ending); ETC questions on the original and on these;
- ``ewc``: one ``antonym`` version per k of ``ewc_k`` (k descriptive words swapped); EWC
  questions on the original and on these, the same slots filled with the version's word.

Controls (comprehension gate) are asked on the original only. A version that cannot be made is
retried with the next attempt's seed (``retries`` attempts), then listed in the excluded table,
as is a story with too few lines or no descriptive word for a kind.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tqdm import tqdm

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import corrupt, questions
from storyflow.seeds import item_rng

log = logging.getLogger(__name__)

KINDS = ("ewc", "etc")


@dataclass(frozen=True)
class ItemSettings:
    """What rule make_fabula_items makes from a corpus (config ``fabula_entropy``).

    ``kinds``: indices computed (``ewc``, ``etc``); ``lines``: sentences per version (the
    story's first ones); ``questions``: EWC or ETC questions per story and kind; ``controls``:
    control questions of each control kind per story; ``ewc_k``: swaps per antonym version;
    ``span``: lines of the shuffled span; ``wrong_ending``: add ROCStories' wrong-ending
    version; ``retries``: attempts per corruption; ``seed``: base seed (``seeds.item_rng``).
    """

    kinds: tuple[str, ...]
    lines: int
    questions: int
    controls: int
    ewc_k: tuple[int, ...]
    span: int
    wrong_ending: bool
    retries: int
    seed: int

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ItemSettings:
        kinds = tuple(params["kinds"])
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise StoryflowError(f"fabula_entropy: unknown index kinds {unknown}; use {KINDS}")
        return cls(
            kinds=kinds,
            lines=int(params["lines"]),
            questions=int(params["questions"]),
            controls=int(params["controls"]),
            ewc_k=tuple(int(k) for k in params["ewc_k"]),
            span=int(params["span"]),
            wrong_ending=bool(params["wrong_ending"]),
            retries=int(params["retries"]),
            seed=int(params["seed"]),
        )


def _version(story_id: str, version: str, condition: str, k: int, lines: list[str]) -> tuple:
    return (story_id, version, condition, k, len(lines), "\n".join(lines))


def build_items(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    nlp: Any,
    settings: ItemSettings,
    lexicon: dict[tuple[str, str], list[str]],
) -> dict[str, pd.DataFrame]:
    """The tables ``versions``, ``questions``, ``corruptions`` and ``excluded`` of a corpus."""
    versions, rows_q, rows_c, excluded = [], [], [], []
    by_story = {sid: g.sort_values("sentence_idx") for sid, g in sentences.groupby("story_id")}
    for story in tqdm(stories.itertuples(index=False), total=len(stories), desc="stories"):
        sid = str(story.story_id)
        group = by_story.get(sid)
        if group is None or group.empty:
            for kind in settings.kinds:
                excluded.append((sid, kind, "", "the story has no sentences"))
            continue
        lines = [" ".join(str(t).split()) for t in group["text"].head(settings.lines)]
        docs = list(nlp.pipe(lines))
        tokens = [[(t.text, t.whitespace_) for t in doc] for doc in docs]
        versions.append(_version(sid, "original", "original", 0, lines))
        rng = item_rng(settings.seed, f"{sid}/controls")
        words = [t.text.lower() for doc in docs for t in doc if t.is_alpha and not t.is_stop]
        for i, q in enumerate(questions.control_questions(lines, words, settings.controls, rng)):
            rows_q.append(
                (
                    sid,
                    "original",
                    "control",
                    f"control-{i:02d}",
                    q["template"],
                    -1,
                    "",
                    q["text"],
                    float(q["truth"]),
                )
            )
        if "etc" in settings.kinds:
            _etc(sid, lines, story, settings, versions, rows_q, rows_c, excluded)
        if "ewc" in settings.kinds:
            _ewc(sid, lines, docs, tokens, settings, lexicon, versions, rows_q, rows_c, excluded)
    return {
        "versions": tables.FEI_VERSIONS.frame(versions),
        "questions": tables.FEI_QUESTIONS.frame(rows_q),
        "corruptions": tables.FEI_CORRUPTIONS.frame(rows_c),
        "excluded": tables.FEI_EXCLUDED.frame(excluded),
    }


def _etc(sid, lines, story, settings, versions, rows_q, rows_c, excluded) -> None:
    if len(lines) < settings.span:
        excluded.append((sid, "etc", "", f"{len(lines)} line(s): ETC needs {settings.span}"))
        return
    made = ["original"]
    for attempt in range(settings.retries):
        result = corrupt.span_shuffle(
            lines, settings.span, item_rng(settings.seed, f"{sid}/shuffle/{attempt}")
        )
        if result is not None:
            new, changes = result
            versions.append(_version(sid, "shuffle", "shuffle", 1, new))
            rows_c += [
                (sid, "shuffle", "etc", attempt, c.line, c.original, c.changed, c.detail)
                for c in changes
            ]
            made.append("shuffle")
            break
    else:
        excluded.append(
            (sid, "etc", "shuffle", f"no span changed the story in {settings.retries} attempt(s)")
        )
    right = getattr(story, "right_ending", None)
    wrong = getattr(story, "wrong_ending", None)
    if settings.wrong_ending and isinstance(wrong, str) and wrong.strip():
        if " ".join(str(right).split()) == lines[-1]:
            new = [*lines[:-1], " ".join(wrong.split())]
            versions.append(_version(sid, "wrong_ending", "wrong_ending", 1, new))
            rows_c.append(
                (
                    sid,
                    "wrong_ending",
                    "etc",
                    0,
                    len(lines) - 1,
                    lines[-1],
                    new[-1],
                    "right ending -> wrong ending",
                )
            )
            made.append("wrong_ending")
        else:
            excluded.append(
                (
                    sid,
                    "etc",
                    "wrong_ending",
                    "the version's last line is not the right ending (the sentence split differs)",
                )
            )
    rng = item_rng(settings.seed, f"{sid}/etc")
    for i, q in enumerate(questions.etc_questions(len(lines), settings.questions, rng)):
        for version in made:
            rows_q.append(
                (
                    sid,
                    version,
                    "etc",
                    f"etc-{i:02d}",
                    q["template"],
                    q["line"],
                    "",
                    questions.etc_text(q["template"], q["line"]),
                    float("nan"),
                )
            )


def _ewc(sid, lines, docs, tokens, settings, lexicon, versions, rows_q, rows_c, excluded) -> None:
    slots = questions.descriptive_slots(docs)
    if not slots:
        excluded.append((sid, "ewc", "", "no adjective or adverb modifying an entity or event"))
        return
    chosen = questions.ewc_questions(
        slots, settings.questions, item_rng(settings.seed, f"{sid}/ewc")
    )
    made = {"original": {(s.line, s.token): s.word for s in slots}}
    for k in settings.ewc_k:
        version = f"antonym_k{k}"
        for attempt in range(settings.retries):
            rng = item_rng(settings.seed, f"{sid}/{version}/{attempt}")
            result = corrupt.antonym_swap(tokens, slots, k, lexicon, rng)
            if result is not None:
                new, changes = result
                versions.append(_version(sid, version, "antonym", k, new))
                rows_c += [
                    (sid, version, "ewc", attempt, c.line, c.original, c.changed, c.detail)
                    for c in changes
                ]
                made[version] = {**made["original"], **{(c.line, c.token): c.word for c in changes}}
                break
        else:
            swappable = sum(1 for s in slots if lexicon.get((s.word.lower(), s.pos)))
            excluded.append(
                (
                    sid,
                    "ewc",
                    version,
                    f"{swappable} descriptive word(s) with an "
                    f"antonym, {k} needed ({settings.retries} attempt(s))",
                )
            )
    for i, q in enumerate(chosen):
        for version, words in made.items():
            word = words[(q["line"], q["token"])]
            rows_q.append(
                (
                    sid,
                    version,
                    "ewc",
                    f"ewc-{i:02d}",
                    q["template"],
                    q["line"],
                    word,
                    questions.ewc_text(q["template"], word, q["line"]),
                    float("nan"),
                )
            )


def make_items(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    params: Mapping[str, Any],
    spacy_model: str,
    lexicon_path: str | None = None,
) -> dict[str, pd.DataFrame]:
    """:func:`build_items` with the settings from ``params`` (``plan.fabula_entropy_items``),
    the spaCy pipeline ``spacy_model`` (tagger and parser) and the antonym lexicon."""
    from storyflow.measures.fabula_entropy.lexicon import load_antonyms
    from storyflow.sentences import load_spacy

    settings = ItemSettings.from_params(params)
    nlp = load_spacy(spacy_model, exclude=("ner",))
    items = build_items(stories, sentences, nlp, settings, load_antonyms(lexicon_path))
    for row in items["excluded"].itertuples(index=False):
        log.info(
            "excluded: story %s, %s %s: %s",
            row.story_id,
            row.kind,
            row.condition or "(all versions)",
            row.reason,
        )
    counts = items["questions"].groupby("kind").size().to_dict()
    log.info(
        "%d stories, %d versions, questions by kind %s, %d exclusions",
        len(stories),
        len(items["versions"]),
        counts,
        len(items["excluded"]),
    )
    return items
