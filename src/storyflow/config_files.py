"""Config files that explain their own YAML mistakes.

Snakemake reads config files itself and, for a YAML syntax error, says only that a config file
"is not valid JSON or YAML", naming neither the file nor the line. :func:`yaml_problem` names
both, with the parser's cause and the usual fix; the Snakefile checks its own config file
(``config/config.yaml``) with it before Snakemake reads it, and a file given with
``--configfile`` can be checked the same way::

    .venv/bin/python -m storyflow.config_files my_config.yaml

The merged config is then checked against the config schema by :func:`schema_problem`, which
fills the schema's defaults as Snakemake's ``validate`` does and phrases a violation in one
line: the key, its value, what is allowed and the fix (Snakemake's own message prints the whole
schema node, for an unknown top-level key the whole schema).
"""

from __future__ import annotations

import copy
import difflib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

#: What fixes most YAML syntax errors, said after the cause.
FIX = (
    "indent with spaces (never tabs), keep the keys of one block at the same indentation, close "
    "every bracket and quote, and quote a value that holds ': ' or ' #'"
)


def yaml_problem(path: str | Path) -> str | None:
    """One message naming ``path``, the line and column, the cause and the fix when the file is
    not a YAML mapping (a syntax error, a tab in the indentation, a list or a scalar at the top);
    None when it reads (or is absent: Snakemake names a missing config file itself)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None  # Snakemake says which file is missing
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        return f"{path}, line {line}: the file is not UTF-8 text; save it as UTF-8"
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        cause = "; ".join(str(p) for p in (err.context, err.problem) if p)
        began = err.context_mark
        if mark and began and began.line != mark.line:
            cause += f" (what it was reading began on line {began.line + 1})"
        lines = text.splitlines()
        shown = lines[mark.line] if mark and mark.line < len(lines) else ""
        if "\t" in shown[: len(shown) - len(shown.lstrip())] or "found character '\\t'" in cause:
            cause += " (a tab character indents this line)"
        quoted = f" ({shown.strip()!r})" if shown.strip() else ""
        return f"{path}{where}{quoted}: not valid YAML: {cause}. Fix: {FIX}"
    except yaml.YAMLError as err:
        return f"{path}: not valid YAML: {err}. Fix: {FIX}"
    if data is not None and not isinstance(data, dict):
        return (
            f"{path}, line 1: the file holds a {type(data).__name__}, not settings; a config "
            "file is a mapping of keys (e.g. 'corpus:', 'models:') at the left margin"
        )
    return None


def exit_on_yaml_problem(path: str | Path) -> None:
    """Stop with :func:`yaml_problem`'s message (no traceback) if ``path`` has one."""
    problem = yaml_problem(path)
    if problem is not None:
        print(f"storyflow: {problem}", file=sys.stderr)
        sys.exit(1)


# --- the schema ---------------------------------------------------------------------------------

#: A config's sources in merge order: (where it comes from, its mapping), e.g.
#: ``("config/config.yaml", {...})``; the last that sets a key is named in messages.
Sources = Sequence[tuple[str, Mapping[str, Any]]]

#: The label of the command line's ``--config`` values among the sources.
COMMAND_LINE = "--config"

_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a text (string)",
    "boolean": "true or false",
    "array": "a list",
    "object": "a block of keys",
    "null": "null",
}
#: The JSON schema type of a value read from a config file (bool first: a bool is an int).
_SCHEMA_TYPES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


#: The loader of the schema's files: libyaml's where PyYAML was built with it (the schema, about
#: 1,500 lines in parts, is read at every parse of the workflow; libyaml reads it about ten
#: times faster), else the pure-Python one. Config files keep :func:`yaml.safe_load`, whose
#: messages :func:`yaml_problem` turns into the user's.
_SCHEMA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml_schema(path: Path) -> dict[str, Any]:
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_SCHEMA_LOADER)
    except OSError as err:
        raise FileNotFoundError(f"config schema part {path} cannot be read ({err})") from err


