"""The answer to a study's contrasts: do two groups of a corpus's stories differ?

Not a replication (that is :mod:`storyflow.replication`, a paper's figures beside ours): the
researcher's own question, answered from the run's scores the way Fiction Flows answers its
contrasts, by the same reading of an interval (:mod:`storyflow.replication.intervals`).

- ``answers``: the table (rule answer_contrasts, ``contrast_answers.csv``): each contrast's
  headline, its designs, formulations and histories, and what would decide it;
- ``adjusted``: a contrast adjusted for story length and the topic term (lme4, through R);
- ``words``: the answers' words and names, light enough for the rules that only read them;
- ``page``: the table and its plot as one page of the report, and the first page's headlines;
- ``methods``: the methods and results sentences a paper needs, written from the tables.

The planning of it is :mod:`storyflow.plan.contrast_answers`; its rules are in
``workflow/rules/replication/contrasts.smk``.
"""
