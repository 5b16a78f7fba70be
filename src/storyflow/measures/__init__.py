"""The narrative measures, one package each; a measure never imports another measure.

- :mod:`storyflow.measures.sequentiality`: how much more predictable each sentence becomes
  when the model sees the sentences before it (docs/method.md §1–§7);
- :mod:`storyflow.measures.narrative_sense`: story-level PMI of content-lemma pairs
  (docs/method.md §8, docs/narrative_sense.md).
"""
