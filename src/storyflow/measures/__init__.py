"""The narrative measures, one package each; a measure never imports another measure.

- :mod:`storyflow.measures.sequentiality`: how much more predictable each sentence becomes
  when the model sees the sentences before it (docs/method.md §1–§7);
- :mod:`storyflow.measures.narrative_sense`: narrative sense after Roemmele et al., story-level
  PMI of content-lemma pairs (docs/method.md §8, docs/narrative_sense.md);
- :mod:`storyflow.measures.tension`: tension by ending forecasting ("100-Endings", after Sui et
  al.), the share of a forecaster's sampled endings that miss the actual ending at each cut
  (docs/method.md §12, docs/tension.md);
- :mod:`storyflow.measures.fabula_entropy`: Fabula Entropy Indexing (Castricato et al.), the
  entropy of reader models' yes/no answers about a story and its corrupted copies
  (docs/method.md §13, docs/fabula_entropy.md);
- :mod:`storyflow.measures.plot_holes`: plot holes after FlawedFictions (Ahuja et al.),
  continuity errors made in stories and found by detector models, with surprisal and NLI
  baselines (docs/method.md §11, docs/plot_holes.md).

The comparison of all measures on the same stories is :mod:`storyflow.comparison`
(docs/method.md §14, docs/comparison.md); it reads only the measures' story tables.
"""
