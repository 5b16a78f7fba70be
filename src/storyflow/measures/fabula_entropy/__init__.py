"""Fabula Entropy Indexing (Castricato et al. 2021) with language-model readers.

Readers answer yes/no questions about a story and its corrupted copy; where a story is coherent
the readers agree, and the binary entropy of their pooled answers (bits) is low. Two indices:
EWC (world coherence, questions about descriptive words) and ETC (transitional coherence,
questions about the order and dependencies of lines). Modules:

- :mod:`.entropy`: binary entropy, soft and hard pooling, human answers (the paper's eq. 3);
- :mod:`.lexicon`: the packaged antonym lexicon;
- :mod:`.questions`: template questions and comprehension controls, instantiated from a story;
- :mod:`.corrupt`: antonym swaps (EWC) and span shuffles (ETC), seeded and retried;
- :mod:`.items`: a corpus's versions, questions and exclusions (one call per corpus);
- :mod:`.readers`: prompts and P(yes) per reader (model × prompt variant);
- :mod:`.compare`: story indices, the comprehension gate, original vs corrupted, dose-response.
"""
