"""storyflow.corpora.hippocorpus: reading and validating HIPPOCORPUS, sampling, counts, download."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import HIPPOCORPUS_CSV

from storyflow.corpora import hippocorpus as corpus
from storyflow.errors import InputDataError, StoryflowError

TYPES = ["recalled", "retold", "imagined"]
HEADER = "AssignmentId,WorkerId,memType,story,summary,mainEvent,recAgnPairId,recImgPairId\n"
REAL_CORPUS = HIPPOCORPUS_CSV


def write(tmp_path: Path, body: str, header: str = HEADER, name: str = "hc.csv") -> Path:
    path = tmp_path / name
    path.write_text(header + body, encoding="utf-8")
    return path


# A story spanning two lines (row 3), an empty summary (row 4), a whitespace-only story (row 5).
GOOD = (
    "A1,w1,recalled,I went out. It rained.,  A rainy walk ,ev,,\n"
    'A2,w2,imagined,"I dreamt.\nThen I woke up.",A dream,ev,,\n'
    "A3,w3,retold,We met again. It was nice.,,ev,,\n"
    'A4,w4,recalled,"   ",Nothing,ev,,\n'
    "A5,w5,recalled,Last one. Really.,End,ev,,\n"
    "A6,w6,retold,... 123 ?!,Symbols,ev,,\n"
)


def test_read_valid_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path, GOOD)
    with caplog.at_level(logging.WARNING, logger="storyflow.corpora.hippocorpus"):
        stories, excluded = corpus.read_hippocorpus(path, TYPES)

    columns = ["story_id", "story_type", "text", "topic", "has_topic", "block"]
    assert list(stories.columns) == columns
    assert stories["story_id"].tolist() == ["A1", "A2", "A3", "A5"]
    assert stories["story_type"].tolist() == ["recalled", "imagined", "retold", "recalled"]
    assert stories["text"].tolist()[1] == "I dreamt.\nThen I woke up."
    # summary stripped; empty summary -> None and has_topic False (the story is kept)
    assert stories["topic"].tolist() == ["A rainy walk", "A dream", None, "End"]
    assert stories["has_topic"].tolist() == [True, True, False, True]

    # row counts CSV records: header = 1, so A4 (after a two-line story) is row 5
    assert excluded.to_dict("records") == [
        {"story_id": "A4", "story_type": "recalled", "row": 5, "reason": "empty story"},
        {"story_id": "A6", "story_type": "retold", "row": 7, "reason": corpus.NO_LETTERS},
    ]  # a story of digits and punctuation only is not split and scored: excluded, with why
    assert "empty text or no letters excluded" in caplog.text
    assert "A4" in caplog.text


def test_extra_and_reordered_columns_are_fine(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "x,A rainy walk,A1,recalled,It rained.\n",
        "extra,summary,AssignmentId,memType,story\n",
    )
    stories, excluded = corpus.read_hippocorpus(path, TYPES)
    assert stories.iloc[0].to_dict() == {
        "story_id": "A1",
        "story_type": "recalled",
        "text": "It rained.",
        "topic": "A rainy walk",
        "has_topic": True,
        "block": "A1",  # a recalled story is its own block
    }
    assert excluded.empty


def test_utf8_with_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(("\ufeff" + HEADER + "A1,w,retold,Café day.,Café,e,,\n").encode("utf-8"))
    stories, _ = corpus.read_hippocorpus(path, TYPES)
    assert stories["story_id"].tolist() == ["A1"]
    assert stories["text"].tolist() == ["Café day."]


def test_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "A1,recalled,A story.\n", header="AssignmentId,memType,story\n")
    with pytest.raises(InputDataError) as info:
        corpus.read_hippocorpus(path, TYPES)
    message = str(info.value)
    assert str(path) in message
    assert "missing required column(s) summary" in message
    assert "'AssignmentId', 'memType', 'story'" in message  # the columns found


def test_unknown_memtype(tmp_path: Path) -> None:
    body = "A1,w,recalled,Fine.,S,e,,\nA2,w,dreamed,Odd.,S,e,,\nA3,w,Retold,Odd too.,S,e,,\n"
    path = write(tmp_path, body)
    with pytest.raises(InputDataError) as info:
        corpus.read_hippocorpus(path, TYPES)
    err = info.value
    assert err.row == 3
    assert "memType 'dreamed' is not an allowed story type (recalled, retold, imagined)" in str(err)
    assert "rows 3 ('dreamed'), 4 ('Retold')" in str(err)


def test_unknown_memtype_lists_first_rows_only(tmp_path: Path) -> None:
    body = "".join(f"A{i},w,other,Text.,S,e,,\n" for i in range(8))
    with pytest.raises(InputDataError, match=r"8 row\(s\).*rows 2 .*, 6 \('other'\) and 3 more"):
        corpus.read_hippocorpus(write(tmp_path, body), TYPES)


def test_utf16_with_byte_order_mark_is_read(tmp_path: Path) -> None:
    """HIPPOCORPUS shares the user CSVs' decoding (storyflow.corpora.base.decode_text)."""
    path = tmp_path / "utf16.csv"
    path.write_bytes(("\ufeff" + HEADER + "A1,w,retold,Café day.,Café,e,,\n").encode("utf-16-le"))
    stories, _ = corpus.read_hippocorpus(path, TYPES)
    assert stories["text"].tolist() == ["Café day."]


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    data = HEADER.encode() + b"A1,w,recalled,I had a caf\xe9 au lait.,Coffee,e,,\n"
    path.write_bytes(data)
    with pytest.raises(InputDataError) as info:
        corpus.read_hippocorpus(path, TYPES)
    message = str(info.value)
    offset = data.index(b"\xe9")
    assert str(path) in message
    assert f"byte 0xe9 at byte offset {offset}, line 2" in message
    assert "iconv -f WINDOWS-1252 -t UTF-8 latin1.csv > utf8-latin1.csv" in message


