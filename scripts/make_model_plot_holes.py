"""Rule make_model_plot_holes: the paper's maker with a configured model, and the review sheet."""

from pathlib import Path

from storyflow import tables
from storyflow.lm.backends.llama_cpp import VocabOnly
from storyflow.lm.connect import open_answerer, open_sampler
from storyflow.lm.registry import ModelSpec
from storyflow.measures.plot_holes.llm_maker import MakerSettings, ModelMaker, make_with_model
from storyflow.measures.plot_holes.review import review_sheet
from storyflow.runner import run
from storyflow.sentences import load_spacy


def main(smk):
    spec = ModelSpec.from_config(smk.params.model)
    p = smk.params.settings
    settings = MakerSettings(
        prompts=p["prompts"],
        **{
            k: p[k]
            for k in (
                "max_propositions",
                "attempts",
                "max_changed",
                "judge_samples",
                "judge_min_yes",
                "temperature",
                "max_tokens",
            )
        },
        seed=int(smk.params.seed),
        min_sentences=int(smk.params.min_sentences),
    )
    n_ctx = int(smk.params.n_ctx)
    maker = ModelMaker(
        open_sampler(spec, smk.input.gguf, n_ctx=n_ctx, n_threads=smk.threads),
        open_answerer(spec, smk.input.gguf, n_ctx=n_ctx, n_threads=smk.threads),
        VocabOnly(smk.input.gguf).llm,
        spec.prompt,
        load_spacy(smk.params.spacy_model),
        settings,
    )
    made, skipped, attempts = make_with_model(
        maker,
        tables.read(tables.SENTENCES, smk.input.sentences),
        tables.read(tables.STORIES, smk.input.stories, needs=["story_id", "text"]),
        spec.name,
    )
    Path(smk.output.made).parent.mkdir(parents=True, exist_ok=True)
    made.to_parquet(smk.output.made, index=False)
    skipped.to_csv(smk.output.skipped, index=False)
    attempts.to_parquet(smk.output.attempts, index=False)
    review_sheet(made).to_csv(smk.output.sheet, index=False)


run(main, snakemake)
