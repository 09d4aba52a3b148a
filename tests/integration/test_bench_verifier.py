"""bench.verifier runs the real `verify` activity on a real ledger and writes its figures (a tiny
run: a verifier answering after 0.05 s, one finish per concurrency; no speed is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.verifier import DEFAULT, bench


async def test_the_bench_times_each_concurrency_and_writes_its_file(
    pg_url: str, tmp_path: Path
) -> None:
    written = await bench(0.05, 1, 5, database_url=pg_url, out=tmp_path / "verifier.json")
    document = json.loads(written.read_text("utf-8"))
    assert document["name"] == "verifier" and document["machine"]["cores"] >= 1
    figures = document["figures"]
    assert (figures["claims"], figures["answer_seconds"]) == (5, 0.05)
    levels = figures["seconds_per_finish"]
    assert list(levels) == ["1", str(DEFAULT), "5"]
    assert all(len(took) == 1 and took[0] > 0 for took in levels.values())
    rows = figures["rows"]
    assert [row["what"] for row in rows] == [
        "5-claim finish, verifier concurrency 1",
        f"5-claim finish, verifier concurrency {DEFAULT} (the default)",
        "5-claim finish, verifier concurrency 5 (one per claim)",
    ]
    assert "goal" not in rows[0] and rows[1]["goal"] == rows[2]["goal"] == "at most 0.075 s"
