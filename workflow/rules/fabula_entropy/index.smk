# Fabula entropy, stage 3: the readers' checks, the EWC and ETC indices, original vs corrupted.


rule index_fabula_entropy:
    input:
        stories=plan.corpus.STORIES,
        versions=plan.fabula_entropy.VERSIONS,
        questions=plan.fabula_entropy.QUESTIONS,
        answers=fabula_entropy_answers,
        humans=fabula_entropy_human_answers,
    output:
        validity=plan.fabula_entropy.VALIDITY,
        readers=report(
            plan.fabula_entropy.READERS,
            caption="../../report/fabula_entropy_readers.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        indices=plan.fabula_entropy.STORY_INDICES,
        comparison=report(
            plan.fabula_entropy.COMPARISON,
            caption="../../report/fabula_entropy_comparison.rst",
            category="Fabula entropy",
            subcategory="{corpus}",
        ),
        dose=plan.fabula_entropy.DOSE_RESPONSE,
        measures=plan.fabula_entropy.STORY_MEASURES,
    log:
        plan.fabula_entropy.OUT.log("index_fabula_entropy"),
    wildcard_constraints:
        corpus=one_of(FABULA_ENTROPY_CORPORA),
    conda:
        "../../../envs/storyflow.yaml"
    params:
        kinds=fabula_entropy_kinds,
        thresholds=FABULA_ENTROPY_READER_THRESHOLDS,
        calibration=FABULA_ENTROPY_READING["calibration"],
        statistics=FABULA_ENTROPY_STATISTICS,
        index=FABULA_ENTROPY_INDEX,
    script:
        "../../../scripts/index_fabula_entropy.py"
