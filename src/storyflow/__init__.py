"""storyflow: narrative sequentiality with language models, as a reproducible workflow.

The library holds all the logic; the Snakemake rules under ``workflow/`` call it through the
thin scripts in ``scripts/``. Modules are named for their job: :mod:`storyflow.corpus`,
:mod:`storyflow.sentences`, :mod:`storyflow.models`, :mod:`storyflow.scoring`,
:mod:`storyflow.sequentiality`, :mod:`storyflow.stats` and :mod:`storyflow.figures`.
"""

__version__ = "0.1.0"
