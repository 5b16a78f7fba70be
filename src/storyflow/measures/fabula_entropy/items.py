"""A corpus's passages, versions, questions, corruptions and exclusions (rule make_fabula_items).

A story is read from its first ``lines`` sentences (the shared spaCy split,
``results/<corpus>/corpus/sentences.parquet``; ``lines`` null = the whole story). What a reader is
shown is a *passage* of numbered lines, one per index kind the corpus is configured for:

- ``etc``: passage ``plot``, the sentences in ``plot_points`` groups of consecutive sentences
  (each group one numbered line, :func:`.questions.plot_points`; the paper's five plot points).
  Versions: ``original``, ``shuffle`` (a span of ``span`` plot points reordered) and, with
  ``wrong_ending`` on a corpus that has the column (ROCStories), ``wrong_ending`` (the last
  sentence replaced by the cloze's wrong ending); ETC questions on each;
- ``ewc``: passages ``seg1``, ``seg2``, ... of ``segment_lines`` sentences each over the story
  (the paper's 10-line segments). Versions per segment: ``original`` and one ``antonym_k<k>``
  per k of ``ewc_k`` (k descriptive words of the segment swapped); EWC questions on each, the
  same slots filled with the version's word.

Controls (the readers' validity check) are asked on the original of the first passage (``plot``
when ETC is computed, else ``seg1``). A version that cannot be made is retried with the next
attempt's seed (``retries`` attempts), then listed in the excluded table, as is a story (or
segment) with too few lines or no descriptive word for a kind. ``templates``: ``paper`` asks
the paper's templates (all 10 EWC and 11 ETC templates of its appendix), ``all`` storyflow's
own two too (:mod:`.questions`). ETC questions name the characters and nouns of the original's
plot points (:func:`.questions.point_content`), the same text in every version.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from storyflow import tables
from storyflow.errors import StoryflowError
from storyflow.measures.fabula_entropy import corrupt, questions
from storyflow.progress import LoggedBar
from storyflow.seeds import item_rng
from storyflow.settings import settings_from

log = logging.getLogger(__name__)

PLOT = "plot"


@dataclass(frozen=True)
class ItemSettings:
    """What rule make_fabula_items makes from a corpus (config ``fabula_entropy``).

    ``kinds``: indices computed (``ewc``, ``etc``); ``lines``: sentences read from each story's
    start (None: all); ``questions``: EWC or ETC questions per passage (ETC: per story; EWC:
    per segment); ``controls``: control questions of each control kind per story; ``ewc_k``:
    swaps per antonym version of a segment; ``span``: plot points of the shuffled span;
    ``plot_points``: plot points an ETC passage is grouped into; ``segment_lines``: sentences
    per EWC segment; ``templates``: ``paper`` or ``all``; ``wrong_ending``: add ROCStories'
    wrong-ending version; ``retries``: attempts per corruption; ``seed``: base seed
    (``seeds.item_rng``).
    """

    kinds: tuple[str, ...]
    lines: int | None
    questions: int
    controls: int
    ewc_k: tuple[int, ...]
    span: int
    plot_points: int
    segment_lines: int
    templates: str
    wrong_ending: bool
    retries: int
    seed: int

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ItemSettings:
        """From the rule's params (a corpus's settings, taken from the validated
        ``fabula_entropy`` block; kinds, templates and ranges: the config schema's)."""
        if params["plot_points"] < params["span"]:
            raise StoryflowError(
                f"fabula_entropy: span ({params['span']}) is larger than plot_points "
                f"({params['plot_points']}); a shuffled span lies within a story's plot points"
            )
        return settings_from(cls, params, where="fabula_entropy")


