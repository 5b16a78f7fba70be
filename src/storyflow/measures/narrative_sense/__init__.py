"""Narrative sense (after Roemmele et al.; docs/method.md §8, docs/narrative_sense.md).

:mod:`~storyflow.measures.narrative_sense.pmi`: content lemmas, the PMI table of lemma pairs over
reference stories, each story's pair scores (PMI, natural log) and the rank-sum threshold test.
Rules: workflow/rules/narrative_sense/.
"""
