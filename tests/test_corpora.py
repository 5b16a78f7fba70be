"""The corpus registry (storyflow.corpora), the user CSV kind, the downloader and seeded draws."""

from __future__ import annotations

import codecs
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from storyflow import corpora, seeds, tables
from storyflow.corpora import download, selection, user_csv
from storyflow.corpora.books import book_passages
from storyflow.corpora.hanna import read_hanna
from storyflow.corpora.rocstories import read_rocstories
from storyflow.errors import InputDataError, StoryflowError

CONFIG = {
    "data": {"mirror": "/data"},
    "hippocorpus": {"mirror_path": "hippocorpus/hippocorpus.csv", "url": "https://example/h.zip"},
    "books": {"manifest": "books/MANIFEST.tsv", "url": "https://example/{id}.txt"},
    "narrative_sense": {"hanna": "stories/hanna.csv", "rocstories": "/abs/roc.csv"},
    "corpora": {
        "diaries": {
            "kind": "csv",
            "path": "mine/diaries.csv",
            "columns": {"id": "key", "text": "body", "group": "condition", "topic": None},
        }
    },
}


def test_registry_knows_every_corpus_and_its_file() -> None:
    assert corpora.corpus_names(CONFIG) == [
        "hippocorpus",
        "books",
        "hanna",
        "rocstories",
        "diaries",
    ]
    assert corpora.configured_path(CONFIG, "hippocorpus") == Path(
        "/data/hippocorpus/hippocorpus.csv"
    )
    assert corpora.configured_path(CONFIG, "rocstories") == Path("/abs/roc.csv")
    # one's own CSV is never looked for in the mirror of public data
    assert corpora.configured_path(CONFIG, "diaries") == Path("mine/diaries.csv")
    assert corpora.download_url(CONFIG, "hippocorpus") == "https://example/h.zip"
    assert corpora.download_url(CONFIG, "hanna") is None
    assert corpora.corpus_kind(CONFIG, "diaries").kind == "csv"
    assert corpora.corpus_kind(CONFIG, "books").labels == ("genre", "pov")


def test_unknown_corpus_names_the_known_ones() -> None:
    with pytest.raises(StoryflowError, match=r"unknown corpus 'diary'.*diaries.*hippocorpus"):
        corpora.corpus_kind(CONFIG, "diary")


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


COLUMNS = {"id": "key", "text": "body", "group": "condition", "topic": "prompt"}


def test_csv_corpus_reads_groups_topics_and_excludes_empty_texts(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"key": "a", "body": "One. Two.", "condition": "x", "prompt": "p1"},
            {"key": "b", "body": "  ", "condition": "y", "prompt": ""},
            {"key": "c", "body": "Three.", "condition": "y", "prompt": ""},
        ],
    )
    stories, excluded, counts = user_csv.corpus_tables(path, COLUMNS)
    assert stories["story_id"].tolist() == ["a", "c"]
    assert stories["story_type"].tolist() == ["x", "y"]
    assert stories["topic"].iloc[0] == "p1" and pd.isna(stories["topic"].iloc[1])
    assert stories["has_topic"].tolist() == [True, False]
    assert excluded.to_dict("records") == [
        {"story_id": "b", "story_type": "y", "row": 3, "reason": "empty story text"}
    ]
    by_type = counts.set_index("story_type")
    assert by_type.loc["y", ["n_in_corpus", "n_excluded", "n_sampled"]].tolist() == [2, 1, 1]
    texts = corpora.read_texts(
        CONFIG | {"corpora": {"s": {"kind": "csv"}}}, "s", path, {"columns": COLUMNS}
    )
    assert texts.columns.tolist() == ["story_id", "group", "text"]


def test_csv_corpus_errors_name_file_rows_and_columns(tmp_path: Path) -> None:
    missing = write_csv(tmp_path / "m.csv", [{"key": "a", "text": "x", "condition": "g"}])
    with pytest.raises(InputDataError, match=r"m\.csv.*body.*the header has 'key', 'text'"):
        user_csv.read_csv_stories(missing, {"id": "key", "text": "body", "group": "condition"})
    repeated = write_csv(
        tmp_path / "r.csv",
        [{"key": "a", "body": "x", "condition": "g"}, {"key": "a", "body": "y", "condition": "g"}],
    )
    with pytest.raises(
        InputDataError, match=r"repeated story id \(column 'key'\): 'a' in rows 2, 3"
    ):
        user_csv.read_csv_stories(repeated, {"id": "key", "text": "body", "group": "condition"})


