"""The contrasts a corpus declares, checked against the labels its stories can have."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from storyflow.errors import StoryflowError


def contrasts(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts declared for ``corpus`` (its own block, or its ``corpora:`` entry; a CSV
    corpus that names none has [], which :func:`check_contrasts` refuses)."""
    user = config["corpora"]
    if corpus in user:
        return list(user[corpus].get("contrasts") or [])
    return list(config[corpus]["contrasts"])


def contrast_labels(
    config: Mapping[str, Any], corpus: str, groups: Sequence[str] | None = None
) -> dict[str, list[str] | None]:
    """The label columns a contrast of ``corpus`` may filter on, with the values they can take
    (None: any value; known only from the data).

    ``groups``: the genres of the sampled books (books) or the values of a CSV corpus's group
    column; HIPPOCORPUS's story types come from the config.
    """
    if corpus == "hippocorpus":
        return {"story_type": list(config["hippocorpus"]["story_types"])}
    if corpus == "books":
        from storyflow.corpora.books import POV_LABELS, passage_types

        genres = sorted(set(groups or ()))
        pov_genres = config["books"]["pov"]["genres"]
        return {
            "story_type": passage_types(genres, pov_genres),
            "genre": genres,
            "pov": list(POV_LABELS),
            "document_id": None,
        }
    return {"story_type": None if groups is None else sorted(set(groups))}


def check_contrasts(
    config: Mapping[str, Any], corpus: str, groups: Sequence[str] | None = None
) -> None:
    """Stop when a contrast of ``corpus`` names a label column or values that cannot occur.

    Run at parse time, before any job: a typo in a contrast is reported in seconds, not after
    hours of scoring. (A group that exists but happens to be empty in a small sample is not an
    error: the statistics report it as NaN with a warning.)
    """
    from storyflow.corpora import group_word

    labels = contrast_labels(config, corpus, groups)
    word = group_word(config, corpus)
    declared = contrasts(config, corpus)
    if not declared:
        _no_contrast(config, corpus, groups)
    _check_two_groups(config, corpus, groups, declared)
    for contrast in declared:
        for side in ("a", "b"):
            for column, wanted in _filters(contrast[side]).items():
                if column not in labels:
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} filters on {column!r}, which its stories do not have; label "
                        f"columns: {', '.join(labels)}"
                    )
                allowed = labels[column]
                if allowed is not None and not set(wanted) & set(allowed):
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} asks for {_shown(column, word)} "
                        f"{', '.join(map(repr, wanted))}, which cannot "
                        f"occur; possible values: {', '.join(allowed)}"
                    )
        _check_apart(contrast, corpus, labels, word)


def _check_two_groups(
    config: Mapping[str, Any],
    corpus: str,
    groups: Sequence[str] | None,
    declared: Sequence[Mapping[str, Any]],
) -> None:
    """Stop when a CSV corpus's file holds one group only: no contrast can compare two groups
    of it (its first contrast is named; suggesting values that exclude each other would ask
    for what the file cannot give)."""
    found = sorted(set(groups or ()))
    if corpus not in config["corpora"] or len(found) != 1:
        return
    column = config["corpora"][corpus]["columns"]["group"]
    raise StoryflowError(
        f"config: contrast {declared[0]['name']!r} of corpus {corpus!r}: the corpus has one "
        f"group only ({found[0]!r}, the one value of its column {column!r}), and a contrast "
        "compares two groups of its stories. Add the stories of another group to the file (or "
        f"name the column that holds the groups in corpora.{corpus}.columns.group)"
    )


def _shown(column: str, word: str) -> str:
    """A label column as a message names it: ``story_type`` as the corpus's word for its
    groups (:func:`storyflow.corpora.group_word`: "group" for a CSV corpus), others as they are."""
    return word if column == "story_type" else column


def _filters(group: str | Mapping[str, Any]) -> dict[str, list[str]]:
    """A contrast side as label filters, each a list of values (a bare story type is
    ``{"story_type": [it]}``; :func:`storyflow.stats.group_filters` reads the data the same way)."""
    if isinstance(group, str):
        return {"story_type": [group]}
    return {str(c): [v] if isinstance(v, str) else [str(x) for x in v] for c, v in group.items()}


def _check_apart(
    contrast: Mapping[str, Any],
    corpus: str,
    labels: Mapping[str, list[str] | None],
    word: str = "story type",
) -> None:
    """Stop when the contrast's two groups filter the same label columns with values in
    common that can occur: every story with such a value would be in both groups (groups a and
    b the same stories, at worst). Groups that filter on different columns are checked on the
    data, by the statistics (:func:`storyflow.stats.contrast_members`)."""
    a, b = _filters(contrast["a"]), _filters(contrast["b"])
    if set(a) != set(b):
        return
    common = {}
    for column in a:
        possible = labels.get(column)
        shared = [v for v in a[column] if v in b[column] and (possible is None or v in possible)]
        if not shared:
            return  # exclusive on this column: no story can be in both
        common[column] = shared
    same = all(set(a[c]) == set(b[c]) for c in a)
    said = "; ".join(
        f"{_shown(column, word)} {', '.join(values)}" for column, values in common.items()
    )
    raise StoryflowError(
        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: groups a and b "
        + ("are the same stories" if same else "share stories")
        + f" (both take {said}), so a difference between them measures nothing. Give the two "
        "groups values that exclude each other (a: one group, b: another)"
    )


def _no_contrast(config: Mapping[str, Any], corpus: str, groups: Sequence[str] | None) -> NoReturn:
    """Stop, saying that a CSV corpus needs a contrast and how to write one (its groups, as
    read from its file, when known)."""
    found = sorted(set(groups or ()))
    column = config["corpora"][corpus]["columns"]["group"]
    if len(found) >= 2:
        a, b = found[0], found[1]
    elif found:
        a, b = found[0], "another_group"
    else:
        a, b = "group_a", "group_b"
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", f"{a}_vs_{b}")
    example = f"contrasts: [{{name: {name}, a: {json.dumps(a)}, b: {json.dumps(b)}}}]"
    if found:
        have = f"its column {column!r} holds the group(s) {', '.join(found[:10])}"
        have += " ..." if len(found) > 10 else ""
    else:
        have = f"its groups are the values of its column {column!r}"
    alone = (
        "; with one group there is nothing to compare: add the stories of another group to the file"
        if len(found) == 1
        else ""
    )
    raise StoryflowError(
        f"config: corpus {corpus!r} (corpora.{corpus}) names no contrast: the sequentiality "
        "analysis compares two groups of stories (Welch's t and Hedges' g), so it needs at "
        f"least one. Add under corpora.{corpus}, for example, {example} ({have}{alone})"
    )
