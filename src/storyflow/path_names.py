"""Names of the config that become parts of paths: one check for them all.

A model's name makes ``resources/models/<model>.gguf`` and
``results/<corpus>/<measure>/<model>/``, a corpus's ``results/<corpus>/``, a contrast's the
files of its tables. A name that is ``.`` or ``..``, starts with a dot, holds a slash or would
otherwise lead out of the folder it is put in writes its files elsewhere (``..`` as a model:
``results/<corpus>/sequentiality/shard-000.parquet``, outside every model's folder) or hides
them; :func:`check_path_name` refuses it, in words, at planning. The schema's patterns refuse
the same where a name has one; this check runs whatever the schema says, on the models' names
(:func:`storyflow.lm.specs.model_specs`) and the corpora's and contrasts' names
(:mod:`storyflow.plan.corpus`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from storyflow.errors import StoryflowError

#: What a name may be, in words, for the fixes.
NAME_WORDS = "letters, digits, '-', '_' and '.', not starting with a dot"


def path_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a part of a path, in words, or None when it can."""
    if name == "":
        return "is empty, so it names no folder or file of its own"
    if name in (".", ".."):
        where = "the folder it is put in" if name == "." else "the folder above"
        return f"names {where}, not a folder or file of its own"
    if name.startswith("."):
        return "starts with a dot, which hides its folder or file (and '..' leads out of it)"
    if "/" in name or "\\" in name:
        return "holds a slash, which makes it a path of folders, not one name"
    parts = PurePosixPath("folder", name).parts
    if parts != ("folder", name):
        return "would lead out of the folder it is put in"
    return None


def check_path_name(name: str, key: str, makes: str) -> None:
    """Stop when ``name`` (the config's ``key``) cannot be a part of a path
    (:func:`path_name_problem`).

    ``makes``: a path the name becomes, for the message (``results/<corpus>/...``).

    Raises:
        StoryflowError: naming the key, the name, why and the fix.
    """
    problem = path_name_problem(str(name))
    if problem:
        raise StoryflowError(
            f"config: {key} {str(name)!r} {problem}; the name becomes a part of paths such as "
            f"{makes}. Fix: rename it, with {NAME_WORDS}"
        )