BASIC = {"id": "key", "text": "body", "group": "condition"}


def test_a_block_column_matches_stories_and_a_missing_column_names_its_key(
    tmp_path: Path,
) -> None:
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"key": "a", "body": "One.", "condition": "x", "prompt_id": "p1"},
            {"key": "b", "body": "Two.", "condition": "y", "prompt_id": "p1"},
            {"key": "c", "body": "Three.", "condition": "y", "prompt_id": " "},
        ],
    )
    stories, _ = user_csv.read_csv_stories(path, {**BASIC, "block": "prompt_id"}, "diaries")
    assert stories["block"].tolist()[:2] == ["p1", "p1"] and pd.isna(stories["block"].iloc[2])
    assert "block" not in user_csv.read_csv_stories(path, BASIC)[0]
    wrong = {**BASIC, "text": "story"}
    for read in (user_csv.read_csv_stories, user_csv.group_values):
        with pytest.raises(InputDataError) as err:
            read(path, wrong, "diaries")
        message = str(err.value)
        assert "'story' (named by corpora.diaries.columns.text)" in message
        assert "the header has 'key', 'body', 'condition', 'prompt_id'" in message
        assert "Set corpora.diaries.columns.text to the header's name" in message


def test_a_csv_corpus_tables_name_the_group_column_as_the_config_does(tmp_path: Path) -> None:
    """The CSV tables a reader opens call a CSV corpus's label ``group``; reading them back
    gives the pipeline's ``story_type``, so every rule reads them as before."""
    counts = pd.DataFrame({"story_type": ["x", "y"], "n_in_corpus": [2, 1]})
    path = tmp_path / "counts.csv"
    tables.labelled(counts, tables.USER_LABEL).to_csv(path, index=False)
    assert pd.read_csv(path).columns.tolist() == ["group", "n_in_corpus"]
    back = tables.read(tables.SAMPLE_COUNTS, path, needs=["story_type", "n_in_corpus"])
    assert back["story_type"].tolist() == ["x", "y"]
    assert corpora.label_column(CONFIG, "diaries") == "group"
    assert corpora.label_column(CONFIG, "hippocorpus") == "story_type"
    assert tables.labelled(counts, "story_type") is counts


def test_a_story_the_run_leaves_out_is_named_when_the_workflow_is_planned(
    tmp_path: Path,
) -> None:
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"key": "a", "body": "One.", "condition": "x"},
            {"key": "b", "body": " ", "condition": "y"},
            {"key": "c", "body": "Three.", "condition": ""},
        ],
    )
    lines = user_csv.left_out(path, BASIC, "diaries")
    assert lines == [
        f"{path}, row 3 (id 'b'): empty story text: the story is left out of every table; "
        "fill the cell or remove the row",
        f"{path}, row 4 (id 'c'): empty group (column 'condition'): in no group, so in no "
        "contrast: the story is left out of every table; fill the cell or remove the row",
    ]
    assert user_csv.left_out(tmp_path / "absent.csv", BASIC, "diaries") == []


@pytest.mark.parametrize(
    ("content", "row", "cause", "fix"),
    [
        # Windows-1252 "café" on the third line: the byte, its line, the encoding, how to convert
        (
            b"key,body,condition\na,Fine.,x\nb,Un caf\xe9.,y\n",
            3,
            "not UTF-8 text (byte 0xe9 at byte offset 37, line 3",
            "iconv -f WINDOWS-1252 -t UTF-8 mine.csv > utf8-mine.csv",
        ),
        (b"key;body;condition\na;One.;x\n", 1, "separated by semicolon (';')", "sep=';'"),
        (b"key\tbody\tcondition\na\tOne.\tx\n", 1, "separated by tab", "comma-separated"),
        (b"key,body,condition\n", 2, "no data rows: the file has a header only", "one row"),
        (b"", None, "the file is empty", "a header row"),
        (
            b"key,body,condition\na,One.,x\nb,Two, three.,y\n",
            3,
            "does not parse as CSV (Error tokenizing data",
            "enclosed in double quotes",
        ),
    ],
    ids=["encoding", "semicolon", "tab", "header-only", "empty", "unquoted-comma"],
)
def test_user_file_mistakes_name_file_line_cause_and_fix(
    tmp_path: Path, content: bytes, row: int | None, cause: str, fix: str
) -> None:
    path = tmp_path / "mine.csv"
    path.write_bytes(content)
    for read in (user_csv.read_csv_stories, user_csv.group_values):
        with pytest.raises(InputDataError) as err:
            read(path, BASIC)
        message = str(err.value)
        assert message.startswith(f"{path}" + (f", row {row}:" if row else ":"))
        assert cause in message and fix in message, message


