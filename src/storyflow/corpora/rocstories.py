"""ROCStories (cloze test, spring 2016): five-sentence everyday stories."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from storyflow.corpora.base import limit_groups, read_csv_columns
from storyflow.errors import InputDataError


def read_rocstories(path: str | Path, limit: int | None = None) -> pd.DataFrame:
    """ROCStories cloze test: the four context sentences plus the right ending (1 or 2).

    Returns story_id (``InputStoryid``), group (``"rocstories"``), text (the context and the
    right ending), and the parts: ``context`` (the four sentences), ``right_ending`` and
    ``wrong_ending`` (the cloze test's other candidate).
    """
    columns = [f"InputSentence{k}" for k in range(1, 5)]
    endings = ["RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2"]
    table = read_csv_columns(
        path,
        ["InputStoryid", *columns, *endings, "AnswerRightEnding"],
        "ROCStories needs a registration form (https://cs.rochester.edu/nlp/rocstories/): "
        "place cloze_test_spring2016.csv there or set narrative_sense.rocstories.",
    )
    answer = table["AnswerRightEnding"].str.strip()
    bad = ~answer.isin(["1", "2"])
    if bad.any():
        raise InputDataError(
            path, "AnswerRightEnding must be 1 or 2", row=int(np.flatnonzero(bad)[0]) + 2
        )
    right = pd.Series(np.where(answer == "1", table[endings[0]], table[endings[1]]), table.index)
    wrong = pd.Series(np.where(answer == "1", table[endings[1]], table[endings[0]]), table.index)
    context = table[columns].agg(" ".join, axis=1)
    stories = pd.DataFrame(
        {
            "story_id": table["InputStoryid"],
            "group": "rocstories",
            "text": context + " " + right,
            "context": context,
            "right_ending": right,
            "wrong_ending": wrong,
        }
    )
    return limit_groups(stories, limit)
