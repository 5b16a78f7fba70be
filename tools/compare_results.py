"""Compare two results/ trees file by file: byte-identical, equal in content, or different.

    .venv/bin/python tools/compare_results.py BEFORE/results AFTER/results

Tables are compared byte for byte first; Parquet and CSV files that differ in bytes are read and
compared exactly (every value and dtype), then with a tolerance (``--atol``, for reporting only).
Figures (PNG, PDF) are compared byte for byte (a PDF embeds its creation time). Files present on
one side only are listed. Exit status 1 when any table differs in content.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def max_difference(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Largest absolute difference over the numeric columns (inf when the shapes differ)."""
    if a.shape != b.shape or list(a.columns) != list(b.columns):
        return float("inf")
    worst = 0.0
    for column in a.columns:
        x, y = pd.to_numeric(a[column], errors="coerce"), pd.to_numeric(b[column], errors="coerce")
        if x.notna().any():
            diff = np.abs(x.to_numpy(float) - y.to_numpy(float))
            worst = max(worst, float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0)
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    files = {
        p.relative_to(root)
        for root in (args.before, args.after)
        for p in root.rglob("*")
        if p.is_file()
    }
    counts = {"identical bytes": 0, "equal content": 0, "different": 0, "figure bytes differ": 0}
    failed = False
    for rel in sorted(files):
        a, b = args.before / rel, args.after / rel
        if not a.exists() or not b.exists():
            print(f"only {'after' if b.exists() else 'before'}: {rel}")
            continue
        if filecmp.cmp(a, b, shallow=False):
            counts["identical bytes"] += 1
            continue
        if rel.suffix in (".png", ".pdf"):
            counts["figure bytes differ"] += 1
            print(f"figure bytes differ: {rel}")
            continue
        x, y = read(a), read(b)
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=True)
            counts["equal content"] += 1
            print(f"equal content, other bytes: {rel}")
        except AssertionError:
            failed = True
            counts["different"] += 1
            print(f"DIFFERENT: {rel} (max abs difference {max_difference(x, y):.3g})")
    print(", ".join(f"{n} {what}" for what, n in counts.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
