"""Each paper's published results beside ours (docs/replication.md).

For every paper behind a measure, ``src/storyflow/data/published/<paper>.csv`` types its
headline figures once (:data:`storyflow.tables.PUBLISHED`, with the line of the paper each comes
from). This package computes the same quantities from a run's result tables, the paper's way
(Fiction Flows: median Hedges' g over h per model, then the mean over models), and judges each
from our interval by one rule: agrees, disagrees, inconclusive or not judged, with whether our
interval covers the published value beside it (:data:`storyflow.tables.REPLICATION`;
docs/replication.md, "Verdicts"):

- :mod:`~storyflow.replication.published`: the published figures, read and checked;
- :mod:`~storyflow.replication.judging`: what a row claims, and its verdict from our interval;
- :mod:`~storyflow.replication.summary`: the tables as the report's first page shows them;
- :mod:`~storyflow.replication.effects`: Hedges' g aggregated over history sizes and models
  with a bootstrap over stories (or books);
- one module per paper (``fiction_flows``, ...) that computes ours for its rows.

Like the comparison, it reads the measures' result files, never their code.
"""
