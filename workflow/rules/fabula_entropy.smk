# Fabula Entropy Indexing with language-model readers: EWC and ETC on original vs corrupted
# stories (docs/fabula_entropy.md).


include: "fabula_entropy_common.smk"


rule make_fabula_items:
    input:
        stories="results/{corpus}/stories.parquet",
        sentences="results/{corpus}/sentences.parquet",
        lexicon=fei_lexicon(),
    output:
        versions="results/{corpus}/fabula_entropy/versions.parquet",
        questions="results/{corpus}/fabula_entropy/questions.parquet",
        corruptions="results/{corpus}/fabula_entropy/corruptions.parquet",
        excluded="results/{corpus}/fabula_entropy/excluded.csv",
    log:
        "logs/{corpus}/fabula_entropy/make_fabula_items.log",
    wildcard_constraints:
        corpus=one_of(FEI_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        settings=fei_items,
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/make_fabula_items.py"


rule answer_fabula_questions:
    input:
        unpack(model_weights),
        versions="results/{corpus}/fabula_entropy/versions.parquet",
        questions="results/{corpus}/fabula_entropy/questions.parquet",
    output:
        answers="results/{corpus}/fabula_entropy/answers/{model}.parquet",
        cost="results/{corpus}/fabula_entropy/cost/{model}.csv",
    log:
        "logs/{corpus}/fabula_entropy/answer_fabula_questions/{model}.log",
    wildcard_constraints:
        corpus=one_of(FEI_CORPORA),
        model=one_of(FEI_READERS),
    conda:
        "../../envs/storyflow.yaml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        model=model_scoring,
        reading=plan.fabula_entropy_reading(config),
        n_gpu_layers=config["nll"]["n_gpu_layers"],
    script:
        "../../scripts/answer_fabula_questions.py"


rule index_fabula_entropy:
    input:
        stories="results/{corpus}/stories.parquet",
        versions="results/{corpus}/fabula_entropy/versions.parquet",
        questions="results/{corpus}/fabula_entropy/questions.parquet",
        answers=fei_answers,
        humans=fei_human_answers,
    output:
        validity="results/{corpus}/fabula_entropy/validity.csv",
        readers=report(
            "results/{corpus}/fabula_entropy/readers.csv",
            caption="../report/fabula_entropy_readers.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        indices="results/{corpus}/fabula_entropy/story_indices.parquet",
        comparison=report(
            "results/{corpus}/fabula_entropy/comparison.csv",
            caption="../report/fabula_entropy_comparison.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose="results/{corpus}/fabula_entropy/dose_response.csv",
        measures="results/{corpus}/fabula_entropy/story_measures.parquet",
    log:
        "logs/{corpus}/fabula_entropy/index_fabula_entropy.log",
    wildcard_constraints:
        corpus=one_of(FEI_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        kinds=fei_kinds,
        thresholds=config["validity"]["reader"],
        calibration=FEI["calibration"],
        statistics=fei_statistics(),
    script:
        "../../scripts/index_fabula_entropy.py"


rule plot_fabula_entropy:
    input:
        indices="results/{corpus}/fabula_entropy/story_indices.parquet",
        dose="results/{corpus}/fabula_entropy/dose_response.csv",
    output:
        distributions=report(
            "results/{corpus}/fabula_entropy/figures/distributions.png",
            caption="../report/fabula_entropy_distributions.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        distributions_pdf="results/{corpus}/fabula_entropy/figures/distributions.pdf",
        dose=report(
            "results/{corpus}/fabula_entropy/figures/dose_response.png",
            caption="../report/fabula_entropy_dose_response.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose_pdf="results/{corpus}/fabula_entropy/figures/dose_response.pdf",
    log:
        "logs/{corpus}/fabula_entropy/plot_fabula_entropy.log",
    wildcard_constraints:
        corpus=one_of(FEI_CORPORA),
    conda:
        "../../envs/storyflow.yaml"
    params:
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_fabula_entropy.py"
