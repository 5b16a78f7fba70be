"""Rule check_plot_hole_detectors: the validity check of every plot-hole detector, NLI and
surprisal model on the controlled pairs (validation pool and corpora, pooled)."""

from storyflow.measures.plot_holes.validation import CheckSettings, check_detectors, sources
from storyflow.runner import run


def main(smk):
    table = check_detectors(
        sources(
            list(smk.input.made),
            list(smk.params.made_sources),
            list(smk.input.files),
            [tuple(label) for label in smk.params.file_labels],
        ),
        CheckSettings.from_params(smk.params.settings),
        surprisal_z=float(smk.params.surprisal_z),
    )
    table.to_csv(smk.output.validity, index=False)


run(main, snakemake)