UNICODE_TEXT = "key,body,condition\na,Un café. Ève partit.,x\nb,Один. Два.,y\n"


@pytest.mark.parametrize(
    "encoded",
    [
        codecs.BOM_UTF8 + UNICODE_TEXT.encode("utf-8"),
        codecs.BOM_UTF16_LE + UNICODE_TEXT.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + UNICODE_TEXT.encode("utf-16-be"),
        codecs.BOM_UTF32_LE + UNICODE_TEXT.encode("utf-32-le"),
    ],
    ids=["utf-8-bom", "utf-16-le-bom", "utf-16-be-bom", "utf-32-le-bom"],
)
def test_a_csv_with_a_byte_order_mark_is_read_in_the_encoding_it_names(
    tmp_path: Path, encoded: bytes
) -> None:
    """Excel's 'Unicode text' and Windows tools save UTF-16 with a byte-order mark: such a file
    reads exactly as its UTF-8 twin (the mark dropped, not taken into the first column's name)."""
    plain = tmp_path / "plain.csv"
    plain.write_text(UNICODE_TEXT, encoding="utf-8")
    marked = tmp_path / "marked.csv"
    marked.write_bytes(encoded)
    stories, _ = user_csv.read_csv_stories(marked, BASIC)
    assert stories.equals(user_csv.read_csv_stories(plain, BASIC)[0])
    assert stories["text"].tolist() == ["Un café. Ève partit.", "Один. Два."]
    assert user_csv.group_values(marked, BASIC) == ["x", "y"]


@pytest.mark.parametrize(
    ("encoded", "named", "command"),
    [
        (
            UNICODE_TEXT.replace("Один. Два.", "Deux.").encode("cp1252"),
            "perhaps Windows-1252 or Latin-1",
            "iconv -f WINDOWS-1252 -t UTF-8",
        ),
        (
            UNICODE_TEXT.encode("utf-16-le"),
            "looks like UTF-16LE text without a byte-order mark",
            "iconv -f UTF-16LE -t UTF-8",
        ),
        (
            UNICODE_TEXT.encode("utf-16-be"),
            "looks like UTF-16BE text without a byte-order mark",
            "iconv -f UTF-16BE -t UTF-8",
        ),
    ],
    ids=["windows-1252", "utf-16-le-no-bom", "utf-16-be-no-bom"],
)
def test_a_csv_in_another_encoding_names_it_and_the_conversion_that_works(
    tmp_path: Path, encoded: bytes, named: str, command: str
) -> None:
    """The message names the encoding the bytes show, and the iconv command it gives, run as
    given, makes a file that reads (never the Windows-1252 advice for UTF-16, which would turn
    every NUL byte into a character)."""
    import shutil
    import subprocess

    path = tmp_path / "mine.csv"
    path.write_bytes(encoded)
    with pytest.raises(InputDataError) as err:
        user_csv.read_csv_stories(path, BASIC)
    message = str(err.value)
    assert named in message and f"`{command} mine.csv > utf8-mine.csv`" in message, message
    if shutil.which("iconv") is None:
        pytest.skip("iconv is not installed: the suggested command cannot be run here")
    subprocess.run(f"{command} mine.csv > utf8-mine.csv", shell=True, cwd=tmp_path, check=True)
    stories, _ = user_csv.read_csv_stories(tmp_path / "utf8-mine.csv", BASIC)
    assert stories["text"].iloc[0] == "Un café. Ève partit."
    assert stories["story_type"].tolist() == ["x", "y"]


