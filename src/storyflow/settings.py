"""Settings objects built from validated config blocks, with no defaults of their own.

Every default and every range of the config lives in one place, the schema
(``workflow/schemas/config.schema.yaml``): :func:`storyflow.config_files.schema_problem` checks
the config against it and fills in each key the user left out. A settings dataclass
(``CutSettings``, ``NllSettings``, ``ModelSpec``, ...) therefore declares its fields without
default values and is built by
:func:`settings_from` from the validated block (or from a rule's ``params``, which the plan
copies from it): a key missing there is a mistake, named in the error, never a silent second
default.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeVar

from storyflow.errors import StoryflowError

T = TypeVar("T")


def _is_tuple(hint: Any) -> bool:
    """Whether a field's type is a tuple (``tuple[...]``, or a tuple or None)."""
    if isinstance(hint, str):  # an annotation that names a type imported for typing only
        return hint.startswith("tuple") or " tuple[" in hint or "|tuple[" in hint
    if typing.get_origin(hint) is tuple or hint is tuple:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_is_tuple(arg) for arg in typing.get_args(hint))
    return False


def settings_from(cls: type[T], block: Mapping[str, Any], /, *, where: str = "", **given: Any) -> T:
    """The dataclass ``cls`` built from the keys of ``block`` that are its fields.

    Args:
        cls: A dataclass whose fields are settings of the config.
        block: A config block validated against the schema (every default filled in), or a
            rule's ``params`` taken from one. Keys that are not fields of ``cls`` are ignored.
        where: The block's place in the config (``"tension.cuts"``), for the error message.
        given: Values of fields that do not come from ``block`` as they stand (the rule's
            threads, a value resolved from two keys, a key the params name otherwise); they
            take precedence over ``block``.

    Every field taken from ``block`` must be there: a dataclass default is never used. A list
    becomes a tuple where the field is a tuple, so a frozen settings object stays hashable.

    Raises:
        StoryflowError: a field is neither in ``block`` nor in ``given``; the message names it.
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"settings_from needs a dataclass, not {cls!r}")
    fields = [f for f in dataclasses.fields(cls) if f.init]
    missing = [f.name for f in fields if f.name not in given and f.name not in block]
    if missing:
        place = f"config {where}" if where else "its config block"
        raise StoryflowError(
            f"{cls.__name__}: {place} has no {', '.join(repr(m) for m in missing)} (keys there: "
            f"{', '.join(sorted(map(str, block))) or 'none'}); build it from the block the "
            "config schema has validated, which fills in every default"
        )
    try:
        hints: dict[str, Any] = typing.get_type_hints(cls)
    except NameError:  # a name imported only for type checking: read the annotations as text
        hints = {f.name: f.type for f in fields}
    values: dict[str, Any] = {}
    for f in fields:
        value = given[f.name] if f.name in given else block[f.name]
        if isinstance(value, list) and _is_tuple(hints.get(f.name)):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)


class FromParams:
    """A settings dataclass whose every field is a key of one block (a rule's params, or the
    validated config block they are taken from), named by ``WHERE`` in the error message."""

    WHERE: ClassVar[str]

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Self:
        """The settings of ``params`` (:func:`settings_from`)."""
        return settings_from(cls, params, where=cls.WHERE)
