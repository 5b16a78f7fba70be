"""Every measure on the same stories (docs/comparison.md).

Each measure hands its story-level scores over as a :data:`storyflow.tables.STORY_MEASURES`
table (``results/<corpus>/<measure>/story_measures.parquet``); this package reads only those
files, never a measure's code, and

- :mod:`~storyflow.comparison.story_table`: joins them into one story table per corpus (one row
  per story and model, every score a column), with the story's labels and length;
- :mod:`~storyflow.comparison.correlation`: Spearman correlations between the measures with
  bootstrap CIs, partial correlations controlling for length, and the agreement of one measure
  between models;
- :mod:`~storyflow.comparison.separation`: Hedges' g of every measure for every contrast of the
  corpus, side by side.
"""