def test_duplicate_id(tmp_path: Path) -> None:
    body = "A1,w,recalled,One.,S,e,,\nA2,w,recalled,Two.,S,e,,\nA1,w,retold,Three.,S,e,,\n"
    with pytest.raises(InputDataError) as info:
        corpus.read_hippocorpus(write(tmp_path, body), TYPES)
    assert info.value.row == 2
    assert "1 id(s) repeat, in rows 2 ('A1'), 4 ('A1')" in str(info.value)


def test_empty_id(tmp_path: Path) -> None:
    body = "A1,w,recalled,One.,S,e,,\n ,w,recalled,Two.,S,e,,\n"
    with pytest.raises(InputDataError, match=r"row 3: empty AssignmentId .* in row 3$"):
        corpus.read_hippocorpus(write(tmp_path, body), TYPES)


def test_missing_file_and_malformed_csv(tmp_path: Path) -> None:
    with pytest.raises(InputDataError, match="file not found"):
        corpus.read_hippocorpus(tmp_path / "nope.csv", TYPES)
    with pytest.raises(InputDataError, match="the file is empty"):
        corpus.read_hippocorpus(write(tmp_path, "", header=""), TYPES)
    # a comma outside quotes: 9 fields where the header has 8, in the first or a later row
    with pytest.raises(InputDataError, match=r"row 2: not a well-formed CSV file: this row has 9 "):
        corpus.read_hippocorpus(write(tmp_path, "A1,w,recalled,Hi, you.,S,e,,\n"), TYPES)
    body = 'A1,w,recalled,"Two\nlines.",S,e,,\nA2,w,recalled,Hi, you.,S,e,,\n'
    with pytest.raises(InputDataError) as info:
        corpus.read_hippocorpus(write(tmp_path, body), TYPES)
    assert info.value.row == 3
    assert "this row has 9 fields but the header has 8" in str(info.value)


# --- sampling ------------------------------------------------------------------------------


def toy_stories() -> pd.DataFrame:
    """10 recalled, 5 retold, 1 imagined; retold r1 and r3 have no topic."""
    rows = [(f"rec{i:02d}", "recalled") for i in range(10)]
    rows += [(f"r{i}", "retold") for i in range(5)]
    rows += [("img0", "imagined")]
    frame = pd.DataFrame(rows, columns=["story_id", "story_type"])
    frame["text"] = "Some text."
    frame["has_topic"] = ~frame["story_id"].isin(["r1", "r3"])
    frame["topic"] = frame["has_topic"].map({True: "A topic", False: None})
    return frame[["story_id", "story_type", "text", "topic", "has_topic"]]


def test_sample_fraction_is_stratified_and_rounded() -> None:
    sample = corpus.sample_stories(toy_stories(), fraction=0.3, per_type=None, seed=1)
    # round(3.0) = 3 recalled, round(1.5) = 2 retold (halves to even), max(1, round(0.3)) = 1
    assert sample["story_type"].value_counts().to_dict() == {
        "recalled": 3,
        "retold": 2,
        "imagined": 1,
    }
    assert list(sample.index) == list(range(6))
    keys = list(zip(sample["story_type"], sample["story_id"], strict=True))
    assert keys == sorted(keys)


