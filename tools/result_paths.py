"""Old result paths (before the one-layout change) to new ones.

``python tools/result_paths.py OLD_RESULTS NEW_RESULTS`` compares two result trees made by the
workflow before and after the layout change (docs/architecture.md, "Results"): each table of the
old tree must be in the new tree at its new path, byte for byte. ``--same-layout`` compares two
trees of the same layout (each file at the same path: a change that must leave the results as
they were). Figures (PNG, PDF) are listed
but not compared (matplotlib stamps them), and a table that differs only in its measured-time
columns (:data:`TIMING`) is counted apart; the per-rule logs are not results. The exit status
is 1 when a table differs otherwise or is missing. ``new_path`` is also what README's migration
note describes.
"""

from __future__ import annotations

import filecmp
import re
import sys
from pathlib import Path

import pandas as pd

#: Per-corpus files that moved into a measure's folder, one per line: a pattern on the path
#: inside results/<corpus>/ and its replacement. The first match wins.
CORPUS_MOVES = [
    tuple(line.split())
    for line in r"""
    ^(stories|sentences)\.parquet$ corpus/\1.parquet
    ^tables/(sample_counts|sentence_counts|excluded_stories|point_of_view).csv$ corpus/tables/\1.csv
    ^tables/(narrative_sense)\.csv$ narrative_sense/tables/\1.csv
    ^tables/(measure_\w+|model_agreement)\.csv$ comparison/tables/\1.csv
    ^tables/(.+)$ sequentiality/tables/\1
    ^figures/(pair_scores\.\w+)$ narrative_sense/figures/\1
    ^figures/(measure_\w+\.\w+)$ comparison/figures/\1
    ^figures/tension_curves/(.+)$ tension/figures/curves/\1
    ^figures/tension_(\w+\.\w+)$ tension/figures/\1
    ^figures/(.+)$ sequentiality/figures/\1
    ^nll/(.+)$ sequentiality/nll/\1
    ^sequentiality/story_measures\.parquet$ sequentiality/story_measures.parquet
    ^sequentiality/(.+)$ sequentiality/scores/\1
    ^covariates\.parquet$ sequentiality/covariates.parquet
    ^measures\.parquet$ comparison/measures.parquet
    """.strip().splitlines()
]

#: The run-wide tables, which stay where they were.
RUN_WIDE = ("validity.csv", "lm_cost.csv")

#: Folders of results/ that belong to a measure, not to a corpus.
SHARED = ("narrative_sense", "tension", "plot_holes")


def _tables_first(path: str) -> str:
    """``<measure>/a/b.csv`` -> ``<measure>/tables/a/b.csv``: every CSV in its tables/ folder."""
    head, _, rest = path.partition("/")
    if not path.endswith(".csv") or rest.startswith("tables/") or not rest:
        return path
    if head == "plot_holes" and rest.startswith("validation/"):
        inner = rest.removeprefix("validation/")
        return path if inner.startswith("tables/") else f"plot_holes/validation/tables/{inner}"
    return f"{head}/tables/{rest}"


def new_path(old: str) -> str:
    """The path under results/ where the file that lay at ``old`` (relative to results/) lies
    now."""
    if old in RUN_WIDE:
        return old
    head, _, rest = old.partition("/")
    if head in SHARED:
        return _tables_first(old)
    for pattern, replacement in CORPUS_MOVES:
        if re.match(pattern, rest):
            return f"{head}/{_tables_first(re.sub(pattern, replacement, rest))}"
    return f"{head}/{_tables_first(rest)}"


#: Columns that hold measured time, which differs between any two runs.
TIMING = ("seconds", "answers_per_second", "tokens_per_second", "wall_s")


def _how_it_differs(old: Path, new: Path) -> str:
    """``differs``, or for a CSV table ``same rows, other order`` or ``timing only`` (the
    difference lies only in the measured-time columns of :data:`TIMING`)."""
    if old.suffix != ".csv":
        return "differs"
    a, b = pd.read_csv(old, dtype=str), pd.read_csv(new, dtype=str)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return "differs"
    if (
        a.sort_values(list(a.columns))
        .reset_index(drop=True)
        .equals(b.sort_values(list(b.columns)).reset_index(drop=True))
    ):
        return "same rows, other order"
    kept = [c for c in a.columns if c not in TIMING]
    return "timing only" if a[kept].equals(b[kept]) else "differs"


def compare(old_root: Path, new_root: Path, same_layout: bool = False) -> int:
    """Print one line per difference and a summary; return the number of tables that differ
    or are missing. ``same_layout``: each file is expected at the same path."""
    bad = same = figures = timing = 0
    seen = set()
    for old in sorted(p for p in old_root.rglob("*") if p.is_file()):
        relative = old.relative_to(old_root).as_posix()
        if "/.progress/" in f"/{relative}":
            continue
        target = relative if same_layout else new_path(relative)
        seen.add(target)
        new = new_root / target
        if old.suffix in (".png", ".pdf"):
            figures += 1
            if not new.is_file():
                print(f"missing figure: {relative} -> {target}")
                bad += 1
            continue
        if not new.is_file():
            print(f"missing: {relative} -> {target}")
            bad += 1
        elif not filecmp.cmp(old, new, shallow=False):
            how = _how_it_differs(old, new)
            print(f"{how}: {relative} -> {target}")
            timing += how == "timing only"
            bad += how != "timing only"
        else:
            same += 1
    extra = [
        p.relative_to(new_root).as_posix()
        for p in new_root.rglob("*")
        if p.is_file() and p.relative_to(new_root).as_posix() not in seen
    ]
    for path in sorted(extra):
        print(f"new file: {path}")
    print(
        f"{same} tables identical byte for byte, {timing} differing only in measured time, "
        f"{figures} figures present, {bad} missing or different, {len(extra)} files only in the "
        "new tree"
    )
    return bad


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--same-layout"]
    if len(arguments) != 2:
        sys.exit(__doc__)
    same = "--same-layout" in sys.argv[1:]
    sys.exit(1 if compare(Path(arguments[0]), Path(arguments[1]), same) else 0)
