"""`research search` as a user runs it: the corpus search, ranked, as the agent sees it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]


def research(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RESEARCH_")}
    env.update(DATABASE_URL=database_url, RESEARCH_SEARCH_PROVIDER="corpus")
    return subprocess.run(
        [sys.executable, "-m", "starter.cli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_search_prints_ranked_hits_and_the_json_the_model_sees(
    embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    allow = ["--allow", "docs.harborq.example", "--allow", "mirror.opendocs.example"]
    shown = research(embedded_pg_url, "search", "dead-letter", "queue", "replay", *allow)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "1. Dead-letter queues — Harbor Queue documentation"
    assert lines[1].strip().startswith("https://")
    assert "replay" in lines[2]

    as_json = research(embedded_pg_url, "search", "dead-letter queue replay", *allow, "--json")
    data = json.loads(as_json.stdout)
    assert set(data) == {"results", "note"}
    assert [hit["url"] for hit in data["results"]][:1] == [lines[1].strip()]
    assert all(set(hit) == {"url", "title", "snippet"} for hit in data["results"])


def test_search_says_when_nothing_is_indexed_and_refuses_bad_hosts(
    embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    empty = research(embedded_pg_url, "search", "anything", "--allow", "nothing.example")
    assert empty.returncode == 0
    assert empty.stdout.startswith("no results: the corpus has no document on these hosts")

    bad = research(embedded_pg_url, "search", "anything", "--allow", "bad host!")
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "error: allowed host 'bad host!' is not a bare host name (no scheme, port or path)"
    )
