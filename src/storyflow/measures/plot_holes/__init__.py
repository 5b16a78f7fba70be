"""Plot holes (continuity errors), after Ahuja et al., "Finding Flawed Fictions" (method.md §11).

Modules:

- :mod:`.acts`: a story's sentences cut into three acts;
- :mod:`.lexicon` and :mod:`.controlled`: the controlled maker (no model): a later mention of an
  attribute that act 1 establishes is changed to a contradicting value; four versions per story
  (O original, F flawed, C consistently changed, D flawed without the establishing sentence);
- :mod:`.llm_maker`: the paper's maker with a configured model (acts, propositions, relevance,
  counterfactual, patch, filter, judge), every intermediate output recorded;
- :mod:`.detect`: detectors asked with a configured model (classification as a closed choice,
  two-way localization as strictly parsed line numbers; or the paper's one tagged answer, whose
  quoted lines :mod:`.quotes` matches to the story's sentences);
- :mod:`.surprisal`: the surprisal baseline and its controls (F−D, C−D, F−O);
- :mod:`.nli`: the NLI baseline, a configured model judging sentence pairs (act 1 × acts 2-3);
- :mod:`.scoring`: scores per maker × detector (with the unparseable-answer policy), the story
  measures, the human-vs-LLM detection rates, the benchmark's scores;
- :mod:`.ceeval`: the CEEval-Full metric, classification scores, bootstrap CIs, baselines;
- :mod:`.review`: the review sheet (one row per story and annotator) and the annotators'
  majority; :mod:`.benchmark`: the published FlawedFictions files;
- :mod:`.versions`: a story version's row and item id, as every maker writes them, and the pass
  over the versions that detectors and baselines make.
"""