def test_a_workbook_or_a_damaged_utf16_file_says_what_it_is(tmp_path: Path) -> None:
    workbook = tmp_path / "stories.csv"
    workbook.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + bytes(200))  # an .xlsx renamed
    with pytest.raises(InputDataError, match=r"stories\.csv: the file is a zip archive.*CSV UTF-8"):
        user_csv.read_csv_stories(workbook, BASIC)
    cut = tmp_path / "cut.csv"
    cut.write_bytes(codecs.BOM_UTF16_LE + UNICODE_TEXT.encode("utf-16-le")[:-1])  # half a letter
    with pytest.raises(InputDataError) as err:
        user_csv.read_csv_stories(cut, BASIC)
    message = str(err.value)  # the half letter ends line 3; iconv reads the mark itself
    assert message.startswith(f"{cut}, row 3: the file begins with the byte-order mark of UTF-16LE")
    assert "not valid UTF-16LE text" in message and "iconv -f UTF-16 -t UTF-8" in message


def test_a_book_manifest_shares_the_encoding_reading(tmp_path: Path) -> None:
    from storyflow.corpora.books import read_manifest

    text = "gutenberg_id\tcategory\n11\tfiction\n12\tbiografía\n"
    plain, marked, latin = tmp_path / "m.tsv", tmp_path / "u16.tsv", tmp_path / "w.tsv"
    plain.write_text(text, encoding="utf-8")
    marked.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    latin.write_bytes(text.encode("cp1252"))
    columns = {
        "id_column": "gutenberg_id", "genre_column": "category", "path_template": "{genre}/{id}.txt"
    }  # fmt: skip
    assert read_manifest(marked, **columns).equals(read_manifest(plain, **columns))
    with pytest.raises(InputDataError, match=r"w\.tsv, row 3: .*iconv -f WINDOWS-1252 -t UTF-8"):
        read_manifest(latin, **columns)


def test_a_story_without_letters_is_excluded_with_its_reason(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"key": "a", "body": "Ève arriva. Then she left.", "condition": "x"},
            {"key": "b", "body": "12, 13 -- ?!", "condition": "x"},
            {"key": "c", "body": "Один. Два.", "condition": "y"},
        ],
    )
    stories, excluded = user_csv.read_csv_stories(path, BASIC)
    assert stories["story_id"].tolist() == ["a", "c"]  # letters of any script count
    assert excluded.to_dict("records") == [
        {
            "story_id": "b",
            "story_type": "x",
            "row": 3,
            "reason": "no letters in the story text (nothing to read)",
        }
    ]


