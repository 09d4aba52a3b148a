"""The README's demo path end to end: `research demo` as a user runs it, then the README's SQL,
then the review page it names, opened in headless Chromium (tests/system/browser.py): it loads
nothing, logs nothing, and highlights each quote exactly as the ledger holds it.

RESEARCH_REVIEW_SCREENSHOT=docs/review-page.png refreshes the screenshot docs/operations.md shows;
RESEARCH_README_DEMO=write writes the demo's output into the README (which this test compares).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from runtime.database import start_embedded_postgres
from runtime.settings import PROJECT_ROOT
from tests.conftest import GUARDED_PYTHONPATH, free_port
from tests.system.browser import chromium, chromium_path

README_QUERY = """
SELECT e.evidence_id, e.question_id, e.stance, e.quote, e.passage_id, s.url, s.content_hash
FROM research.evidence e
JOIN research.sources s USING (run_id, source_id)
WHERE e.run_id = %s
ORDER BY e.evidence_id
"""


# Each highlighted quote of the page, by its evidence id, as the browser's DOM has it.
MARKS = (
    "JSON.stringify([...document.querySelectorAll('mark.quote')]"
    ".map(mark => [mark.dataset.evidence, mark.textContent]))"
)
PAGE_BACKGROUND = "rgb(246, 247, 249)"  # starter/page/style.py's: its style sheet applied


@dataclass(frozen=True)
class DemoRun:
    output: str
    run_id: str
    evidence: int
    rows: list[tuple[str, ...]]  # README_QUERY's
    state: Path  # its state folder


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`research demo` once, in a state folder and on ports of its own; the ledger's rows."""
    home = tmp_path_factory.mktemp("demo")
    state = home / "state"
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "PYTHONPATH": GUARDED_PYTHONPATH,
        "HOME": str(home),
        "RESEARCH_STATE_DIR": str(state),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "RESEARCH_UI_PORT": str(free_port()),
    }
    research = Path(sys.executable).parent / "research"
    done = subprocess.run(
        [str(research), "demo"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = done.stdout
    assert done.returncode == 0, output + done.stderr
    run_id = re.search(r"^Run: (\S+)$", output, re.MULTILINE).group(1)  # type: ignore[union-attr]
    evidence = int(re.search(r"Evidence: (\d+)", output).group(1))  # type: ignore[union-attr]
    server, url = start_embedded_postgres(state / "pg")
    try:
        with psycopg.connect(url) as connection:
            rows = connection.execute(README_QUERY, (run_id,)).fetchall()
    finally:
        server.cleanup()
    return DemoRun(output, run_id, evidence, rows, state)


@pytest.mark.timeout(300)
def test_demo_completes_and_the_ledger_shows_its_evidence(demo: DemoRun) -> None:
    output = demo.output
    assert (
        "Status: completed: rules only, meaning not checked | Stop: coverage_gate_passed" in output
    )
    assert re.search(r"^step 1/20  search ", output, re.MULTILINE), output
    assert demo.evidence >= 2
    assert f"/namespaces/default/workflows/{demo.run_id}" in output
    assert "## Evidence" in output and "```text\n" in output  # the Markdown report, its quotes
    assert len(demo.rows) == demo.evidence
    assert len({row[6] for row in demo.rows}) >= 2, "at least two independent sources"
    for _, _, _, quote, _, _, _ in demo.rows:
        assert f"```text\n{quote}\n```" in output  # the report quotes exactly what the ledger holds


@pytest.mark.timeout(300)
async def test_the_demo_names_its_review_page_and_a_browser_shows_it(
    demo: DemoRun, tmp_path: Path
) -> None:
    last = demo.output.rstrip("\n").splitlines()[-1]
    named = re.fullmatch(r"Review page: (\S+) \(open it in a browser; it loads nothing\)", last)
    assert named, f"the demo ends by naming its review page: {last}"
    page_file = Path(named[1])
    assert page_file.is_file() and demo.run_id in page_file.name
    executable = chromium_path()
    if executable is None:
        pytest.skip(
            "no Chromium on this machine (`make browser` installs the distribution's package "
            "where apt-get runs as root): the review page was not opened in a browser"
        )

    async with chromium(executable) as browser:
        visit = await browser.open(page_file.as_uri())
        marks = json.loads(await browser.evaluate(MARKS))
        background = await browser.evaluate("getComputedStyle(document.body).backgroundColor")
        await browser.screenshot(tmp_path / "review-page.png", width=1000, height=1800)

    assert visit.requests == [page_file.as_uri()], "the page itself, and no other request"
    assert visit.messages == [], "no console message, no CSP violation, no error"
    assert background == PAGE_BACKGROUND, "its one inline style sheet applied"
    assert dict(marks) == {row[0]: row[3] for row in demo.rows}, "each quote as the ledger's"
    assert (tmp_path / "review-page.png").read_bytes().startswith(b"\x89PNG")
    if target := os.environ.get("RESEARCH_REVIEW_SCREENSHOT"):
        shutil.copyfile(tmp_path / "review-page.png", PROJECT_ROOT / target)


README = PROJECT_ROOT / "README.md"
README_OUTPUT = re.compile(r"(## What you should see\n.*?\n```\n)(.*?\n)(```\n)", re.S)
# What changes from run to run, and from machine to machine: the same word in both.
VARYING = [
    (re.compile(r"research-demo-[0-9a-f]{8}"), "<queue>"),
    (re.compile(r"wf-[0-9a-f]{12}"), "<build>"),
    (re.compile(r"research-[a-z0-9-]+-[0-9a-f]{6}\b|research-[0-9a-f]{8}\b"), "<run>"),
]


def _as_readme_shows(demo: DemoRun) -> str:
    """The demo's output as the README shows it: the state folder as `/…/.research`, the default
    ports, and the report between its title and the Web UI link cut to one line."""
    output = demo.output.replace(str(demo.state), "/…/.research")
    output = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:7233", output)
    lines = re.sub(r"localhost:\d+", "localhost:8233", output).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    link = next(i for i, line in enumerate(lines) if line.startswith("Web UI: "))
    cut = f"... (answer, findings citing E001..E{demo.evidence:03d}, each quote with its passage"
    return (
        "\n".join([*lines[: title + 1], f"{cut} and URL, limitations)", "", *lines[link:]]) + "\n"
    )


def _same_words(text: str) -> str:
    for pattern, word in VARYING:
        text = pattern.sub(word, text)
    return text


@pytest.mark.timeout(300)
def test_the_readme_shows_what_the_demo_prints(demo: DemoRun) -> None:
    shown = _as_readme_shows(demo)
    readme = README.read_text(encoding="utf-8")
    if os.environ.get("RESEARCH_README_DEMO") == "write":
        README.write_text(README_OUTPUT.sub(lambda m: m[1] + shown + m[3], readme, count=1))
        readme = README.read_text(encoding="utf-8")
    block = README_OUTPUT.search(readme)

    assert block is not None, "the README's 'What you should see' has the demo's output"
    assert _same_words(block[2]) == _same_words(shown), (
        "the README's demo output differs from what the demo printed: "
        "RESEARCH_README_DEMO=write refreshes it"
    )
