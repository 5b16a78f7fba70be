"""The documentation a newcomer reads (issue 58): the site builds with warnings as errors, the
reference pages are generated from the code and never stale, the README stays short and links
its contents, the default run's duration is stated in one record, and the two statements that
once contradicted each other (which jobs request a GPU; whether a served model scores NLLs)
are made in one place each and linked from every other page that touches them."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import test_readme
from conftest import REPO

from storyflow import tables
from storyflow.config_files import load_schema

sys.path.insert(0, str(REPO / "tools"))
import docs_reference
from docs_reference import config_keys

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
#: Every Markdown page a reader meets: the README, config/README.md and the site's pages.
PAGES = [REPO / "README.md", REPO / "config" / "README.md", *sorted(DOCS.rglob("*.md"))]


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# --- the site ---------------------------------------------------------------------------------


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link or anchor, a page missing from the navigation or
    a file a snippet names that is not there fails the build."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # no notice of Material's successor
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "reference" / "config" / "index.html").is_file()
    page = (tmp_path / "site" / "tutorials" / "your_own_stories" / "index.html").read_text()
    quick = html.unescape(re.sub(r"<[^>]+>", "", page))  # the text, highlighting spans removed
    assert "cat > my_study.yaml" in quick  # the README's quick start, shown from its one place


def test_every_page_of_docs_is_in_the_navigation() -> None:
    nav = text_of(REPO / "mkdocs.yml")
    listed = set(re.findall(r"([\w/]+\.md)\s*$", nav, re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == listed, (pages - listed, listed - pages)


def test_install_dev_installs_the_pinned_site_tools() -> None:
    pins = text_of(REPO / "requirements-dev.txt")
    assert re.search(r"^mkdocs==\d", pins, re.M) and re.search(r"^mkdocs-material==\d", pins, re.M)
    assert "pip install -q -r requirements-dev.txt" in text_of(REPO / "install.sh")


# --- the generated reference ------------------------------------------------------------------


@pytest.mark.parametrize("page", sorted(docs_reference.pages()), ids=lambda p: p.name)
def test_a_generated_page_is_what_the_code_gives_now(page: Path) -> None:
    assert text_of(page) == docs_reference.pages()[page], (
        f"{page.relative_to(REPO)} is stale: run .venv/bin/python tools/docs_reference.py"
    )


def test_the_check_names_a_stale_page(tmp_path: Path, monkeypatch, capsys) -> None:
    page = tmp_path / "config.md"
    page.write_text(docs_reference.config_page() + "\nedited by hand\n")
    monkeypatch.setattr(docs_reference, "CONFIG_PAGE", page)
    monkeypatch.setattr(docs_reference, "TABLES_PAGE", tmp_path / "tables.md")
    monkeypatch.setattr(docs_reference, "REPO", tmp_path)
    assert docs_reference.main(["--check"]) == 1
    assert "config.md is stale" in capsys.readouterr().out
    assert docs_reference.main([]) == 0 and docs_reference.main(["--check"]) == 0


def test_the_config_reference_has_every_key_with_its_type_and_default() -> None:
    schema = load_schema(docs_reference.SCHEMA)
    keys = {key.path: key for key in config_keys(schema)}
    # a key of a measure's part, a key under a name you choose, a key of one source form
    threads = keys["models[].device.threads"]
    assert (threads.kind, threads.default, threads.allowed) == (
        "integer",
        "2",
        "an integer of at least 1",
    )
    assert "changes no result" in threads.description
    assert keys["nll.max_history"].default == "9"
    assert keys["corpora.<name>.path"].kind == "string"
    assert keys["models[].source.server.tokenizer"]
    assert keys["hippocorpus.contrasts"].allowed.startswith(
        "a list of at least 1 item(s) (each item: a block"
    )

    # every block of properties in the schema, its parts inlined, has each of its keys listed
    def leaves(node: dict, path: str) -> list[str]:
        found = []
        for name, sub in node.get("properties", {}).items():
            found.append(f"{path}{name}")
            if isinstance(sub, dict) and "properties" in sub:
                found += leaves(sub, f"{path}{name}.")
        return found

    assert set(leaves(schema, "")) <= set(keys)
    page = text_of(docs_reference.CONFIG_PAGE)
    assert all(f"| `{path}` |" in page for path in keys)


def test_the_tables_reference_has_every_table_and_column() -> None:
    page = text_of(docs_reference.TABLES_PAGE)
    exported = {
        name: value for name, value in vars(tables).items() if isinstance(value, tables.Table)
    }
    assert len(exported) > 50
    for table in exported.values():
        section = page[page.index(f"### {table.name}\n") :]
        for column, dtype in table.columns.items():
            assert f"| `{column}` | {dtype} |" in section, (table.name, column)


# --- the README -------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading (lower case, punctuation dropped, spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_is_short_and_its_contents_link_its_sections() -> None:
    assert len(README.splitlines()) <= 250
    contents = README[
        README.index("## Contents\n") : README.index("\n## ", README.index("## Contents"))
    ]
    links = re.findall(r"\]\(#([\w-]+)\)", contents)
    headings = [slug(h) for h in re.findall(r"^## (.+)$", README, re.M)]
    assert links == [h for h in headings if h != "contents"]


def test_the_readme_order_is_the_users() -> None:
    order = ["## What it measures", "## Set-up and the two commands",
             "## Quick start: your own stories", "## What comes out", "## Models",
             "## Cluster and GPUs", "## Did the papers replicate?",
             "## Citing and licence"]  # fmt: skip
    assert [README.index(h) for h in order] == sorted(README.index(h) for h in order)
    assert "![" in README[: README.index("## Contents")]  # a picture of the report first


def test_every_link_of_the_readme_reaches_a_file_and_its_heading() -> None:
    """Each relative link reaches a file (the main job's record is written by its run), and
    each anchor into a Markdown file a heading of it, as GitHub names headings."""
    for target, anchor in re.findall(r"\]\(([^)#\s]+)(?:#([^)]*))?\)", README):
        if target.startswith("http") or target == "benchmarks/main_job.md":
            continue
        assert (REPO / target).exists(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", text_of(REPO / target), re.M)
            assert anchor in {slug(h) for h in headings}, f"{target}#{anchor}"


# --- one number, one place; one statement, one place ------------------------------------------

#: How the default run's duration was once stated, each page its own figure (issue 58).
DURATIONS = re.compile(
    r"about an hour|near an hour|about 40 minutes|40 to 100 minutes|1 h 0 min|\b61 min|\b71 min",
    re.IGNORECASE,
)


def current_text(path: Path) -> str:
    """A page less its dated records of past runs (docs/replication.md's and
    docs/regression.md's "Measured" sections report a run; they do not say how long the default
    takes)."""
    text = text_of(path)
    for marker in ("\n## Measured\n", "\n### Measured: "):
        if path.parent == DOCS and marker in text:
            text = text[: text.index(marker)]
    return text


def test_the_default_runs_duration_is_one_record_linked_from_the_readme() -> None:
    assert README.count("](benchmarks/main_job.md)") == 1
    for path in [*PAGES, REPO / "config" / "config.yaml"]:
        found = DURATIONS.search(current_text(path))
        assert not found, (
            f"{path.relative_to(REPO)} states the default run's time: {found.group(0)!r}"
        )
    assert '--8<-- "benchmarks/main_job.md"' in text_of(DOCS / "reference" / "main_job.md")


#: Statements made once, each in its home section; every other paragraph that touches one links
#: there instead of saying it again.
STATEMENTS = {
    "which jobs request a GPU": (
        re.compile(r"\brequests? (?:a|one|no) GPU|\bGPU (?:is )?requested", re.IGNORECASE),
        "cluster.md#gpu-jobs-one-recipe",
    ),
    "whether a served model scores NLLs": (
        re.compile(
            r"served model[^.|]{0,80}\b(?:NLLs?|scored for NLL)\b"
            r"|\bNLLs? (?:from|of|on) a served model",
            re.IGNORECASE,
        ),
        "lm.md#sequentiality-nlls-from-a-served-model",
    ),
}
#: What the docs once said against the code: issue 54's claims (tests/test_readme.py, which
#: checks the README and docs/cluster.md) and issue 58's, on every page.
CONTRADICTIONS = re.compile(
    test_readme.CONTRADICTIONS.pattern + r"|served model is never (?:materialised nor )?scored",
    re.IGNORECASE,
)


def paragraphs(path: Path) -> list[str]:
    """The page's paragraphs, each table row one of its own, code blocks left out."""
    text = re.sub(r"```.*?```", "", current_text(path), flags=re.S)
    found = []
    for block in re.split(r"\n\s*\n", text):
        rows = block.strip().splitlines()
        if rows and all(row.startswith("|") for row in rows):
            found += rows
        else:
            found.append(" ".join(block.split()))
    return found


@pytest.mark.parametrize("statement", sorted(STATEMENTS))
def test_a_statement_is_made_once_and_linked_elsewhere(statement: str) -> None:
    pattern, home = STATEMENTS[statement]
    home_page = DOCS / home.split("#")[0]
    unlinked = [
        f"{path.relative_to(REPO)}: {paragraph[:200]}"
        for path in PAGES
        if path != home_page and path.parent != DOCS / "reference"  # the schema's words
        for paragraph in paragraphs(path)
        if pattern.search(paragraph) and home not in paragraph
    ]
    assert not unlinked, f"{statement}, said without linking {home}:\n" + "\n".join(unlinked)


def test_no_page_repeats_a_claim_the_code_does_not_make() -> None:
    for path in PAGES:
        found = CONTRADICTIONS.search(" ".join(current_text(path).split()))
        assert not found, f"{path.relative_to(REPO)} says {found.group(0)!r}"


def test_the_served_nll_section_says_what_the_planning_does() -> None:
    """The home of the served-NLL statement says a served model with the role sequentiality is
    planned like a local one, with its tokenizer and the completions API; the planning takes
    such a model for NLL scoring (and asks no GPU for it) and refuses one without a tokenizer
    or on the chat API. (The GPU sentence is kept equal to a dry run by tests/test_readme.py.)"""
    from conftest import model_entry

    from storyflow.errors import StoryflowError
    from storyflow.lm.specs import ModelSpec
    from storyflow.plan import models, roles
    from storyflow.plan.registry import roles as every_role

    section = text_of(DOCS / "lm.md").split("### Sequentiality NLLs from a served model")[1]
    assert section.lstrip().startswith("A served model with the role `sequentiality` is planned")
    assert "tokenizer" in section[:600] and "completions" in section[:1500]
    nll = next(role for role in every_role() if role.name == "sequentiality")
    assert nll.scores_text

    def served(**server: object) -> dict:
        source = {"server": {"base_url": "http://x/v1", "model": "m", **server}}
        return model_entry(name="served", source=source, roles=["sequentiality"])

    entry = served(tokenizer="org/name")
    assert roles.role_models({"models": [entry]}, "sequentiality", None, nll) == ["served"]
    assert models.gpus(ModelSpec.from_config(entry)) == 0
    for refused in (served(), served(tokenizer="org/name", api="chat")):
        with pytest.raises(
            StoryflowError, match=r"give it source\.server\.tokenizer and api: completions"
        ):
            roles.role_models({"models": [refused]}, "sequentiality", None, nll)
