"""Rule index_fabula_entropy: the readers' validity check, EWC/ETC per story, original vs
corrupted."""

import pandas as pd

from storyflow import tables
from storyflow.measures.fabula_entropy.compare import summarize
from storyflow.runner import run, save


def main(smk):
    humans = [pd.read_csv(path, dtype=str, keep_default_na=False) for path in smk.input.humans]
    results = summarize(
        tables.read(tables.STORIES, smk.input.stories),
        tables.read(tables.FEI_VERSIONS, smk.input.versions),
        tables.read(tables.FEI_QUESTIONS, smk.input.questions),
        tables.read_all(tables.FEI_ANSWERS, list(smk.input.answers)),
        corpus=smk.wildcards.corpus,
        kinds=smk.params.kinds,
        thresholds=smk.params.thresholds,
        calibration=smk.params.calibration,
        statistics=smk.params.statistics,
        index=smk.params.index,
        humans=humans[0] if humans else None,
        humans_source=str(smk.input.humans[0]) if humans else "",
    )
    save(
        smk.output,
        validity=results["validity"],
        readers=results["readers"],
        indices=results["indices"],
        comparison=results["comparison"],
        dose=results["dose"],
        measures=results["measures"],
    )


run(main, snakemake)
