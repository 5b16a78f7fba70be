"""The tables passed between rules, each defined once: its columns, their dtypes and meaning.

Every intermediate of the workflow is a file (Parquet, or CSV for the human-readable tables
under ``results/<corpus>/<measure>/tables/``). A rule that writes one builds it with
:meth:`Table.frame` or checks it with :meth:`Table.check`; a rule that reads one goes through
:func:`read`, which stops with one message naming the file, the missing columns and the columns
found. One module per stage or measure defines its tables; this package imports them all.

Units: NLLs and sequentiality are in nats per token (natural log); ``n_tokens`` counts the
scoring model's tokens; ``history`` is a label, ``"0"`` .. ``"H"`` or ``"full"``.
"""

from storyflow.tables.base import (
    LABEL,
    TEXT_COLUMNS,
    USER_LABEL,
    Table,
    TableError,
    labelled,
    parquet_to_csv,
    read,
    read_all,
)
from storyflow.tables.comparison import (
    MEASURE_CORRELATIONS,
    MEASURE_SEPARATION,
    MEASURE_UNITS,
    MEASURE_VERDICTS,
    MODEL_AGREEMENT,
    STORY_TABLE,
)
from storyflow.tables.corpus import (
    EXCLUDED,
    SAMPLE_COUNTS,
    SENTENCE_COUNTS,
    SENTENCES,
    STORIES,
)
from storyflow.tables.fabula_entropy import (
    FEI_ANSWERS,
    FEI_COMPARISON,
    FEI_CORRUPTIONS,
    FEI_COST,
    FEI_DOSE,
    FEI_EXCLUDED,
    FEI_QUESTIONS,
    FEI_READERS,
    FEI_STORY_INDICES,
    FEI_VERSIONS,
)
from storyflow.tables.lm import (
    LM_COST,
    MODEL_PROVENANCE,
    NLL,
    NLL_COST,
    NLL_ESTIMATE,
    NLL_EXCLUDED,
)
from storyflow.tables.narrative_sense import (
    LEMMAS,
    NS_STORIES,
    PAIR_SCORES,
)
from storyflow.tables.plot_holes import (
    PLOT_HOLE_ANSWERS,
    PLOT_HOLE_ATTEMPTS,
    PLOT_HOLE_COVERAGE,
    PLOT_HOLE_LEFT_OUT,
    PLOT_HOLE_RATES,
    PLOT_HOLE_SCORES,
    PLOT_HOLE_SKIPPED,
    PLOT_HOLE_STORIES,
    PLOT_HOLE_SURPRISAL,
)
from storyflow.tables.replication import (
    CONTRAST_ANSWERS,
    PUBLISHED,
    REPLICATION,
)
from storyflow.tables.run import RUN_RECORD
from storyflow.tables.sequentiality import (
    COEFFICIENTS,
    DIAGNOSTICS,
    EFFECTS,
    SENTENCE_SEQUENTIALITY,
    STORY_SEQUENTIALITY,
    SUMMARY,
)
from storyflow.tables.shared import (
    STORY_MEASURES,
    VALIDITY,
    VALIDITY_LABELS,
)
from storyflow.tables.tension import (
    TENSION_CALIBRATION,
    TENSION_CALIBRATION_COSINES,
    TENSION_CALIBRATION_JUDGMENTS,
    TENSION_CURVES,
    TENSION_CUTS,
    TENSION_EFFECTS,
    TENSION_ENDINGS,
    TENSION_EXCLUDED,
    TENSION_GROUPS,
    TENSION_JUDGMENTS,
    TENSION_LIKELIHOOD,
    TENSION_PMI,
    TENSION_STORIES,
)

__all__ = [
    "COEFFICIENTS",
    "CONTRAST_ANSWERS",
    "DIAGNOSTICS",
    "EFFECTS",
    "EXCLUDED",
    "FEI_ANSWERS",
    "FEI_COMPARISON",
    "FEI_CORRUPTIONS",
    "FEI_COST",
    "FEI_DOSE",
    "FEI_EXCLUDED",
    "FEI_QUESTIONS",
    "FEI_READERS",
    "FEI_STORY_INDICES",
    "FEI_VERSIONS",
    "LABEL",
    "LEMMAS",
    "LM_COST",
    "MEASURE_CORRELATIONS",
    "MEASURE_SEPARATION",
    "MEASURE_UNITS",
    "MEASURE_VERDICTS",
    "MODEL_AGREEMENT",
    "MODEL_PROVENANCE",
    "NLL",
    "NLL_COST",
    "NLL_ESTIMATE",
    "NLL_EXCLUDED",
    "NS_STORIES",
    "PAIR_SCORES",
    "PLOT_HOLE_ANSWERS",
    "PLOT_HOLE_ATTEMPTS",
    "PLOT_HOLE_COVERAGE",
    "PLOT_HOLE_LEFT_OUT",
    "PLOT_HOLE_RATES",
    "PLOT_HOLE_SCORES",
    "PLOT_HOLE_SKIPPED",
    "PLOT_HOLE_STORIES",
    "PLOT_HOLE_SURPRISAL",
    "PUBLISHED",
    "REPLICATION",
    "RUN_RECORD",
    "SAMPLE_COUNTS",
    "SENTENCES",
    "SENTENCE_COUNTS",
    "SENTENCE_SEQUENTIALITY",
    "STORIES",
    "STORY_MEASURES",
    "STORY_SEQUENTIALITY",
    "STORY_TABLE",
    "SUMMARY",
    "TENSION_CALIBRATION",
    "TENSION_CALIBRATION_COSINES",
    "TENSION_CALIBRATION_JUDGMENTS",
    "TENSION_CURVES",
    "TENSION_CUTS",
    "TENSION_EFFECTS",
    "TENSION_ENDINGS",
    "TENSION_EXCLUDED",
    "TENSION_GROUPS",
    "TENSION_JUDGMENTS",
    "TENSION_LIKELIHOOD",
    "TENSION_PMI",
    "TENSION_STORIES",
    "TEXT_COLUMNS",
    "USER_LABEL",
    "VALIDITY",
    "VALIDITY_LABELS",
    "Table",
    "TableError",
    "labelled",
    "parquet_to_csv",
    "read",
    "read_all",
]
