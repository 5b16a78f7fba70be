"""Rule compare_models: does a model-dependent measure rank the stories alike across models?"""

from pathlib import Path

from storyflow import tables
from storyflow.comparison.correlation import model_agreement
from storyflow.runner import run


def main(smk):
    measures = tables.read_all(tables.STORY_MEASURES, smk.input.measures)
    result = model_agreement(
        measures,
        n_resamples=smk.params.bootstrap,
        confidence=smk.params.confidence,
        seed=smk.params.seed,
        verdicts=tables.read(tables.MEASURE_VERDICTS, smk.input.verdicts),
    )
    Path(smk.output.table).parent.mkdir(parents=True, exist_ok=True)
    result.to_csv(smk.output.table, index=False)


run(main, snakemake)
