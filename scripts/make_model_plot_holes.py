"""Rule make_model_plot_holes: the paper's maker with a configured model, and the review sheet."""

from storyflow import tables
from storyflow.lm.connect import job_spec, open_model
from storyflow.measures.plot_holes.llm_maker import MakerSettings, ModelMaker, make_with_model
from storyflow.measures.plot_holes.review import review_sheet
from storyflow.runner import run
from storyflow.sentences import load_spacy


def main(smk):
    p = smk.params
    model = open_model(
        job_spec(p.model, smk.config["models"]),
        smk.input.get("gguf"),
        n_ctx=2048,  # sized to the stories before the weights load (llm_maker.maker_window)
        n_threads=smk.threads,
    )
    settings = MakerSettings.from_params(p.settings, seed=p.seed, min_sentences=p.min_sentences)
    maker = ModelMaker(model, load_spacy(p.spacy_model), settings)
    made, skipped, attempts = make_with_model(
        maker,
        tables.read(tables.SENTENCES, smk.input.sentences),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"]),
        model.name,
    )
    made.to_parquet(smk.output.made, index=False)
    skipped.to_csv(smk.output.skipped, index=False)
    attempts.to_parquet(smk.output.attempts, index=False)
    review_sheet(made).to_csv(smk.output.sheet, index=False)


run(main, snakemake)
