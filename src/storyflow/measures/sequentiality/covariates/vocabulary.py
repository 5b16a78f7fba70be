"""The word classes the covariates read: parts of speech, dependencies, connective categories,
rhetorical relations and their flow, pronoun keys (docs/method.md §6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: Parts of speech of the content words whose lemmas are compared (docs/method.md §6).
OVERLAP_POS = frozenset({"NOUN", "VERB", "ADJ", "ADV"})
#: Parts of speech of the content words counted by the rare-word rate (stop words excluded).
RARE_WORD_POS = OVERLAP_POS | {"PROPN"}
VERB_POS = frozenset({"VERB", "AUX"})
#: Dependencies of verbs/auxiliaries that head a clause besides the root (docs/method.md §6).
CLAUSE_DEPS = frozenset({"ccomp", "xcomp", "advcl", "acl", "relcl"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
#: Connective categories with one indicator column each (``conn_<category>``).
CATEGORIES = ("temporal", "causal", "contrastive", "additive")
CONSTRAINTS = frozenset({"any", "mark", "verbal", "cc", "onset"})
#: Rhetorical relation classes and their flow (docs/method.md §6). "implicit" = no signal found by
#: the heuristic substitute; counted as flow-promoting (see docs/regression.md).
RELATION_FLOW = {
    "sequence": "promoting",
    "elaboration": "promoting",
    "cause": "promoting",
    "joint": "promoting",
    "implicit": "promoting",
    "contrast": "disrupting",
    "background": "disrupting",
    "explanation": "disrupting",
}
#: Dependencies of a connective's first token that make it modify the whole main clause
#: (a discourse adverbial such as "I, however, stayed" or "We then left").
ADVERBIAL_DEPS = frozenset({"advmod", "npadvmod", "prep"})

#: Key of a personal pronoun: person, number and (3rd singular) gender.
PRONOUN_KEYS = {
    **dict.fromkeys(["i", "me", "my", "mine", "myself"], "pron:1sg"),
    **dict.fromkeys(["we", "us", "our", "ours", "ourselves"], "pron:1pl"),
    **dict.fromkeys(["you", "your", "yours", "yourself", "yourselves"], "pron:2"),
    **dict.fromkeys(["he", "him", "his", "himself"], "pron:3sg-m"),
    **dict.fromkeys(["she", "her", "hers", "herself"], "pron:3sg-f"),
    **dict.fromkeys(["it", "its", "itself"], "pron:3sg-n"),
    **dict.fromkeys(["they", "them", "their", "theirs", "themselves"], "pron:3pl"),
}
#: Pronoun keys a nominal subject may be referred back to with.
PERSON_SINGULAR = frozenset({"pron:3sg-m", "pron:3sg-f"})
THING_SINGULAR = PERSON_SINGULAR | {"pron:3sg-n"}
PLURAL = frozenset({"pron:3pl"})
