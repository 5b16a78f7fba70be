"""Each paper's published results beside ours (docs/replication.md).

For every paper behind a measure, ``src/storyflow/data/published/<paper>.csv`` types its
headline figures once (:data:`storyflow.tables.PUBLISHED`, with the line of the paper each comes
from). This package computes the same quantities from a run's result tables, the paper's way
(Fiction Flows: median Hedges' g over h per model, then the mean over models), and says for each
whether our direction and size agree with the published figure
(:data:`storyflow.tables.REPLICATION`):

- :mod:`~storyflow.replication.published`: the published figures, read and checked;
- :mod:`~storyflow.replication.agreement`: one row's comparison (direction, CI coverage,
  verdict in words) and the summary in words for the report's first page;
- :mod:`~storyflow.replication.effects`: Hedges' g aggregated over history sizes and models
  with a bootstrap over stories;
- one module per paper (``fiction_flows``, ...) that computes ours for its rows.

Like the comparison, it reads the measures' result files, never their code.
"""