class _Collector:
    """The rows of one corpus's tables as they are made (records by column name)."""

    def __init__(self) -> None:
        self.versions: list[dict[str, Any]] = []
        self.questions: list[dict[str, Any]] = []
        self.corruptions: list[dict[str, Any]] = []
        self.excluded: list[dict[str, Any]] = []

    def version(
        self, sid: str, version: str, passage: str, condition: str, k: int, lines: Sequence[str]
    ) -> None:
        self.versions.append(
            tables.FEI_VERSIONS.row(
                story_id=sid,
                version=version,
                passage=passage,
                condition=condition,
                k=k,
                n_lines=len(lines),
                text="\n".join(lines),
            )
        )

    def question(
        self,
        sid: str,
        version: str,
        passage: str,
        kind: str,
        qid: str,
        q: Mapping[str, Any],
        text: str,
        truth: float,
    ) -> None:
        """One question of a version (:data:`storyflow.tables.FEI_QUESTIONS`): ``q`` its
        template and the line and word it asks about; ``truth`` a control's known answer (1
        yes, 0 no), NaN for a question about the story."""
        template = q["template"]
        self.questions.append(
            tables.FEI_QUESTIONS.row(
                story_id=sid,
                version=version,
                passage=passage,
                kind=kind,
                question_id=qid,
                template=template,
                provenance=questions.provenance(kind, template),
                line=q.get("line", -1),
                word_line=q.get("word_line", -1),
                word=q.get("word", ""),
                text=text,
                prior_texts="\n".join(questions.prior_texts(kind, q)),
                truth=truth,
            )
        )

    def corrupted(
        self,
        sid: str,
        version: str,
        passage: str,
        kind: str,
        attempt: int,
        changes: Iterable[corrupt.Change],
    ) -> None:
        """The changed lines of a corrupted ``version``, made at ``attempt``."""
        self.corruptions += [
            tables.FEI_CORRUPTIONS.row(
                story_id=sid,
                version=version,
                passage=passage,
                kind=kind,
                attempt=attempt,
                line=c.line,
                original=c.original,
                changed=c.changed,
                detail=c.detail,
            )
            for c in changes
        ]

    def exclude(self, sid: str, kind: str, condition: str, reason: str) -> None:
        """A story (``condition`` "") or one of its versions left out, with the reason."""
        self.excluded.append(
            tables.FEI_EXCLUDED.row(story_id=sid, kind=kind, condition=condition, reason=reason)
        )


def build_items(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    nlp: Any,
    settings: ItemSettings,
    lexicon: dict[tuple[str, str], list[str]],
) -> dict[str, pd.DataFrame]:
    """The tables ``versions``, ``questions``, ``corruptions`` and ``excluded`` of a corpus."""
    out = _Collector()
    by_story = {sid: g.sort_values("sentence_idx") for sid, g in sentences.groupby("story_id")}
    for story in LoggedBar(stories.itertuples(index=False), total=len(stories), desc="stories"):
        sid = str(story.story_id)
        group = by_story.get(sid)
        if group is None or group.empty:
            for kind in settings.kinds:
                out.exclude(sid, kind, "", "the story has no sentences")
            continue
        texts = group["text"] if settings.lines is None else group["text"].head(settings.lines)
        lines = [" ".join(str(t).split()) for t in texts]
        docs = list(nlp.pipe(lines))
        if "etc" in settings.kinds:
            points = questions.plot_points(lines, settings.plot_points)
            out.version(sid, "original", PLOT, "original", 0, points)
            groups = questions.plot_point_groups(len(lines), settings.plot_points)
            content = [questions.point_content([docs[i] for i in group]) for group in groups]
            _etc(sid, lines, points, content, story, settings, out)
            shown, shown_docs = points, docs
        if "ewc" in settings.kinds:
            parts = questions.segments(len(lines), settings.segment_lines)
            shares = questions.spread(settings.questions, len(parts))
            for n, (segment, share) in enumerate(zip(parts, shares, strict=True)):
                passage = f"seg{n + 1}"
                part = [lines[i] for i in segment]
                out.version(sid, "original", passage, "original", 0, part)
                seg_docs = [docs[i] for i in segment]
                _ewc(sid, passage, part, seg_docs, share, settings, lexicon, out)
                if n == 0 and "etc" not in settings.kinds:
                    shown, shown_docs = part, seg_docs
        rng = item_rng(settings.seed, f"{sid}/controls")
        words = [t.text.lower() for doc in shown_docs for t in doc if t.is_alpha and not t.is_stop]
        passage = PLOT if "etc" in settings.kinds else "seg1"
        for i, q in enumerate(questions.control_questions(shown, words, settings.controls, rng)):
            out.question(
                sid, "original", passage, "control", f"control-{i:02d}", q, q["text"], q["truth"]
            )
    return {
        "versions": tables.FEI_VERSIONS.frame(out.versions),
        "questions": tables.FEI_QUESTIONS.frame(out.questions),
        "corruptions": tables.FEI_CORRUPTIONS.frame(out.corruptions),
        "excluded": tables.FEI_EXCLUDED.frame(out.excluded),
    }


