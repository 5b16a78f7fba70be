# Replication: the config lookups and input functions of its rules (the other files of
# workflow/rules/replication/), kept apart from the rules as Snakemake's linter asks.
from storyflow.replication.papers import titles as paper_titles
from storyflow.contrast_answers.page import headlines_of as contrast_headlines_of
from storyflow.replication.summary import summary_of as replication_summary_of

REPLICATION_PAPERS = plan.replication.papers(config)
REPLICATION_TITLES = paper_titles()
# The last run's replication tallies in words, for the report's first page (workflow.rst); empty
# before the first run. Not a setting: it changes no job.
config["_replication_summary"] = replication_summary_of(
    {p: plan.replication.table(p) for p in REPLICATION_PAPERS},
    REPLICATION_TITLES,
    plan.replication.rates(config),
)


def replication_inputs(wildcards):
    """The files one paper's comparison reads, by name (storyflow.plan.replication.inputs)."""
    return exit_on_config_error(plan.replication.inputs, config, wildcards.paper)


def replication_settings(wildcards):
    return plan.replication.settings(config, wildcards.paper)


def replication_title(wildcards):
    return REPLICATION_TITLES.get(wildcards.paper, wildcards.paper)


def replication_measure(wildcards):
    """The measure that replicates the paper, in words, for the paper's page."""
    m = plan.registry.replicating(wildcards.paper)
    return f"{m.category} {m.summary} ({m.doc})"


# The answer to each corpus's contrasts (storyflow.plan.contrast_answers; rules in contrasts.smk).
ANSWERED_CORPORA = exit_on_config_error(plan.contrast_answers.corpora, config)
# The last run's contrast headlines, and which parts this study has, for the report's first page
# (workflow.rst); empty before the first run. Not settings: they change no job.
config["_contrast_headlines"] = contrast_headlines_of(
    [fill(plan.contrast_answers.TABLE, corpus=c) for c in ANSWERED_CORPORA]
)
config["_report_has"] = {
    "replication": bool(REPLICATION_PAPERS),
    "comparison": bool(plan.comparison.corpora(config)),
}


def contrast_answer_settings(wildcards):
    """What one corpus's contrast answers depend on (storyflow.plan.contrast_answers.settings)."""
    return plan.contrast_answers.settings(config, wildcards.corpus)


def contrast_separation(wildcards):
    """The comparison's separation table of the corpus, when the comparison runs on it."""
    return plan.contrast_answers.separation(config, wildcards.corpus)
