# Narrative-sense relations: story-level PMI of content-word pairs (docs/narrative_sense.md).


include: "narrative_sense/common.smk"


rule lemmatize_stories:
    input:
        data=ns_source_input,
    output:
        lemmas=NARRATIVE_SENSE_OUT.shared("lemmas/{source}.parquet"),
    log:
        "logs/narrative_sense/lemmatize_stories_{source}.log",
    wildcard_constraints:
        source=one_of(NS_SOURCES),
    conda:
        "../../envs/storyflow.yaml"
    params:
        settings=ns_source_settings,
        spacy_model=config["sentences"]["spacy_model"],
    script:
        "../../scripts/lemmatize_stories.py"


rule count_word_pairs:
    input:
        lemmas=expand(
            NARRATIVE_SENSE_OUT.shared("lemmas/{source}.parquet"),
            source=NS["reference"],
        ),
    output:
        pairs=NARRATIVE_SENSE_OUT.shared("pmi.parquet"),
        vocabulary=NARRATIVE_SENSE_OUT.shared("vocabulary.parquet"),
    log:
        "logs/narrative_sense/count_word_pairs.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        min_stories=NS["min_stories"],
        reference_max_tokens=NS["reference_max_tokens"],
    script:
        "../../scripts/count_word_pairs.py"


rule score_narrative_sense:
    input:
        unpack(ns_score_inputs),
    output:
        scores=NARRATIVE_SENSE_OUT("story_scores.parquet"),
        table=report(
            NARRATIVE_SENSE_OUT.table("narrative_sense.csv"),
            caption="../report/narrative_sense_table.rst",
            category="Narrative sense",
            subcategory="{corpus}",
        ),
        excluded=NARRATIVE_SENSE_OUT.table("excluded_stories.csv"),
    log:
        "logs/{corpus}/score_narrative_sense.log",
    wildcard_constraints:
        corpus=one_of(NS_TARGETS),
    conda:
        "../../envs/storyflow.yaml"
    params:
        max_tokens=NS["max_tokens"],
        min_tokens=NS["min_tokens"],
        top_pairs=NS["top_pairs"],
        random_story=NS["random_story"],
        alpha=NS["alpha"],
        seed=NS["seed"],
        cross_fitted=ns_cross_fitted,
        folds=NS["folds"],
        reference_max_tokens=NS["reference_max_tokens"],
        min_stories=NS["min_stories"],
    script:
        "../../scripts/score_narrative_sense.py"


rule plot_pair_scores:
    input:
        scores=NARRATIVE_SENSE_OUT("story_scores.parquet"),
    output:
        png=report(
            NARRATIVE_SENSE_OUT.figure("pair_scores.png"),
            caption="../report/pair_scores_figure.rst",
            category="Narrative sense",
            subcategory="{corpus}",
        ),
        pdf=NARRATIVE_SENSE_OUT.figure("pair_scores.pdf"),
    log:
        "logs/{corpus}/plot_pair_scores.log",
    wildcard_constraints:
        corpus=one_of(NS_TARGETS),
    conda:
        "../../envs/storyflow.yaml"
    params:
        top_pairs=NS["top_pairs"],
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_pair_scores.py"


rule collect_narrative_sense_measures:
    input:
        scores=NARRATIVE_SENSE_OUT("story_scores.parquet"),
    output:
        measures=NARRATIVE_SENSE_OUT("story_measures.parquet"),
    log:
        "logs/{corpus}/collect_narrative_sense_measures.log",
    wildcard_constraints:
        corpus=one_of(NS_TARGETS),
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/collect_narrative_sense_measures.py"
