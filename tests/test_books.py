"""Book corpora: manifest, book sample, prose passages, point of view, download (issue 4)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow.corpora import books
from storyflow.errors import InputDataError, StoryflowError

MANIFEST = "category\tgutenberg_id\ttitle\tpov_hint\n"


def write_manifest(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "MANIFEST.tsv"
    path.write_text(MANIFEST + "".join(f"{r}\n" for r in rows))
    return path


def read(path: Path, **kwargs: object) -> pd.DataFrame:
    kwargs.setdefault("path_template", "{genre}/{id}.txt")
    return books.read_manifest(path, id_column="gutenberg_id", genre_column="category", **kwargs)


def test_manifest_builds_paths_and_keeps_extra_columns(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, ["fiction\t11\tAlice\tthird", "biography\t7\tLife\tthird"])
    table = read(path)
    assert list(table.columns[:3]) == ["document_id", "genre", "path"]
    assert list(table["document_id"]) == ["11", "7"]
    assert table.at[0, "path"] == str(tmp_path / "fiction" / "11.txt")
    assert list(table["title"]) == ["Alice", "Life"]


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (["fiction\t11\tA\tx", "fiction\t11\tB\tx"], r"row 3: book id '11' appears more than once"),
        (["fiction\t11\tA\tx", "\t12\tB\tx"], r"row 3: empty 'category'"),
    ],
)
def test_manifest_rows_with_problems_are_named(
    tmp_path: Path, rows: list[str], problem: str
) -> None:
    with pytest.raises(InputDataError, match=problem):
        read(write_manifest(tmp_path, rows))


def test_manifest_missing_file_or_column_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="file not found"):
        read(tmp_path / "absent.tsv")
    path = tmp_path / "m.csv"
    path.write_text("id,genre\n1,fiction\n")
    missing = r"missing required column\(s\) gutenberg_id, category; the header has"
    with pytest.raises(InputDataError, match=missing):
        read(path)


def test_book_sample_is_seeded_and_per_genre(tmp_path: Path) -> None:
    rows = [f"{g}\t{g[0]}{i}\tT\tx" for g in ("fiction", "biography") for i in range(10)]
    manifest = read(write_manifest(tmp_path, rows))
    one = books.select_books(manifest, {"fiction": 3, "biography": 2}, seed=1)
    assert one.groupby("genre").size().to_dict() == {"biography": 2, "fiction": 3}
    assert one.equals(books.select_books(manifest, {"fiction": 3, "biography": 2}, seed=1))
    assert not one.equals(books.select_books(manifest, {"fiction": 3, "biography": 2}, seed=2))
    assert books.select_books(manifest, {"fiction": 4}, seed=1)["genre"].eq("fiction").all()
    assert len(books.select_books(manifest, 50, seed=1)) == 20  # all, when fewer exist
    assert len(books.select_books(manifest, None, seed=1)) == 20
    with pytest.raises(StoryflowError, match=r"genre\(s\) \['poetry'\] absent"):
        books.select_books(manifest, {"poetry": 1}, seed=1)


def paragraph(text: str) -> books.Paragraph:
    return books.Paragraph(0, tuple(text.split("\n")))


PROSE = (
    "The rain had not stopped for three days, and the river rose a little higher every\n"
    "morning. Nobody in the village spoke of leaving, though everyone thought of it."
)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (PROSE, None),
        ('"Where are you going?" she asked him, without looking up from the fire.', None),
        ("CHAPTER IV.\nIn which the river rises.", "heading"),
        ("XII.", "too short"),
        ("THE SECOND PART OF THE HISTORY OF THE VILLAGE BY THE RIVER", "capitals"),
        (
            "Preface ........................ 1\nThe Village .................... 7\n"
            "The River ...................... 19",
            "table of contents",
        ),
        (
            "The Village and its People ... 7\nThe River in the Spring ... 19\n"
            "A Flood and what came after it ... 33",
            "table of contents",
        ),
        (
            "Oh the river runs down to the sea,\nAnd the sea runs back to me,\n"
            "And the rain falls soft on the lea,\nAs it always used to be.",
            "short lines",
        ),
        ("[Illustration: The river in flood, from a drawing by the author.]", "bracketed"),
        ("The river rose and the village was quiet and nobody said a word about it", "no sentence"),
    ],
)
def test_prose_filter(text: str, problem: str | None) -> None:
    found = books.prose_problem(paragraph(text))
    assert found is None if problem is None else problem in found


def synthetic_book() -> str:
    """Front matter, 60 chapters of 4 three-sentence paragraphs with a verse block, back matter.

    Sentence k of paragraph p of chapter c reads "Story c, paragraph p, sentence k is here."
    """
    parts = ["THE TITLE\n\nCONTENTS\n\n" + "\n".join(f"Chapter {c} ..... {c}" for c in range(60))]
    for c in range(60):
        parts.append(f"CHAPTER {c}.")
        for p in range(4):
            sentences = [f"Story {c}, paragraph {p}, sentence {k} is here." for k in range(3)]
            parts.append(" ".join(sentences))
            if c == 30 and p == 1:
                parts.append(
                    "Roses are red,\nViolets are blue,\nThe river is wide,\nAnd so are you."
                )
    parts.append("THE END\n\nINDEX\n\nRiver, 7, 19\nVillage, 3")
    return "\n\n".join(parts) + "\n"


SENTENCE = re.compile(r"^Story (\d+), paragraph (\d), sentence (\d) is here\.$")


def test_passages_are_consecutive_prose_away_from_the_ends(nlp) -> None:
    text = synthetic_book()
    passages = books.sample_passages(
        text, nlp, n_passages=3, n_sentences=8, margin=0.1, rng=np.random.default_rng(5)
    )
    assert len(passages) == 3
    assert [p.start for p in passages] == sorted(p.start for p in passages)
    spans = []
    for passage in passages:
        assert len(passage.sentences) == 8
        assert 0.1 * len(text) <= passage.start < 0.9 * len(text)
        keys = [tuple(map(int, SENTENCE.match(s).groups())) for s in passage.sentences]
        chapters = {c for c, _, _ in keys}
        assert len(chapters) == 1  # a chapter heading ends a run of prose
        assert chapters != {30}  # the verse block leaves two 6-sentence runs in chapter 30
        # consecutive, paragraph by paragraph, from the first sentence of a paragraph
        first = keys[0][1]
        assert [(p, k) for _, p, k in keys] == [(first + i // 3, i % 3) for i in range(8)]
        assert passage.paragraph_starts == (0, 3, 6)
        spans.append(set(range(passage.first_paragraph, passage.last_paragraph + 1)))
    assert not (spans[0] & spans[1]) and not (spans[1] & spans[2]) and not (spans[0] & spans[2])
    again = books.sample_passages(
        text, nlp, n_passages=3, n_sentences=8, margin=0.1, rng=np.random.default_rng(5)
    )
    assert again == passages
    # 13 sentences never fit in a chapter (12 sentences): no passage, not a wrong one
    assert not books.sample_passages(
        text, nlp, n_passages=1, n_sentences=13, margin=0.1, rng=np.random.default_rng(5)
    )


def test_narration_leaves_out_double_and_single_quoted_dialogue() -> None:
    assert books.narration(['"I am cold," he said.']).split() == ["he", "said."]
    assert books.narration(["“I am cold,” he said."]).split() == ["he", "said."]
    assert books.narration(["'I never told him so, sir,' returned Oliver."]).split() == [
        "returned",
        "Oliver.",
    ]
    # apostrophes are not quotes
    assert books.narration(["I don't know Tom's dog."]).split() == [
        "I",
        "don't",
        "know",
        "Tom's",
        "dog.",
    ]
    # a quotation left open at a paragraph's end does not swallow the next paragraph
    sentences = ['"I went on and on.', "I stopped at the river."]
    assert books.narration(sentences, paragraph_starts=[0]).split() == []
    assert books.narration(sentences, paragraph_starts=[0, 1]).split() == [
        "I",
        "stopped",
        "at",
        "the",
        "river.",
    ]


def test_point_of_view_rates_and_labels() -> None:
    # 20 narration words: 2 first-person (I, my) = 10 per 100 words -> 1P
    first = books.point_of_view(
        ["I walked down to the river with my dog on a cold grey morning in the late autumn rain."],
        first_rate=1.5,
        third_rate=1.0,
    )
    assert first.narration_words == 19 and first.label == "1P"
    assert first.first_rate == pytest.approx(100 * 2 / 19)
    # dialogue in first person, narration in third person -> 3P
    third = books.point_of_view(
        ['"I will go," she said, and she took his hand.'], first_rate=1.5, third_rate=1.0
    )
    assert third.label == "3P" and third.first_rate == 0.0
    assert third.third_rate == pytest.approx(100 * 3 / 7)
    essay = books.point_of_view(
        ["Commerce requires trust between strangers."], first_rate=1.5, third_rate=1.0
    )
    assert essay.label == "unclear"


def test_real_books_give_prose_passages_with_the_hinted_point_of_view(
    data_mirror: Path, nlp
) -> None:
    manifest = read(data_mirror / "books" / "MANIFEST.tsv")
    # Nasmyth's autobiography (first person) and Oliphant's life of Jeanne d'Arc (third person)
    chosen = manifest[manifest["document_id"].isin(["476", "2553"])].reset_index(drop=True)
    settings = books.PassageSettings(2, 20, 0.1, 200, 2022, ("fiction",), 1.5, 1.0)
    passages, sentences = books.build_passages(chosen, nlp, settings)
    assert list(passages["story_id"]) == ["476-p1", "476-p2", "2553-p1", "2553-p2"]
    assert sentences.groupby("story_id").size().eq(20).all()
    pov = dict(zip(passages["document_id"], passages["pov"], strict=False))
    assert pov == {"476": "1P", "2553": "3P"}
    assert set(passages["story_type"]) == {"autobiography", "biography"}  # not split by POV
    for row in passages.itertuples():
        text = books.read_book(chosen.set_index("document_id").at[row.document_id, "path"])
        assert 0.1 * len(text) <= row.start_char < 0.9 * len(text)
    assert not sentences["text"].str.fullmatch(r"(CHAPTER|Chapter) [IVXLC\d]+\.?").any()
    counts = books.passage_counts(manifest, chosen, passages)
    assert counts[["story_type", "n_books", "n_passages"]].values.tolist() == [
        ["autobiography", 1, 2],
        ["biography", 1, 2],
    ]


def test_download_strips_the_gutenberg_licence_and_names_every_failure(tmp_path: Path) -> None:
    source = tmp_path / "server"
    source.mkdir()
    (source / "5.txt").write_text(
        "The Project Gutenberg eBook of X\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\n"
        "It was a dark night.\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\nLicence text.\n"
    )
    wanted = pd.DataFrame({"document_id": ["5"], "genre": ["fiction"]})
    dest = tmp_path / "out" / "fiction" / "5.txt"
    books.download_books(wanted, [str(dest)], f"file://{source}/{{id}}.txt")
    assert dest.read_text() == "It was a dark night.\n"
    missing = pd.DataFrame({"document_id": ["6", "7"], "genre": ["fiction", "biography"]})
    targets = [str(tmp_path / "out" / "6.txt"), str(tmp_path / "out" / "7.txt")]
    with pytest.raises(StoryflowError) as err:
        books.download_books(missing, targets, f"file://{source}/{{id}}.txt")
    message = str(err.value)
    assert message.startswith("2 book(s) are neither in the data mirror nor downloadable")
    assert all(f"put it at {t}" in message for t in targets)


def test_a_books_passages_do_not_depend_on_the_other_books_sampled(tmp_path: Path, nlp) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text(synthetic_book())
    table = pd.DataFrame(
        {
            "document_id": ["a", "b"],
            "genre": ["fiction", "biography"],
            "path": [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")],
        }
    )
    settings = books.PassageSettings(2, 8, 0.1, 200, 7, ("fiction",), 1.0, 1.0)
    alone, _ = books.build_passages(table.iloc[:1], nlp, settings)
    both, sentences = books.build_passages(table, nlp, settings)
    pd.testing.assert_frame_equal(alone, both[both["document_id"] == "a"].reset_index(drop=True))
    # same text, other id: other passages (the seed is per book)
    assert list(both.loc[both.document_id == "a", "start_char"]) != list(
        both.loc[both.document_id == "b", "start_char"]
    )
    assert list(both["story_type"]) == ["fiction-unclear"] * 2 + ["biography"] * 2
    assert sentences.groupby("story_id").size().eq(8).all()


def test_sample_book_passages_reads_the_given_book_files_and_gives_every_table(
    tmp_path: Path, nlp, caplog: pytest.LogCaptureFixture
) -> None:
    """The rule's entry point: the sampled books in the order of ``ids``, read from the files
    the rule gives (not the manifest's paths), with sentence counts, the sample counts against
    the manifest, the POV sheet and the POV check logged."""
    manifest = write_manifest(
        tmp_path, ["fiction\ta\tA\tthird person", "biography\tb\tB\tfirst", "fiction\tc\tC\tx"]
    )
    texts = tmp_path / "elsewhere"  # not where the manifest's template points
    texts.mkdir()
    for name in ("a", "b"):
        (texts / f"{name}.txt").write_text(synthetic_book())
    sampling = books.PassageSampleSettings.from_params(
        {
            "columns": {
                "id": "gutenberg_id",
                "genre": "category",
                "path": None,
                "pov_hint": "pov_hint",
            },
            "path_template": "{genre}/{id}.txt",
            "passages": {"per_book": 2, "sentences": 8, "margin": 0.1, "max_tries": 200},
            "pov": {"genres": ["fiction"], "first_rate": 1.0, "third_rate": 1.0},
            "seed": 7,
        }
    )
    with caplog.at_level("INFO", logger="storyflow.corpora.books"):
        result = books.sample_book_passages(
            manifest, [texts / "b.txt", texts / "a.txt"], ["b", "a"], sampling, "en_core_web_sm"
        )
    assert result.stories["story_id"].tolist() == ["b-p1", "b-p2", "a-p1", "a-p2"]
    assert result.stories["story_type"].tolist() == ["biography"] * 2 + ["fiction-unclear"] * 2
    # the same passages as sampling those books directly, with the seed per book
    chosen = pd.DataFrame(
        {"document_id": ["a"], "genre": ["fiction"], "path": [str(texts / "a.txt")]}
    )
    settings = books.PassageSettings(2, 8, 0.1, 200, 7, ("fiction",), 1.0, 1.0)
    alone, _ = books.build_passages(chosen, nlp, settings)
    both = result.stories[result.stories["document_id"] == "a"]
    assert both["start_char"].tolist() == alone["start_char"].tolist()
    assert result.sentences.groupby("story_id").size().eq(8).all()
    assert result.counts["n_sentences"].tolist() == [8, 8, 8, 8]
    sample = result.sample.set_index("story_type")
    assert sample.loc["fiction-unclear", ["n_books_in_manifest", "n_books_sampled"]].tolist() == [
        2,
        1,
    ]
    assert sample.loc["biography", "n_passages"] == 2
    assert result.pov["hint"].tolist() == ["first", "first", "third person", "third person"]
    assert "POV check: fiction hinted third -> unclear: 2 passages" in caplog.text
    assert "fiction-unclear: 2 passages from 1 books" in caplog.text
