"""`research search` as a user runs it: the corpus search, ranked, as the agent sees it."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from activities.ledger import Ledger
from tests.system.conftest import cli_env
from tests.system.conftest import research as research_cli

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]


def research(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(DATABASE_URL=database_url, RESEARCH_SEARCH_PROVIDER="corpus")
    return research_cli(env, *args, timeout=60)


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


def test_corpus_index_takes_one_hosts_folder_from_anywhere(
    embedded_pg_url: str, tmp_path: Path
) -> None:
    host = f"notes-{uuid.uuid4().hex[:8]}.example"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "vacuum.md").write_text(
        "# Vacuum\n\nAutovacuum reclaims the space of dead tuples in the background.\n"
    )

    indexed = research(embedded_pg_url, "corpus", "index", str(tmp_path / "notes"), "--host", host)
    assert indexed.returncode == 0, indexed.stderr
    assert f"indexed {host}: 1 documents from {tmp_path / 'notes'}" in indexed.stdout
    found = research(embedded_pg_url, "search", "autovacuum dead tuples", "--allow", host)
    assert found.stdout.splitlines()[1].strip() == f"https://{host}/vacuum.md"

    bad = research(embedded_pg_url, "corpus", "index", str(tmp_path), "--host", "a b")
    assert (bad.returncode, bad.stderr.strip()) == (2, "error: --host 'a b' is not a host name")
    bare = research(embedded_pg_url, "corpus", "index", str(tmp_path / "notes"))
    assert bare.returncode == 2
    assert "has no host folders (like docs.example/): name the host with --host" in bare.stderr


def test_indexing_an_empty_folder_or_the_corpus_dir_keeps_a_host_indexed_elsewhere(
    embedded_pg_url: str, tmp_path: Path
) -> None:
    host = f"kept-{uuid.uuid4().hex[:8]}.example"
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "wal.md").write_text(
        "# WAL\n\nThe write-ahead log records every change.\n"
    )
    assert (
        research(
            embedded_pg_url, "corpus", "index", str(tmp_path / "real"), "--host", host
        ).returncode
        == 0
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "data.json").write_text("{}")

    empty = research(embedded_pg_url, "corpus", "index", str(tmp_path / "empty"), "--host", host)
    assert empty.returncode == 2 and "nothing was indexed" in empty.stderr

    found = research(embedded_pg_url, "search", "write-ahead log", "--allow", host)
    assert found.stdout.splitlines()[1].strip() == f"https://{host}/wal.md"


def test_corpus_index_says_how_far_it_got_on_a_large_folder(
    embedded_pg_url: str, tmp_path: Path
) -> None:
    host = f"many-{uuid.uuid4().hex[:8]}.example"
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(450):
        (folder / f"note-{number:03}.md").write_text(f"# Note {number}\n\nThe note body.\n")

    indexed = research(embedded_pg_url, "corpus", "index", str(folder), "--host", host)
    assert indexed.returncode == 0, indexed.stderr
    lines = indexed.stdout.splitlines()
    assert lines[:4] == [
        f"indexed {host}: 200 of 450 files read so far",
        f"indexed {host}: 400 of 450 files read so far",
        f"indexed {host}: 200 of 450 documents stored so far",
        f"indexed {host}: 400 of 450 documents stored so far",
    ]
    assert lines[4] == f"indexed {host}: 450 documents from {folder}"
