# What every rules file shares: the config (merged, validated), the models and corpora, the
# model lookups and the final target list. Each measure's own lookups live in
# workflow/rules/<measure>/common.smk; its decisions, result paths included, in its planning
# module (storyflow.plan.<measure>; docs/adding_a_measure.md).
import re
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version

from storyflow import config_files, plan, validity
from storyflow.corpora.selection import SAMPLED
from storyflow.errors import StoryflowError
from storyflow.lm.registry import model_specs
from storyflow.plan.layout import CORPUS as CORPUS_OUT
from storyflow.plan.layout import LM_COST as LM_COST_TABLE
from storyflow.plan.layout import VALIDITY as VALIDITY_TABLE

min_version("9.0")


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


def checked(decide, *args):
    """``decide(*args)`` at parse time; a config mistake ends the run with its message alone."""
    try:
        return decide(*args)
    except StoryflowError as err:
        logger.error(f"storyflow: {err}")
        sys.exit(1)


checked(plan.merge.resolve_alternatives, config, config_sources())
for _key in plan.merge.resolve_model_references(config, config_sources()):
    logger.info(
        f"storyflow: {_key} named models of an earlier config file: the role decides"
    )
# The schema's defaults are filled as Snakemake's validate fills them; a violation is one line
# naming the key, its value, its file, what is allowed and the fix (storyflow.config_files).
_schema_problem = config_files.schema_problem(
    config,
    Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml",
    named_config_sources(),
)
if _schema_problem is not None:
    logger.error(f"storyflow: {_schema_problem}")
    sys.exit(1)


MODEL_SPECS = checked(
    model_specs, config["models"]
)  # typed specs, defaults applied once
MODELS = list(MODEL_SPECS)
USER_CORPORA = list(config["corpora"])  # the user's CSV corpora (config `corpora:`)
SAMPLED_CORPORA = list(SAMPLED)  # HANNA, ROCStories (config `stories:`)
CORPORA = plan.sequentiality.corpora(config)  # the corpora every analysis starts from
# The last run's validity table in words, for the report's first page (workflow.rst); empty
# before the first run. Not a setting: it changes no job.
config["_validity_summary"] = validity.summary_of(VALIDITY_TABLE)


def one_of(names):
    """A wildcard constraint matching exactly ``names`` (nothing at all when it is empty)."""
    return "|".join(re.escape(name) for name in names) or "(?!)"


# Fetching data and models needs the internet, which cluster compute nodes often lack.
localrules:
    download_hippocorpus,
    materialize_model,


wildcard_constraints:
    corpus=one_of(CORPORA),
    model=one_of(MODELS),
    shard=r"\d{3}",


# --- models: the lookups every language-model rule uses


def model_source(wildcards):
    return dict(MODEL_SPECS[wildcards.model].source)


def model_settings(wildcards):
    """The model's settings that change what it answers or scores
    (storyflow.lm.registry.ModelSpec.scoring_settings): a rule's ``params.model``."""
    return MODEL_SPECS[wildcards.model].scoring_settings()


def weights_of(name):
    """Input: model ``name``'s GGUF (``gguf``) when it has local weights; nothing when served."""
    return {} if MODEL_SPECS[name].served else {"gguf": f"resources/models/{name}.gguf"}


def model_weights(wildcards):
    return weights_of(wildcards.model)


def final_outputs():
    """Every final table and figure the config asks for (rule all)."""
    return checked(plan.final_outputs, config)
