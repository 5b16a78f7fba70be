# Narrative-sense relations: story-level PMI of content-word pairs (docs/narrative_sense.md).


rule lemmatize_stories:
    input:
        data=ns_source_input,
    output:
        lemmas="results/narrative_sense/lemmas/{source}.parquet",
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
            "results/narrative_sense/lemmas/{source}.parquet", source=NS["reference"]
        ),
    output:
        pairs="results/narrative_sense/pmi.parquet",
        vocabulary="results/narrative_sense/vocabulary.parquet",
    log:
        "logs/narrative_sense/count_word_pairs.log",
    conda:
        "../../envs/storyflow.yaml"
    params:
        min_stories=NS["min_stories"],
    script:
        "../../scripts/count_word_pairs.py"


rule score_narrative_sense:
    input:
        pairs="results/narrative_sense/pmi.parquet",
        vocabulary="results/narrative_sense/vocabulary.parquet",
        lemmas="results/narrative_sense/lemmas/{target}.parquet",
    output:
        scores="results/{target}/narrative_sense/story_scores.parquet",
        table=report(
            "results/{target}/tables/narrative_sense.csv",
            caption="../report/narrative_sense_table.rst",
            category="Narrative sense",
            subcategory="{target}",
        ),
    log:
        "logs/{target}/score_narrative_sense.log",
    wildcard_constraints:
        target=one_of(NS["targets"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        max_tokens=NS["max_tokens"],
        top_pairs=NS["top_pairs"],
        alpha=NS["alpha"],
        seed=NS["seed"],
    script:
        "../../scripts/score_narrative_sense.py"


rule plot_pair_scores:
    input:
        scores="results/{target}/narrative_sense/story_scores.parquet",
    output:
        png=report(
            "results/{target}/figures/pair_scores.png",
            caption="../report/pair_scores_figure.rst",
            category="Narrative sense",
            subcategory="{target}",
        ),
        pdf="results/{target}/figures/pair_scores.pdf",
    log:
        "logs/{target}/plot_pair_scores.log",
    wildcard_constraints:
        target=one_of(NS["targets"]),
    conda:
        "../../envs/storyflow.yaml"
    params:
        top_pairs=NS["top_pairs"],
        dpi=config["figures"]["dpi"],
    script:
        "../../scripts/plot_pair_scores.py"


rule collect_narrative_sense_measures:
    input:
        scores="results/{target}/narrative_sense/story_scores.parquet",
    output:
        measures="results/{target}/narrative_sense/story_measures.parquet",
    log:
        "logs/{target}/collect_narrative_sense_measures.log",
    wildcard_constraints:
        target=one_of(NS["targets"]),
    conda:
        "../../envs/storyflow.yaml"
    script:
        "../../scripts/collect_narrative_sense_measures.py"
