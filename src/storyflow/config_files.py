"""Config files that explain their own YAML mistakes.

Snakemake reads config files itself and, for a YAML syntax error, says only that a config file
"is not valid JSON or YAML", naming neither the file nor the line. :func:`yaml_problem` names
both, with the parser's cause and the usual fix; the Snakefile checks its own config file
(``config/config.yaml``) with it before Snakemake reads it, and a file given with
``--configfile`` can be checked the same way::

    .venv/bin/python -m storyflow.config_files my_config.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

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


if __name__ == "__main__":
    problems = [p for p in map(yaml_problem, sys.argv[1:]) if p]
    print("\n".join(problems) or "every file reads", file=sys.stderr if problems else sys.stdout)
    sys.exit(1 if problems else 0)