def test_sample_is_deterministic_and_order_independent() -> None:
    stories = toy_stories()
    first = corpus.sample_stories(stories, fraction=0.5, per_type=None, seed=7)
    again = corpus.sample_stories(stories, fraction=0.5, per_type=None, seed=7)
    shuffled = stories.sample(frac=1, random_state=3).reset_index(drop=True)
    from_shuffled = corpus.sample_stories(shuffled, fraction=0.5, per_type=None, seed=7)
    pd.testing.assert_frame_equal(first, again)
    pd.testing.assert_frame_equal(first, from_shuffled)
    # a type's sample does not depend on the other types
    only_recalled = stories[stories["story_type"] == "recalled"]
    alone = corpus.sample_stories(only_recalled, fraction=0.5, per_type=None, seed=7)
    assert (
        alone["story_id"].tolist()
        == first.loc[first["story_type"] == "recalled", "story_id"].tolist()
    )
    seeds = {
        tuple(corpus.sample_stories(stories, fraction=0.5, per_type=None, seed=s)["story_id"])
        for s in range(5)
    }
    assert len(seeds) > 1


def test_sample_per_type(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="storyflow.corpora.hippocorpus"):
        sample = corpus.sample_stories(toy_stories(), fraction=None, per_type=4, seed=0)
    assert sample["story_type"].value_counts().to_dict() == {
        "recalled": 4,
        "retold": 4,
        "imagined": 1,
    }
    assert "per_type=4 but only 1 imagined stories exist" in caplog.text


def test_sample_all_and_argument_errors() -> None:
    stories = toy_stories()
    everything = corpus.sample_stories(stories, fraction=None, per_type=None, seed=0)
    assert sorted(everything["story_id"]) == sorted(stories["story_id"])
    with pytest.raises(StoryflowError, match="not both"):
        corpus.sample_stories(stories, fraction=0.5, per_type=3, seed=0)
    # the ranges of fraction and per_type are the config schema's, checked there once
    from conftest import BARE_CONFIG, schema_defaults
    from snakemake.exceptions import WorkflowError

    for sample in ({"fraction": 1.5}, {"per_type": 0}):
        with pytest.raises(WorkflowError):
            schema_defaults({**BARE_CONFIG, "hippocorpus": {"sample": sample}})


def test_sample_counts() -> None:
    stories = toy_stories()
    sample = corpus.sample_stories(stories, fraction=None, per_type=None, seed=0)
    excluded = pd.DataFrame(
        {"story_id": ["x"], "story_type": ["imagined"], "row": [9], "reason": ["empty story"]}
    )
    counts = corpus.sample_counts(stories, sample, excluded, TYPES)
    assert counts.to_dict("records") == [
        {"story_type": "recalled", "n_in_corpus": 10, "n_excluded": 0, "n_sampled": 10,
         "n_with_topic": 10, "n_without_topic": 0},
        {"story_type": "retold", "n_in_corpus": 5, "n_excluded": 0, "n_sampled": 5,
         "n_with_topic": 3, "n_without_topic": 2},
        {"story_type": "imagined", "n_in_corpus": 2, "n_excluded": 1, "n_sampled": 1,
         "n_with_topic": 1, "n_without_topic": 0},
        {"story_type": "total", "n_in_corpus": 17, "n_excluded": 1, "n_sampled": 16,
         "n_with_topic": 14, "n_without_topic": 2},
    ]  # fmt: skip


# --- the real corpus (skipped where the data mirror is absent) ----------------------------


@pytest.fixture(scope="module")
def real_corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    if not REAL_CORPUS.exists():
        pytest.skip(f"{REAL_CORPUS} not available")
    return corpus.read_hippocorpus(REAL_CORPUS, TYPES)


