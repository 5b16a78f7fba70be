"""The controlled maker's attribute classes and their contradicting values.

Each class maps a value (lower case; one word, or a phrase for places) to the values that
contradict it. A change keeps the case of the first letter of the text it replaces. The lists are
small on purpose: they are the whole ground truth of the controlled maker, and every change is
a surface-level substitution a reader can check (docs/method.md §11).
"""

from __future__ import annotations

from collections.abc import Mapping

COLOURS = (
    "red",
    "blue",
    "green",
    "yellow",
    "black",
    "white",
    "brown",
    "pink",
    "purple",
    "orange",
    "grey",
    "gray",
    "silver",
    "golden",
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)  # fmt: skip  ("may" is left out: a modal verb)
NUMBER_WORDS = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "fifteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
)
TIMES_OF_DAY = ("morning", "afternoon", "evening", "night", "midnight", "noon")
SEASONS = ("spring", "summer", "autumn", "winter")
KIN_PAIRS = (
    ("mother", "father"),
    ("mom", "dad"),
    ("mum", "dad"),
    ("sister", "brother"),
    ("daughter", "son"),
    ("aunt", "uncle"),
    ("niece", "nephew"),
    ("wife", "husband"),
    ("grandmother", "grandfather"),
    ("grandma", "grandpa"),
    ("girlfriend", "boyfriend"),
    ("bride", "groom"),
    ("queen", "king"),
    ("lady", "gentleman"),
)
ANTONYM_PAIRS = (
    ("tall", "short"),
    ("old", "young"),
    ("big", "small"),
    ("large", "small"),
    ("happy", "sad"),
    ("rich", "poor"),
    ("hot", "cold"),
    ("warm", "cold"),
    ("new", "old"),
    ("early", "late"),
    ("first", "last"),
    ("dark", "bright"),
    ("quiet", "loud"),
    ("empty", "full"),
    ("clean", "dirty"),
    ("heavy", "light"),
    ("healthy", "sick"),
    ("alive", "dead"),
    ("open", "closed"),
    ("wet", "dry"),
    ("fat", "thin"),
    ("strong", "weak"),
    ("cheap", "expensive"),
    ("easy", "hard"),
    ("safe", "dangerous"),
    ("calm", "angry"),
    ("married", "single"),
    ("beautiful", "ugly"),
    ("long", "short"),
    ("fast", "slow"),
    ("kind", "cruel"),
    ("friendly", "hostile"),
    ("busy", "idle"),
    ("asleep", "awake"),
    ("male", "female"),
    ("sunny", "rainy"),
    ("excited", "bored"),
    ("nervous", "relaxed"),
)
PLACES = (
    "paris",
    "london",
    "new york",
    "chicago",
    "texas",
    "california",
    "florida",
    "boston",
    "seattle",
    "mexico",
    "canada",
    "china",
    "japan",
    "italy",
    "france",
    "germany",
    "spain",
    "ohio",
    "denver",
    "atlanta",
)


def _cycle(values: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Every value contradicted by every other value of its closed set."""
    return {v: tuple(w for w in values if w != v) for v in values}


def _pairs(pairs: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for a, b in pairs:
        out.setdefault(a, []).append(b)
        out.setdefault(b, []).append(a)
    return {k: tuple(v) for k, v in out.items()}


#: Class name → value → contradicting values. "number" and "age" are filled from NUMBER_WORDS
#: and digits by :func:`contradicting_numbers`; "place" from PLACES or any other place entity.
CLASSES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "colour": _cycle(COLOURS),
    "weekday": _cycle(WEEKDAYS),
    "month": _cycle(MONTHS),
    "time_of_day": _cycle(TIMES_OF_DAY),
    "season": _cycle(SEASONS),
    "kinship": _pairs(KIN_PAIRS),
    "adjective": _pairs(ANTONYM_PAIRS),
    "number": _cycle(NUMBER_WORDS),
    "place": _cycle(PLACES),
}
CLASS_NAMES = (
    "colour",
    "number",
    "age",
    "weekday",
    "month",
    "time_of_day",
    "season",
    "kinship",
    "place",
    "adjective",
)


def contradicting_numbers(value: str) -> tuple[str, ...]:
    """Numbers that contradict ``value`` (a number word or digits), in the same form: for
    digits n+1, n+2, n−1, n+10 (positive, never n)."""
    if value.isdigit():
        n = int(value)
        return tuple(str(m) for m in (n + 1, n + 2, n - 1, n + 10) if m > 0 and m != n)
    return CLASSES["number"].get(value, ())


def match_case(template: str, value: str) -> str:
    """``value`` with the first letter upper case when ``template``'s is (or all upper)."""
    if template.isupper() and len(template) > 1:
        return value.upper()
    if template[:1].isupper():
        return " ".join(w[:1].upper() + w[1:] for w in value.split(" "))
    return value