def load_schema(path: str | Path) -> dict[str, Any]:
    """The config schema at ``path`` with its parts inlined: each ``$ref`` to another file
    (``measures/<measure>.schema.yaml``, optionally ``#/$defs/<key>``: a measure's own schema,
    workflow/schemas/measures/) replaced by that part, the ref's sibling keys (its ``default``)
    kept. What a reader of the whole schema wants: the measures' blocks where the config has
    them. Refs within a file (``#/$defs/...``) stay."""
    root = Path(path).resolve()

    def inline(node: Any, base: Path) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                target, _, pointer = ref.partition("#")
                part_path = (base.parent / target).resolve()
                part: Any = _read_yaml_schema(part_path)
                for key in filter(None, pointer.split("/")):
                    part = part[key]
                part = inline(part, part_path)
                siblings = {k: inline(v, base) for k, v in node.items() if k != "$ref"}
                return {**{k: v for k, v in part.items() if k != "$schema"}, **siblings}
            return {k: inline(v, base) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, base) for v in node]
        return node

    return inline(_read_yaml_schema(root), root)


def _registry(schema_path: Path) -> Any:
    """A ``referencing`` registry that finds the schema's parts (its ``$ref``s to other files,
    relative to ``schema_path``), as Snakemake's ``validate`` finds them."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    def retrieve(uri: str) -> Any:
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        contents = _read_yaml_schema(Path(url2pathname(urlparse(uri).path)))
        return Resource.from_contents(contents, default_specification=DRAFT202012)

    # referencing's attrs field `_retrieve` takes `retrieve` (alias=), which its stub's
    # dataclass_transform does not tell mypy
    return Registry(retrieve=retrieve)  # type: ignore[call-arg]


def _filling_validator(schema: Mapping[str, Any], schema_path: str | Path | None = None) -> Any:
    """A Draft 2020-12 validator of ``schema`` that, like Snakemake's ``validate``, sets each
    property's schema ``default`` on the instance before checking the properties (a copy of the
    default: the config never shares an object with the schema). ``schema_path``: where the
    schema lies, so that its ``$ref``s to other files (the measures' parts) are found."""
    from jsonschema import Draft202012Validator, validators

    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from check_properties(validator, properties, instance, schema)

    filling = validators.extend(Draft202012Validator, {"properties": set_defaults})
    if schema_path is None:
        return filling(schema)
    schema = {**schema, "$id": Path(schema_path).resolve().as_uri()}
    return filling(schema, registry=_registry(Path(schema_path)))


def schema_problem(
    config: dict[str, Any], schema_path: str | Path, sources: Sources = ()
) -> str | None:
    """Check ``config`` against the JSON schema at ``schema_path``, filling the schema's defaults
    into it in place (as Snakemake's ``validate`` does: the same validator, the same defaults).

    Returns None when it is valid, else one message for the user: the key path
    (``tension.k``, ``models[2].source``), its value and the file that set it (the last of
    ``sources`` holding the key), what the schema allows (type, range, choices, the key's
    description and default) and the fix; an unknown key is named with the keys its block
    takes and the nearest spelling. When several keys are wrong the others are listed by path.
    """
    from jsonschema.exceptions import best_match

    schema = _read_yaml_schema(Path(schema_path))
    errors = list(_filling_validator(schema, schema_path).iter_errors(config))
    if not errors:
        return None
    first = best_match(errors)
    message = _phrase(first, sources)
    others = sorted({_key(e.absolute_path) or "the top level" for e in errors if e is not first})
    others = [o for o in others if o != (_key(first.absolute_path) or "the top level")]
    if others:
        message += f" (also wrong: {', '.join(others[:5])}{' ...' if len(others) > 5 else ''})"
    return message


def command_line_nulls(
    config: dict[str, Any], schema_path: str | Path, command_line: Mapping[str, Any]
) -> list[str]:
    """Give ``config`` the nulls the command line meant: Snakemake reads a value nested in
    ``--config`` as text (YAML's base loader), so ``--config 'data={"mirror": null}'`` would set
    ``data.mirror`` to the text "null". Each text of ``command_line`` that YAML reads as null
    (``null``, ``Null``, ``NULL``, ``~``) becomes null in ``config`` where the schema at
    ``schema_path`` allows null for that key, as the schema says; anywhere else it stays text
    (and the schema check names it). Changes ``config`` in place; returns the keys changed."""
    validator = None
    changed = []
    for path, text in _texts(command_line, []):
        if not text.strip() or yaml.safe_load(text) is not None:
            continue
        trial = copy.deepcopy(config)
        if not _set(trial, path, None):
            continue
        if validator is None:
            validator = _filling_validator(_read_yaml_schema(Path(schema_path)), schema_path)
        if not any(list(e.absolute_path) == path for e in validator.iter_errors(trial)):
            _set(config, path, None)
            changed.append(_key(path))
    return changed


def _texts(node: Any, path: list[Any]) -> Iterable[tuple[list[Any], str]]:
    """(key path, text) of every text nested in ``node``'s mappings."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _texts(value, [*path, key])
    elif isinstance(node, str):
        yield path, node


def _set(config: dict[str, Any], path: Sequence[Any], value: Any) -> bool:
    """Set ``config`` at key ``path`` to ``value``; False when the path is not there."""
    node: Any = config
    for part in path[:-1]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    if not isinstance(node, dict) or path[-1] not in node:
        return False
    node[path[-1]] = value
    return True


def _key(path: Iterable[Any]) -> str:
    """``tension.k``, ``models[2].source``: a config key path as the user writes it."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _child(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _show(value: Any) -> str:
    """A value as a config file writes it (JSON-like), cut at 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    """What a config value is, in the words of :data:`_TYPE_WORDS` (its JSON schema type)."""
    for python_type, schema_type in _SCHEMA_TYPES.items():
        if isinstance(value, python_type):
            return _TYPE_WORDS[schema_type]
    return type(value).__name__


def _allowed(schema: Any) -> str:
    """What ``schema`` accepts, in words: ``an integer of at least 1``, ``a number from 0 to
    1``, ``one of "a", "b"``, ..."""
    if not isinstance(schema, dict):
        return "nothing" if schema is False else "anything"
    for combined in ("oneOf", "anyOf"):
        if combined in schema:
            keys = _one_key_each(schema[combined])
            if keys:
                how = "exactly one" if combined == "oneOf" else "at least one"
                return f"a block with {how} of the keys {', '.join(keys)}"
            return " or ".join(dict.fromkeys(_allowed(s) for s in schema[combined]))
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    if "const" in schema:
        return f"exactly {_show(schema['const'])}"
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    nullable = "null" in kinds and len(kinds) > 1
    words = " or ".join(_TYPE_WORDS.get(k, k) for k in kinds if not nullable or k != "null")
    words = words or "a value"
    bounds = [_range(schema)] if _range(schema) else []
    if "minItems" in schema:
        bounds.append(f"of at least {schema['minItems']} item(s)")
    if schema.get("uniqueItems"):
        bounds.append("without repeats")
    if isinstance(schema.get("items"), dict):
        bounds.append(f"(each item: {_allowed(schema['items'])})")
    if "minLength" in schema:
        bounds.append(f"of at least {schema['minLength']} character(s)")
    if "pattern" in schema:
        bounds.append(PATTERN_WORDS.get(schema["pattern"], f"matching {schema['pattern']}"))
    said = " ".join([words, *bounds])
    return f"{said}, or null" if nullable else said


def allowed(schema: Any) -> str:
    """What a key of the config schema accepts, in words: what every message about a value says,
    and the "allowed" column of the config reference (tools/docs_reference.py)."""
    return _allowed(schema)


def _one_key_each(branches: Any) -> list[str]:
    """The keys of a choice of blocks each of which only requires one key (``oneOf:
    [{required: [package]}, {required: [path]}, ...]``: the forms a model's source takes);
    [] for any other choice."""
    keys = []
    for branch in branches if isinstance(branches, list) else []:
        if not isinstance(branch, dict) or set(branch) != {"required"}:
            return []
        if len(branch["required"]) != 1:
            return []
        keys.append(str(branch["required"][0]))
    return keys


def _range(schema: Mapping[str, Any]) -> str:
    """A number's bounds in words: ``from 0 to 1``, ``between 0 and 1 (exclusive)``, ``above
    0``, ``of at least 1``; empty when it has none."""
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    low_open, high_open = "exclusiveMinimum" in schema, "exclusiveMaximum" in schema
    if low is not None and high is not None:
        if not low_open and not high_open:
            return f"from {low} to {high}"
        if low_open and high_open:
            return f"between {low} and {high} (exclusive)"
        if low_open:
            return f"above {low} and at most {high}"
        return f"of at least {low} and below {high}"
    if low is not None:
        return f"above {low}" if low_open else f"of at least {low}"
    if high is not None:
        return f"below {high}" if high_open else f"of at most {high}"
    return ""


def _about(schema: Any) -> str:
    """The key's description (first sentence) and default, in brackets; empty when none."""
    if not isinstance(schema, dict):
        return ""
    parts = []
    description = " ".join(str(schema.get("description", "")).split())
    if description:
        sentence = description.split(". ")[0].rstrip(".")
        parts.append(sentence if len(sentence) <= 100 else sentence[:97] + "...")
    if "default" in schema:
        parts.append(f"default {_show(schema['default'])}")
    return f" ({'; '.join(parts)})" if parts else ""


def _origin(path: Sequence[Any], sources: Sources) -> str:
    """`` (in my.yaml)``: the last source that sets ``path``; empty when none does (a default)."""
    found = ""
    for label, mapping in sources:
        node: Any = mapping
        for part in path:
            in_list = isinstance(part, int) and isinstance(node, list) and part < len(node)
            if not (in_list or (isinstance(node, dict) and part in node)):
                break
            node = node[part]
        else:
            found = label
    return f" (in {found})" if found else ""


#: Each pattern of the schema in words, for messages (a regular expression is no message):
#: every pattern the schema has must be here (tests/test_user_files.py checks).
PATTERN_WORDS = {
    "^[A-Za-z0-9_-]+$": "made of letters, digits, '-' and '_' only",
    "^[A-Za-z0-9_-][A-Za-z0-9._-]*$": (
        "made of letters, digits, '-', '_' and '.' only, not starting with a dot (the name "
        "becomes a folder or file name)"
    ),
    "^[a-z][a-z0-9_]*$": "made of lower-case letters, digits and '_', starting with a letter",
    "^[1-9][0-9]*$": "a whole number above 0, written as text",
    "\\{n\\}": "that contains {n} (where the piece's number goes)",
    "^[0-9a-f]{64}$": "of 64 hexadecimal digits (0-9, a-f)",
}

#: Keywords whose failure :func:`_allowed` says in full (no need for jsonschema's words).
_SAID_BY_ALLOWED = (
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "oneOf",
    "anyOf",
    "pattern",
)


#: Why the statistics settings moved: the measures' were merged into the one ``stats`` block.
_ONE_STATS_BLOCK = "every interval, test and group size of every measure reads the one stats block"

#: Keys that moved: where to, and why. A config that still sets one is told both, in one line.
MOVED = {
    "validity.bootstrap": ("stats.resamples", _ONE_STATS_BLOCK),
    "validity.seed": ("stats.seed", _ONE_STATS_BLOCK),
    "validity.min_group_size": ("stats.min_group_size", _ONE_STATS_BLOCK),
    "comparison.bootstrap": ("stats.resamples", _ONE_STATS_BLOCK),
    "comparison.seed": ("stats.seed", _ONE_STATS_BLOCK),
    "stats.bootstrap": ("stats.resamples", _ONE_STATS_BLOCK),
    "tension.confidence": ("stats.confidence", _ONE_STATS_BLOCK),
    "nll.n_gpu_layers": (
        "models[].device.n_gpu_layers",
        "set it on each model to offload, so that every role of a model runs where its NLLs do",
    ),
}


def _phrase(error: Any, sources: Sources) -> str:
    """One message for a jsonschema ``ValidationError``: key, value, origin, allowed, fix."""
    path = list(error.absolute_path)
    key = _key(path) or "the config"
    value, keyword, schema = error.instance, error.validator, error.schema
    if keyword == "additionalProperties" and isinstance(value, dict):
        known = list(schema.get("properties", {}))
        name = str(next((k for k in value if k not in known), "?"))
        old = _child(_key(path), name)
        if old in MOVED:
            new, why = MOVED[old]
            return (
                f"config: {old} = {value[name]!r}{_origin([*path, name], sources)} moved to {new}: "
                f"{why}. Fix: set {new} instead (and remove {old})"
            )
        near = difflib.get_close_matches(name, known, n=1)
        guess = f"; did you mean {_child(_key(path), near[0])}?" if near else "."
        return (
            f"config: unknown key {_child(_key(path), name)}{_origin([*path, name], sources)}"
            f"{guess} {_key(path) or 'The top level'} takes: {', '.join(known)}. Fix: correct "
            "the key's spelling or remove it (workflow/schemas/config.schema.yaml and its parts "
            "in workflow/schemas/measures/ describe "
            "every key)"
        )
    if keyword == "required" and isinstance(value, dict):
        missing = next((k for k in error.validator_value if k not in value), "?")
        about = _about(schema.get("properties", {}).get(missing))
        where = _origin(path, sources) if path else ""  # the top level is in every file
        return (
            f"config: {key}{where} lacks the required key {missing!r}{about}. Fix: add the key "
            f"{_child(_key(path), missing)}"
        )
    allowed = _allowed(schema)
    if keyword == "type":
        problem = f"is {_kind(value)}, but it must be {allowed}"
    elif _keys_given(error):
        problem = f"is not allowed ({_keys_given(error)}): it must be {allowed}"
    elif keyword in _SAID_BY_ALLOWED:
        problem = f"is not allowed: it must be {allowed}"
    else:
        said = error.message if len(error.message) <= 120 else error.message[:117] + "..."
        problem = f"is not allowed ({said}): it must be {allowed}"
    if keyword == "type" and isinstance(value, str) and COMMAND_LINE in _origin(path, sources):
        fix = (
            f"Snakemake reads values nested in --config as text; set {key} in a file given "
            "with --configfile instead"
        )
    elif keyword == "type" and isinstance(value, str) and _parses_as_number(value):
        fix = f"write the number without quotes ({path[-1]}: {value})"
    else:
        fix = f"give {key} {allowed}"
        if isinstance(schema, dict) and "default" in schema:
            fix += ", or remove it to take the default"
    where = _origin(path, sources)
    return f"config: {key} = {_show(value)}{where} {problem}{_about(schema)}. Fix: {fix}"


def _keys_given(error: Any) -> str:
    """Which of the keys a choice of one-key blocks allows a block gives (``it has path and
    hf``, ``it has none of them``), for a block that fails such a choice; else ""."""
    keys = _one_key_each(error.validator_value)
    if (
        error.validator not in ("oneOf", "anyOf")
        or not isinstance(error.instance, dict)
        or not keys
    ):
        return ""
    given = [k for k in keys if k in error.instance]
    return f"it has {' and '.join(given)}" if given else "it has none of them"


def _parses_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    problems = [p for p in map(yaml_problem, sys.argv[1:]) if p]
    print("\n".join(problems) or "every file reads", file=sys.stderr if problems else sys.stdout)
    sys.exit(1 if problems else 0)