def test_a_story_with_an_empty_group_cell_is_excluded_with_its_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A story in no group can be in no contrast: listed in the exclusions table with its row,
    counted, and logged, never kept silently as a group named ''."""
    path = write_csv(
        tmp_path / "s.csv",
        [
            {"key": "a", "body": "One. Two.", "condition": "x"},
            {"key": "b", "body": "Three.", "condition": "  "},
            {"key": "c", "body": "Four.", "condition": "y"},
        ],
    )
    stories, excluded, counts = user_csv.corpus_tables(path, BASIC)
    assert stories["story_id"].tolist() == ["a", "c"] and "" not in set(stories["story_type"])
    assert excluded.to_dict("records") == [
        {
            "story_id": "b",
            "story_type": "",
            "row": 3,
            "reason": "empty group (column 'condition'): in no group, so in no contrast",
        }
    ]
    assert counts.set_index("story_type").loc["", ["n_excluded", "n_sampled"]].tolist() == [1, 0]
    assert "s.csv: 1 story(ies) excluded (empty group (column 'condition')" in caplog.text
    assert user_csv.group_values(path, BASIC) == ["x", "y"]  # what contrasts are checked against
    everyone = write_csv(tmp_path / "e.csv", [{"key": "a", "body": "One.", "condition": ""}])
    with pytest.raises(InputDataError, match=r"e\.csv: the group column 'condition' is empty in"):
        user_csv.read_csv_stories(everyone, BASIC)


def test_a_hanna_story_without_a_model_is_excluded_with_its_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "hanna.csv"
    pd.DataFrame(
        {
            "Prompt": ["p0", "p0", "p0"],
            "Human": ["A human story."] * 3,
            "Story": ["M1's story.", "Whose story?", "Nobody's either."],
            "Model": ["M1", "", " "],
        }
    ).to_csv(path, index=False)
    stories, excluded, counts = selection.hanna_stories(path, prompts=None, seed=0)
    assert set(stories["story_id"]) == {"Human-0", "M1-0"}
    reason = "empty group (column 'Model'): in no group, so in no contrast"
    assert excluded[["story_id", "row", "reason"]].values.tolist() == [
        ["no-model-row3", 3, reason],
        ["no-model-row4", 4, reason],
    ]
    assert counts.set_index("story_type").loc["", "n_excluded"] == 2
    texts = corpora.read_texts("hanna", "hanna", path, {})  # narrative sense's reading
    assert set(texts["story_id"]) == {"Human-0", "M1-0"}
    assert "2 stories with an empty Model cell left out (in no group), CSV row(s) 3, 4" in (
        caplog.text
    )


def test_download_is_atomic(tmp_path: Path) -> None:
    source = tmp_path / "source.txt"
    source.write_text("hello")
    dest = tmp_path / "out" / "file.txt"
    assert download.fetch(source.as_uri(), dest, hint="") == dest
    assert dest.read_text() == "hello"

    def broken(raw: Path, out: Path) -> None:
        out.write_text("half")
        raise StoryflowError("transform failed")

    other = tmp_path / "out" / "other.txt"
    with pytest.raises(StoryflowError, match="transform failed"):
        download.fetch(source.as_uri(), other, hint="", transform=broken)
    assert not other.exists()
    assert sorted(p.name for p in other.parent.iterdir()) == ["file.txt"]  # no leftovers


def test_failed_download_names_url_cause_and_hint(tmp_path: Path) -> None:
    url = (tmp_path / "absent.zip").as_uri()
    with pytest.raises(download.DownloadError) as err:
        download.fetch(url, tmp_path / "x", hint="Put it at /there by hand.")
    assert url in str(err.value) and "Put it at /there by hand." in str(err.value)
    assert err.value.cause


def test_item_rng_depends_on_seed_and_item_only() -> None:
    a = seeds.item_rng(7, "story-1").integers(0, 1_000_000, 5)
    assert np.array_equal(a, seeds.item_rng(7, "story-1").integers(0, 1_000_000, 5))
    assert not np.array_equal(a, seeds.item_rng(8, "story-1").integers(0, 1_000_000, 5))
    assert not np.array_equal(a, seeds.item_rng(7, "story-2").integers(0, 1_000_000, 5))
    # the same stream as numpy's generator seeded with [seed, crc32(id)] (older results hold)
    import zlib

    legacy = np.random.default_rng([7, zlib.crc32(b"story-1")]).integers(0, 1_000_000, 5)
    assert np.array_equal(a, legacy)


# --- readers of the built-in corpora, on the real data ------------------------------------


def test_hanna_reader_keeps_96_human_and_576_llm_stories(data_mirror: Path) -> None:
    stories, counts = read_hanna(data_mirror / "stories/hanna/hanna_llm_stories.csv")
    sizes = stories.groupby("group").size()
    assert sizes["Human"] == 96 and len(sizes) == 7 and (sizes == 96).all()
    assert stories["story_id"].is_unique
    assert counts["n_stories"].sum() == 96 * 7
    limited, _ = read_hanna(data_mirror / "stories/hanna/hanna_llm_stories.csv", limit=2)
    assert len(limited) == 14


def test_rocstories_reader_takes_the_right_ending(data_mirror: Path) -> None:
    path = data_mirror / "stories/rocstories_cloze/cloze_test_spring2016.csv"
    stories = read_rocstories(path)
    raw = pd.read_csv(path, dtype=str)
    assert len(stories) == len(raw) == 1871
    row = raw.iloc[0]
    right = row[f"RandomFifthSentenceQuiz{row['AnswerRightEnding']}"]
    wrong = row[f"RandomFifthSentenceQuiz{3 - int(row['AnswerRightEnding'])}"]
    assert stories.loc[0, "text"].endswith(right) and wrong not in stories.loc[0, "text"]
    assert stories.loc[0, "text"].startswith(row["InputSentence1"])


def test_hanna_sample_is_paired_by_prompt_and_seeded(data_mirror: Path) -> None:
    path = data_mirror / "stories/hanna/hanna_llm_stories.csv"
    stories, excluded, counts = selection.hanna_stories(path, prompts=3, seed=11)
    tables.STORIES.check(stories)
    assert stories["prompt_id"].nunique() == 3 and len(stories) == 3 * 7 and excluded.empty
    # every prompt has the human story and each of the six LLMs' stories
    assert (stories.groupby("prompt_id")["story_type"].nunique() == 7).all()
    assert stories.groupby("prompt_id")["topic"].nunique().eq(1).all()
    assert counts.set_index("story_type")["n_sampled"].eq(3).all()
    again, _, _ = selection.hanna_stories(path, prompts=3, seed=11)
    assert again.equals(stories)
    other, _, _ = selection.hanna_stories(path, prompts=3, seed=12)
    assert set(other["prompt_id"]) != set(stories["prompt_id"])


def test_rocstories_sample_keeps_both_endings(data_mirror: Path) -> None:
    path = data_mirror / "stories/rocstories_cloze/cloze_test_spring2016.csv"
    stories, excluded, counts = selection.rocstories_stories(path, n_stories=5, seed=3)
    assert len(stories) == 5 and excluded.empty and counts["n_sampled"].tolist() == [5]
    assert (stories["text"] == stories["context"] + " " + stories["right_ending"]).all()
    assert (stories["right_ending"] != stories["wrong_ending"]).all()
    assert not stories["has_topic"].any()
    again, _, _ = selection.rocstories_stories(path, n_stories=5, seed=3)
    assert again.equals(stories)


def test_sample_lists_an_empty_story_instead_of_dropping_it(tmp_path: Path) -> None:
    path = tmp_path / "hanna.csv"
    pd.DataFrame(
        {
            "Prompt": ["p0", "p0", "p1"],
            "Human": ["A human story.", "A human story.", "   "],
            "Story": ["Model one's story.", "", "Another story."],
            "Model": ["M1", "M2", "M1"],
        }
    ).to_csv(path, index=False)
    stories, excluded, counts = selection.hanna_stories(path, prompts=None, seed=0)
    assert set(stories["story_id"]) == {"Human-0", "M1-0", "M1-1"}
    assert excluded[["story_id", "row", "reason"]].values.tolist() == [
        ["M2-0", 3, "empty text"],
        ["Human-1", 4, "empty text"],
    ]
    by_type = counts.set_index("story_type")
    assert by_type.loc["M2", "n_excluded"] == 1 and by_type.loc["M2", "n_sampled"] == 0
    # the draw's size is at least 1: the config schema's range, checked there once
    from conftest import BARE_CONFIG, schema_defaults
    from snakemake.exceptions import WorkflowError

    with pytest.raises(WorkflowError):
        schema_defaults({**BARE_CONFIG, "stories": {"hanna": {"prompts": 0}}})


def test_book_passages_from_two_real_books(data_mirror: Path) -> None:
    from storyflow.corpora.books import read_manifest

    manifest = read_manifest(
        data_mirror / "books/MANIFEST.tsv",
        id_column="gutenberg_id",
        genre_column="category",
        path_template="{genre}/{id}.txt",
    ).head(2)
    passages = book_passages(manifest, per_book=3, tokens=150, seed=5)
    assert len(passages) == 6 and passages["story_id"].is_unique
    assert (passages["text"].str.split().str.len() == 150).all()
    again = book_passages(manifest, per_book=3, tokens=150, seed=5)
    assert again.equals(passages)


def test_bad_input_gives_clear_messages(tmp_path: Path) -> None:
    bad = tmp_path / "hanna.csv"
    bad.write_text("Prompt,Human,Model\np,h,m\n")
    with pytest.raises(InputDataError, match=r"hanna\.csv.*missing required column\(s\) Story"):
        read_hanna(bad)
    with pytest.raises(StoryflowError, match="hanna-benchmark-asg"):
        read_hanna(tmp_path / "absent.csv")
    with pytest.raises(StoryflowError, match="registration"):
        read_rocstories(tmp_path / "absent.csv")
    roc = tmp_path / "roc.csv"
    roc.write_text("InputStoryid,InputSentence1\nx,y\n")
    with pytest.raises(InputDataError, match="InputSentence2"):
        read_rocstories(roc)
