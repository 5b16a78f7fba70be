"""Narrative sense: the shares above the threshold under each random-story weighting and seed.

    .venv/bin/python benchmarks/narrative_sense_shares.py --results results --corpus hanna \
        --seeds 2022 1 2 3 4 5 6 7 8 9

Reads a finished run's narrative-sense tables (``results/narrative_sense/lemmas/<corpus>.parquet``,
``pmi.parquet`` and ``vocabulary.parquet``) and tests the corpus's stories again, as rule
score_narrative_sense does (the short-set filter, the 150-token cut, the rank-sum test against
a random story), once per weighting of the random story's draw (``stories``, ``tokens``,
``uniform``: ``storyflow.measures.narrative_sense.threshold.WEIGHTINGS``) and per seed. A corpus
that is also a reference (``--reference`` holds it) is cross-fitted in ``--folds`` folds against
the other references' lemma tables, as the rule does. Nothing is re-lemmatized, so a pass costs
seconds to minutes.

It prints, per group, the stories above the threshold of those tested: for each weighting the
mean over seeds, the range, and the share at the first seed; and writes the figures to
``benchmarks/out/narrative_sense_shares-<corpus>.json``. The measurements behind
docs/narrative_sense.md ("Results": (b) and the seed spread) are these tables.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def tested_groups(args: argparse.Namespace, weighting: str, seed: int) -> pd.DataFrame:
    """The group table (``threshold.group_table``) of one weighting and seed."""
    from storyflow import tables
    from storyflow.measures.narrative_sense import length_filter, pmi, threshold

    folder = args.results / "narrative_sense"
    lemmas = tables.read(tables.LEMMAS, folder / "lemmas" / f"{args.corpus}.parquet")
    excluded = length_filter.short_sets(lemmas, args.min_tokens)
    settings = dict(top_pairs=args.top_pairs, weighting=weighting, alpha=args.alpha, seed=seed)
    if args.corpus in args.reference and args.folds:
        others = [
            folder / "lemmas" / f"{name}.parquet" for name in args.reference if name != args.corpus
        ]
        tested = threshold.assess_cross_fitted(
            lemmas,
            excluded,
            tables.read_all(tables.LEMMAS, [str(p) for p in others]) if others else None,
            folds=args.folds,
            max_tokens=args.max_tokens,
            reference_max_tokens=args.max_tokens,
            min_stories=args.min_stories,
            **settings,
        )
    else:
        table = pmi.PairTable.load(folder / "pmi.parquet", folder / "vocabulary.parquet")
        tested = threshold.assess(
            pmi.truncate(lemmas, args.max_tokens), excluded, table, **settings
        )
    return threshold.group_table(tested)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--corpus", default="hanna")
    parser.add_argument(
        "--reference", nargs="+", default=["hippocorpus", "rocstories"],
        help="the run's narrative_sense.reference (a corpus among them is cross-fitted)",
    )  # fmt: skip
    parser.add_argument("--folds", type=int, default=2, help="narrative_sense.folds")
    parser.add_argument("--weightings", nargs="+", default=["stories", "tokens", "uniform"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[2022])
    parser.add_argument("--alpha", type=float, default=0.10)
    parser.add_argument("--top-pairs", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=150)
    parser.add_argument("--min-tokens", type=int, default=150)
    parser.add_argument("--min-stories", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    began = time.perf_counter()
    rows = []
    for weighting in args.weightings:
        for seed in args.seeds:
            groups = tested_groups(args, weighting, seed)
            for g in groups.itertuples(index=False):
                rows.append(
                    {
                        "weighting": weighting,
                        "seed": seed,
                        "group": g.group,
                        "n_exceeding": int(g.n_exceeding),
                        "n_tested": int(g.n_tested),
                    }
                )
    frame = pd.DataFrame(rows)
    wall = time.perf_counter() - began
    lines = [
        f"narrative sense, {args.corpus}: {len(args.weightings)} weightings x "
        f"{len(args.seeds)} seeds ({', '.join(map(str, args.seeds))}), reference "
        f"{', '.join(args.reference)}, {wall:.0f} s",
        f"{'group':<20}{'weighting':<10}{'mean':>7}{'share':>8}{'range':>9}"
        f"{'first seed':>14}{'tested':>8}",
    ]
    first = args.seeds[0]
    for (group, weighting), part in frame.groupby(["group", "weighting"], sort=False):
        counts = part["n_exceeding"]
        tested = int(part["n_tested"].iloc[0])
        at_first = int(part.loc[part["seed"] == first, "n_exceeding"].iloc[0])
        lines.append(
            f"{group:<20}{weighting:<10}{counts.mean():>7.1f}{counts.mean() / tested:>8.1%}"
            f"{f'{counts.min()}-{counts.max()}':>9}{f'{at_first} ({at_first / tested:.1%})':>14}"
            f"{tested:>8}"
        )
    text = "\n".join(lines)
    print(text)
    figures = {"corpus": args.corpus, "rows": rows, "wall_s": wall, "printed": text}
    (args.out / f"narrative_sense_shares-{args.corpus}.json").write_text(
        json.dumps(figures, indent=2)
    )


if __name__ == "__main__":
    main()
