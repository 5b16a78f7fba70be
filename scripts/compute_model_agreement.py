"""Rule compute_model_agreement: does a model-dependent measure rank the stories alike
across models?"""

from storyflow import tables
from storyflow.comparison.correlation import model_agreement
from storyflow.runner import run


def main(smk):
    measures = tables.read_all(tables.STORY_MEASURES, smk.input.measures)
    result = model_agreement(
        measures,
        **smk.params.interval,
        verdicts=tables.read(tables.MEASURE_VERDICTS, smk.input.verdicts),
    )
    result.to_csv(smk.output.table, index=False)


run(main, snakemake)
