# What every rules file shares: the config (merged, validated), the models and corpora, the rules
# files to include and the final target list. Each folder of workflow/rules/ is one stage or
# measure (storyflow.plan.registry): its common.smk holds its lookups, its other files its rules
# by stage; its decisions and file names are in its planning module (storyflow.plan.<name>;
# docs/adding_a_measure.md).
import re
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version

from storyflow import config_files, plan, validity, versions
from storyflow.corpora.selection import SAMPLED
from storyflow.errors import StoryflowError
from storyflow.plan.layout import LM_COST as LM_COST_TABLE
from storyflow.plan.layout import VALIDITY as VALIDITY_TABLE
from storyflow.plan.layout import fill

min_version("9.0")

# The storyflow checkout these rules come from: two folders up from this file. Not
# workflow.basedir, which is the folder of the *main* Snakefile: another workflow that uses this
# one as a module (`module storyflow: snakefile: ...`, docs/howto/install.md, "storyflow as a
# Snakemake module") has its own folder there. A local checkout is needed: the rules files are
# listed from this folder.
STORYFLOW_ROOT = Path(
    workflow.current_basedir.get_path_or_uri(secret_free=False)
).parents[1]


def named_config_sources():
    """(file, mapping) of each config source in the order Snakemake merged them, the
    command line's ``--config`` last (messages name the file that set a wrong key)."""
    import yaml

    user = [Path(f).resolve() for f in workflow.config_settings.configfiles]
    own = [f for f in workflow.configfiles if Path(f).resolve() not in user]
    files = [*own, *user]
    return [(str(f), yaml.safe_load(Path(f).read_text())) for f in files] + [
        (config_files.COMMAND_LINE, workflow.config_settings.config)
    ]


def config_sources():
    """The config mappings in the order Snakemake merged them (for either/or keys)."""
    return [mapping for _, mapping in named_config_sources()]


def exit_on_config_error(decide, *args):
    """``decide(*args)`` at parse time; a config mistake ends the run with its message alone."""
    try:
        return decide(*args)
    except StoryflowError as err:
        logger.error(f"storyflow: {err}")
        sys.exit(1)


CONFIG_SCHEMA = STORYFLOW_ROOT / "workflow" / "schemas" / "config.schema.yaml"
# --config 'data={"mirror": null}' means null where the schema allows it (Snakemake passes the
# nested value on as the text "null").
config_files.command_line_nulls(config, CONFIG_SCHEMA, workflow.config_settings.config)
exit_on_config_error(plan.merge.resolve_alternatives, config, config_sources())
for _key in plan.merge.resolve_model_references(config, config_sources()):
    logger.info(
        f"storyflow: {_key} named models of an earlier config file: the role decides"
    )
# The schema's defaults are filled as Snakemake's validate fills them; a violation is one line
# naming the key, its value, its file, what is allowed and the fix (storyflow.config_files).
_schema_problem = config_files.schema_problem(
    config, CONFIG_SCHEMA, named_config_sources()
)
if _schema_problem is not None:
    logger.error(f"storyflow: {_schema_problem}")
    sys.exit(1)
# `measures: [...]` switches the measures it names on and the others off (plan.merge).
exit_on_config_error(plan.merge.apply_measures, config)


MODEL_SPECS = exit_on_config_error(
    plan.models.specs, config
)  # typed specs, defaults applied once, sources checked on this machine
for _note in plan.models.shared_weights(MODEL_SPECS):
    logger.info(f"storyflow: {_note}")
MODELS = list(MODEL_SPECS)
exit_on_config_error(plan.corpus.check_names, config)
USER_CORPORA = plan.corpus.user_corpora(
    config
)  # the user's CSV corpora (config `corpora:`)
SAMPLED_CORPORA = list(SAMPLED)  # HANNA, ROCStories (config `stories:`)
CORPORA = exit_on_config_error(
    plan.sequentiality.corpora, config
)  # the corpora of sequentiality (sequentiality.corpora)
# The statistics settings every measure shares (storyflow.plan.statistics): a rule's params take
# the ones its job depends on.
STATISTICS = plan.statistics.settings(config)
# The versions of storyflow and its libraries that plan the run: rule record_run's params, so
# that a new version rewrites the run record (results/run.csv) and nothing else.
RUN_VERSIONS = versions.planned()
# How figures are drawn, and the spaCy pipeline every text rule uses (storyflow.plan).
FIGURES = plan.figure_settings(config)
SPACY_MODEL = plan.spacy_model(config)
# The last run's validity table in words, for the report: which models passed (its first page,
# workflow.rst) and every check (the Validity caption); empty before the first run. Not a
# setting: it changes no job.
config["_validity_summary"] = validity.summary_of(VALIDITY_TABLE)


def one_of(names):
    """A wildcard constraint matching exactly ``names`` (nothing at all when it is empty)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


# Fetching data and models needs the internet, which cluster compute nodes often lack.
localrules:
    download_hippocorpus,
    materialize_model,
    materialize_checkpoint,


wildcard_constraints:
    corpus=one_of(CORPORA),
    model=one_of(MODELS),
    shard=r"\d{3}",


def rule_files():
    """The rules files the Snakefile includes: for each folder of workflow/rules/ in the
    registry's order (storyflow.plan.registry.rule_folders), its lookups (common.smk) first,
    then its stages' rules files."""
    rules = STORYFLOW_ROOT / "workflow" / "rules"
    files = []
    for folder in plan.registry.rule_folders():
        lookups = rules / folder / "common.smk"
        files += [lookups] if lookups.is_file() else []
    for folder in plan.registry.rule_folders():
        files += sorted(
            f for f in (rules / folder).glob("*.smk") if f.name != "common.smk"
        )
    return [str(f) for f in files]


def final_outputs():
    """Every final table and figure the config asks for (rule all)."""
    return exit_on_config_error(plan.final_outputs, config)
