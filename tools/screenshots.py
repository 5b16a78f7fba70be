"""Screenshots of a finished run's report and story explorer, as a reader's browser shows them.

    .venv/bin/python tools/screenshots.py --report report.zip \\
        --explorer results/hippocorpus/comparison/story_explorer.html --story <story id> \\
        --out docs/images --size 1400x900

writes ``report_first_page.png`` (the report as it opens: its first page beside the rule graph)
and ``explorer_story.png`` (the explorer with ``--story`` selected; without it, the first story
of the table) in ``--out``, at ``--size`` (width x height, CSS pixels). ``--report`` is the file
``snakemake --report`` wrote: a self-contained ``report.html`` or a ``report.zip`` (unpacked to
a temporary folder first). The pictures in docs/explorer.md are this command's output on the
run named there; run it again on a new run to replace them.

Headless Chromium draws the pages (``chromium``, ``chromium-browser`` or ``google-chrome`` on
the PATH; ``./install.sh --dev`` installs it); scripts get 15 s of virtual time to finish, so
the report's rule graph and the explorer's story are drawn before the picture is taken.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import quote

#: Virtual time (ms) a page's scripts get before Chromium dumps or draws it.
BUDGET_MS = 15000


def find_chromium() -> str | None:
    """The path of a headless-capable Chromium, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium(*args: str, binary: str | None = None, timeout: float = 180) -> str:
    """Run headless Chromium (no sandbox: CI runs as root) with ``args``; its stdout."""
    binary = binary or find_chromium()
    if binary is None:
        raise SystemExit("Chromium not found: ./install.sh --dev installs it")
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--virtual-time-budget={BUDGET_MS}", *args]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    return done.stdout


def report_page(report: Path, folder: Path) -> Path:
    """The report's HTML page: ``report`` itself, or the ``report.html`` inside a report.zip
    (unpacked into ``folder``)."""
    if report.suffix != ".zip":
        return report
    with zipfile.ZipFile(report) as archive:
        archive.extractall(folder)
    pages = sorted(folder.rglob("report.html"))
    if not pages:
        raise SystemExit(f"{report}: no report.html inside")
    return pages[0]


def screenshot(url: str, out: Path, size: tuple[int, int]) -> Path:
    """A PNG of the page at ``url`` in a window of ``size`` (width, height) CSS pixels."""
    out.parent.mkdir(parents=True, exist_ok=True)
    chromium(f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", url)
    return out


def size_of(text: str) -> tuple[int, int]:
    """``1400x900`` as (1400, 900)."""
    width, _, height = text.lower().partition("x")
    return int(width), int(height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", type=Path, help="report.html or report.zip of a run")
    parser.add_argument("--explorer", type=Path, help="a story_explorer.html of the same run")
    parser.add_argument("--story", help="the story the explorer shows (default: its first)")
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument("--size", type=size_of, default=(1400, 900), help="WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    if not (args.report or args.explorer):
        parser.error("give --report, --explorer or both")
    with tempfile.TemporaryDirectory() as folder:
        if args.report:
            page = report_page(args.report.resolve(), Path(folder))
            shot = screenshot(page.as_uri(), args.out / "report_first_page.png", args.size)
            print(f"{shot}: {args.report} at {args.size[0]}x{args.size[1]}")
        if args.explorer:
            url = args.explorer.resolve().as_uri()
            if args.story:
                url += f"#story={quote(args.story)}"
            shot = screenshot(url, args.out / "explorer_story.png", args.size)
            print(f"{shot}: {args.explorer} ({args.story or 'first story'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
