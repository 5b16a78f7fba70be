# Fabula Entropy Indexing with language-model readers: EWC and ETC on original vs corrupted
# stories (docs/fabula_entropy.md).


include: "fabula_entropy/common.smk"


rule make_fabula_items:
    input:
        stories=CORPUS_OUT("stories.parquet"),
        sentences=CORPUS_OUT("sentences.parquet"),
        lexicon=fei_lexicon(),
    output:
        versions=FABULA_ENTROPY_OUT("versions.parquet"),
        questions=FABULA_ENTROPY_OUT("questions.parquet"),
        corruptions=FABULA_ENTROPY_OUT("corruptions.parquet"),
        excluded=FABULA_ENTROPY_OUT.table("excluded.csv"),
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
        versions=FABULA_ENTROPY_OUT("versions.parquet"),
        questions=FABULA_ENTROPY_OUT("questions.parquet"),
    output:
        answers=FABULA_ENTROPY_OUT("answers/{model}.parquet"),
        cost=FABULA_ENTROPY_OUT.table("cost/{model}.csv"),
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
        model=model_settings,
        reading=plan.fabula_entropy.reading(config),
        n_gpu_layers=config["nll"]["n_gpu_layers"],
    script:
        "../../scripts/answer_fabula_questions.py"


rule index_fabula_entropy:
    input:
        stories=CORPUS_OUT("stories.parquet"),
        versions=FABULA_ENTROPY_OUT("versions.parquet"),
        questions=FABULA_ENTROPY_OUT("questions.parquet"),
        answers=fei_answers,
        humans=fei_human_answers,
    output:
        validity=FABULA_ENTROPY_OUT.table("validity.csv"),
        readers=report(
            FABULA_ENTROPY_OUT.table("readers.csv"),
            caption="../report/fabula_entropy_readers.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        indices=FABULA_ENTROPY_OUT("story_indices.parquet"),
        comparison=report(
            FABULA_ENTROPY_OUT.table("comparison.csv"),
            caption="../report/fabula_entropy_comparison.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose=FABULA_ENTROPY_OUT.table("dose_response.csv"),
        measures=FABULA_ENTROPY_OUT("story_measures.parquet"),
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
        index=FEI_INDEX,
    script:
        "../../scripts/index_fabula_entropy.py"


rule plot_fabula_entropy:
    input:
        indices=FABULA_ENTROPY_OUT("story_indices.parquet"),
        dose=FABULA_ENTROPY_OUT.table("dose_response.csv"),
    output:
        distributions=report(
            FABULA_ENTROPY_OUT.figure("distributions.png"),
            caption="../report/fabula_entropy_distributions.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        distributions_pdf=FABULA_ENTROPY_OUT.figure("distributions.pdf"),
        dose=report(
            FABULA_ENTROPY_OUT.figure("dose_response.png"),
            caption="../report/fabula_entropy_dose_response.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose_pdf=FABULA_ENTROPY_OUT.figure("dose_response.pdf"),
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
