"""The contrasts a corpus declares, checked against the labels its stories can have."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storyflow.errors import StoryflowError


def contrasts(config: Mapping[str, Any], corpus: str) -> list[Mapping[str, Any]]:
    """The contrasts declared for ``corpus`` (its own block, or its ``corpora:`` entry)."""
    user = config["corpora"]
    return list(user[corpus]["contrasts"] if corpus in user else config[corpus]["contrasts"])


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
    labels = contrast_labels(config, corpus, groups)
    for contrast in contrasts(config, corpus):
        for side in ("a", "b"):
            group = contrast[side]
            filters = {"story_type": [group]} if isinstance(group, str) else group
            for column, wanted in filters.items():
                if column not in labels:
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} filters on {column!r}, which its stories do not have; label "
                        f"columns: {', '.join(labels)}"
                    )
                allowed = labels[column]
                values = [wanted] if isinstance(wanted, str) else list(wanted)
                if allowed is not None and not set(values) & set(allowed):
                    raise StoryflowError(
                        f"config: contrast {contrast['name']!r} of corpus {corpus!r}: group "
                        f"{side} asks for {column} {', '.join(map(repr, values))}, which cannot "
                        f"occur; possible values: {', '.join(allowed)}"
                    )
