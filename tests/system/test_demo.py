"""The README's demo path end to end: `research demo` as a user runs it, then the README's SQL."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from runtime.database import start_embedded_postgres
from runtime.settings import PROJECT_ROOT
from tests.conftest import GUARDED_PYTHONPATH, free_port

README_QUERY = """
SELECT e.evidence_id, e.question_id, e.stance, e.quote, e.passage_id, s.url, s.content_hash
FROM research.evidence e
JOIN research.sources s USING (run_id, source_id)
WHERE e.run_id = %s
ORDER BY e.evidence_id
"""


@pytest.mark.timeout(300)
def test_demo_completes_and_the_ledger_shows_its_evidence(tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "PYTHONPATH": GUARDED_PYTHONPATH,
        "HOME": str(tmp_path),
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
    assert "Status: completed | Stop: coverage_gate_passed" in output
    assert re.search(r"^step 1/20  search ", output, re.MULTILINE), output
    run_id = re.search(r"^Run: (\S+)$", output, re.MULTILINE).group(1)  # type: ignore[union-attr]
    evidence = int(re.search(r"Evidence: (\d+)", output).group(1))  # type: ignore[union-attr]
    assert evidence >= 2
    assert f"/namespaces/default/workflows/{run_id}" in output
    assert "## Evidence" in output and "```text\n" in output  # the Markdown report, its quotes

    server, url = start_embedded_postgres(state / "pg")
    try:
        with psycopg.connect(url) as connection:
            rows = connection.execute(README_QUERY, (run_id,)).fetchall()
    finally:
        server.cleanup()
    assert len(rows) == evidence
    assert len({row[6] for row in rows}) >= 2, "at least two independent sources"
    for _, _, _, quote, _, _, _ in rows:
        assert quote in output  # the report quotes exactly what the ledger holds