def _etc(
    sid: str,
    lines: list[str],
    points: list[str],
    content: list[questions.PointContent],
    story: Any,
    settings: ItemSettings,
    out: _Collector,
) -> None:
    """The ETC items of one story (its plot ``points``, from ``lines``): the original, the
    span-shuffled version and the wrong-ending version where they can be made, and the ETC
    questions asked of each; a story with fewer points than the span is excluded."""
    if len(points) < settings.span:
        out.exclude(sid, "etc", "", f"{len(points)} plot point(s): ETC shuffles {settings.span}")
        return
    made = ["original"]
    if _etc_shuffle(sid, points, settings, out):
        made.append("shuffle")
    right = getattr(story, "right_ending", None)
    wrong = getattr(story, "wrong_ending", None)
    if settings.wrong_ending and isinstance(wrong, str) and wrong.strip():
        if " ".join(str(right).split()) == lines[-1]:
            new = questions.plot_points(
                [*lines[:-1], " ".join(wrong.split())], settings.plot_points
            )
            out.version(sid, "wrong_ending", PLOT, "wrong_ending", 1, new)
            ending = corrupt.Change(
                line=len(points) - 1,
                token=-1,
                original=points[-1],
                changed=new[-1],
                detail="right ending -> wrong ending",
            )
            out.corrupted(sid, "wrong_ending", PLOT, "etc", 0, [ending])
            made.append("wrong_ending")
        else:
            out.exclude(
                sid,
                "etc",
                "wrong_ending",
                "the story's last line read is not the right ending (the sentence split "
                "differs, or fabula_entropy lines cuts the story)",
            )
    rng = item_rng(settings.seed, f"{sid}/etc")
    names = questions.template_names("etc", settings.templates)
    chosen = questions.etc_questions(len(points), settings.questions, rng, names, content)
    for i, q in enumerate(chosen):
        text = questions.question_text("etc", q)
        for version in made:
            out.question(sid, version, PLOT, "etc", f"etc-{i:02d}", q, text, float("nan"))


def _etc_shuffle(sid: str, points: list[str], settings: ItemSettings, out: _Collector) -> bool:
    """The span-shuffled version of one story's plot ``points`` (the first of
    ``settings.retries`` seeded attempts that changes the story) and its corruptions; False
    when no attempt did (excluded, with the reason)."""
    for attempt in range(settings.retries):
        result = corrupt.span_shuffle(
            points, settings.span, item_rng(settings.seed, f"{sid}/shuffle/{attempt}")
        )
        if result is not None:
            new, changes = result
            out.version(sid, "shuffle", PLOT, "shuffle", 1, new)
            out.corrupted(sid, "shuffle", PLOT, "etc", attempt, changes)
            return True
    out.exclude(
        sid, "etc", "shuffle", f"no span changed the story in {settings.retries} attempt(s)"
    )
    return False


def _ewc(
    sid: str,
    passage: str,
    lines: list[str],
    docs: list[Any],
    n_questions: int,
    settings: ItemSettings,
    lexicon: dict[tuple[str, str], list[str]],
    out: _Collector,
) -> None:
    slots = questions.descriptive_slots(docs)
    if not slots:
        out.exclude(
            sid, "ewc", "", f"{passage}: no adjective or adverb modifying an entity or event"
        )
        return
    tokens = [[(t.text, t.whitespace_) for t in doc] for doc in docs]
    names = questions.template_names("ewc", settings.templates)
    chosen = questions.ewc_questions(
        slots,
        len(lines),
        n_questions,
        item_rng(settings.seed, f"{sid}/ewc/{passage}"),
        names,
    )
    made = {"original": {(s.line, s.token): s.word for s in slots}}
    for k in settings.ewc_k:
        version = f"antonym_k{k}"
        for attempt in range(settings.retries):
            rng = item_rng(settings.seed, f"{sid}/{passage}/{version}/{attempt}")
            result = corrupt.antonym_swap(tokens, slots, k, lexicon, rng)
            if result is not None:
                new, changes = result
                out.version(sid, version, passage, "antonym", k, new)
                out.corrupted(sid, version, passage, "ewc", attempt, changes)
                made[version] = {**made["original"], **{(c.line, c.token): c.word for c in changes}}
                break
        else:
            swappable = sum(1 for s in slots if lexicon.get((s.word.lower(), s.pos)))
            out.exclude(
                sid,
                "ewc",
                version,
                f"{passage}: {swappable} descriptive word(s) with an antonym, {k} needed "
                f"({settings.retries} attempt(s))",
            )
    for i, q in enumerate(chosen):
        for version, words in made.items():
            word = words[(q["word_line"], q["token"])]
            text = questions.question_text("ewc", {**q, "word": word})
            out.question(
                sid,
                version,
                passage,
                "ewc",
                f"ewc-{passage}-{i:02d}",
                {**q, "word": word},
                text,
                float("nan"),
            )


def make_items(
    stories: pd.DataFrame,
    sentences: pd.DataFrame,
    params: Mapping[str, Any],
    spacy_model: str,
    lexicon_path: str | None = None,
) -> dict[str, pd.DataFrame]:
    """:func:`build_items` with the settings from ``params`` (``plan.fabula_entropy.items``),
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
        "%d stories, %d passage versions, questions by kind %s, %d exclusions",
        len(stories),
        len(items["versions"]),
        counts,
        len(items["excluded"]),
    )
    return items