def test_real_corpus_counts(real_corpus: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    stories, excluded = real_corpus
    assert len(stories) == 6854
    assert excluded.empty
    assert stories["story_id"].is_unique
    assert stories["story_type"].value_counts().to_dict() == {
        "recalled": 2779,
        "imagined": 2756,
        "retold": 1319,
    }
    no_topic = stories.loc[~stories["has_topic"], "story_type"].value_counts().to_dict()
    assert no_topic == {"recalled": 31, "retold": 14}
    assert stories["topic"].isna().sum() == 45


def test_real_corpus_half_sample(real_corpus: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    stories, excluded = real_corpus
    sample = corpus.sample_stories(stories, fraction=0.5, per_type=None, seed=2022)
    # round(1389.5) = 1390, round(659.5) = 660, 2756 / 2 = 1378
    counts = corpus.sample_counts(stories, sample, excluded, TYPES).set_index("story_type")
    assert counts["n_sampled"].to_dict() == {
        "recalled": 1390,
        "retold": 660,
        "imagined": 1378,
        "total": 3428,
    }
    assert counts.loc["total", "n_in_corpus"] == 6854
    assert (counts["n_with_topic"] + counts["n_without_topic"] == counts["n_sampled"]).all()
    assert counts.loc["imagined", "n_without_topic"] == 0  # every imagined story has a summary
    shuffled = stories.sample(frac=1, random_state=0)
    again = corpus.sample_stories(shuffled, fraction=0.5, per_type=None, seed=2022)
    pd.testing.assert_frame_equal(sample, again)
    small = corpus.sample_stories(stories, fraction=None, per_type=20, seed=2022)
    assert small["story_type"].value_counts().to_dict() == {t: 20 for t in TYPES}
    assert set(small["story_id"]) <= set(stories["story_id"])


def test_real_corpus_pairs_and_a_paired_sample(
    real_corpus: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """Every imagined story names the recalled story it was written from (recImgPairId) and
    1,310 retold stories the one they retell (recAgnPairId): each is that story's block. A
    paired sample draws recalled stories with both pairs and brings their pairs along."""
    stories, _ = real_corpus
    recalled = set(stories.loc[stories["story_type"] == "recalled", "story_id"])
    paired = stories[stories["block"].isin(recalled)]
    assert paired["story_type"].value_counts().to_dict() == {
        "recalled": 2779,
        "imagined": 2756,
        "retold": 1310,
    }
    sample = corpus.sample_stories(stories, per_type=25, seed=2022, paired=True)
    counts = sample["story_type"].value_counts()
    assert counts["recalled"] == 25 and counts["retold"] >= 25 and counts["imagined"] >= 25
    by_block = sample.groupby("block")["story_type"].nunique()
    assert len(by_block) == 25 and (by_block == 3).all()  # every block holds all three types
    again = corpus.sample_stories(stories.iloc[::-1], per_type=25, seed=2022, paired=True)
    pd.testing.assert_frame_equal(sample, again)
    with pytest.raises(StoryflowError, match="no pair columns"):
        corpus.sample_stories(stories.drop(columns="block"), per_type=5, seed=1, paired=True)


# --- download ------------------------------------------------------------------------------


def test_download_offline_gives_one_clear_error(tmp_path: Path) -> None:
    dest = tmp_path / "data" / "hippocorpus.csv"
    url = "http://127.0.0.1:9/x.zip"
    with pytest.raises(StoryflowError) as info:
        corpus.download_hippocorpus(url, dest)
    message = str(info.value)
    assert "seems to be offline" in message
    assert url in message
    assert "hippocorpus-u20220112.zip" in message
    assert f"put hippoCorpusV2.csv at {dest.absolute()} or set" in message
    assert "data.mirror" in message
    assert not dest.exists()


def test_download_from_zip(tmp_path: Path) -> None:
    archive = tmp_path / "hippocorpus-u20220112.zip"
    content = HEADER + "A1,w,recalled,It rained.,Rain,e,,\n"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("hippocorpus-u20220112/README.txt", "readme")
        zf.writestr("hippocorpus-u20220112/hippoCorpusV2.csv", content)
    dest = tmp_path / "out" / "hippocorpus.csv"
    corpus.download_hippocorpus(archive.as_uri(), dest)
    assert dest.read_text(encoding="utf-8") == content
    assert sorted(p.name for p in dest.parent.iterdir()) == ["hippocorpus.csv"]  # no leftovers
    stories, _ = corpus.read_hippocorpus(dest, TYPES)
    assert stories["story_id"].tolist() == ["A1"]


def test_download_bad_archives(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.zip"
    with zipfile.ZipFile(wrong, "w") as zf:
        zf.writestr("data/other.csv", "a,b\n")
    with pytest.raises(
        StoryflowError, match=r"holds no hippoCorpusV2.csv \(it holds data/other.csv\)"
    ):
        corpus.download_hippocorpus(wrong.as_uri(), tmp_path / "a.csv")
    not_zip = tmp_path / "page.zip"
    not_zip.write_text("<html>not found</html>")
    with pytest.raises(StoryflowError, match="is not a zip file"):
        corpus.download_hippocorpus(not_zip.as_uri(), tmp_path / "b.csv")
    assert not (tmp_path / "a.csv").exists()
    assert not (tmp_path / "b.csv").exists()
