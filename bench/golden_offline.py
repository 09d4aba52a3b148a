"""The offline policy on the labelled golden briefs over real documentation (a baseline for eval).

    .venv/bin/python -m bench.golden_offline [HTML_ROOT]

Serves HTML_ROOT (default: Debian's `python3.11-doc`, /usr/share/doc/python3.11/html) as the
corpus host of `examples/golden/python311-docs.json` on the embedded stack, runs every brief with
the offline policy and default limits, and prints each run's end, then: runs by status and stop
reason, question recall (a question with evidence from a labelled page) and how much recorded
evidence sits on a labelled page. Figures only.
"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from runtime.devstack import EmbeddedStack, embedded_stack
from runtime.settings import PROJECT_ROOT, Settings
from starter.local import background_worker
from starter.runs import new_run_id, start_run
from workflows.models import Brief, RunResult

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")
GOLDEN = PROJECT_ROOT / "examples" / "golden" / "python311-docs.json"
_EVIDENCE = """
SELECT e.question_id, s.url
FROM research.evidence e JOIN research.sources s USING (run_id, source_id)
WHERE e.run_id = %s
"""


async def bench(root: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    with tempfile.TemporaryDirectory(prefix="bench-golden-") as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        (corpus / golden["host"]).symlink_to(root)
        settings = replace(
            Settings.from_env(),
            state_dir=Path(scratch) / "state",
            corpus_dir=corpus,
            temporal_address="127.0.0.1:27998",
            ui_port=28998,
        )
        async with embedded_stack(settings) as stack, background_worker(stack):
            await _run_all(stack, golden)


async def _run_all(stack: EmbeddedStack, golden: dict[str, Any]) -> None:
    ends: collections.Counter[str] = collections.Counter()
    recalled = questions = on_label = recorded = 0
    for entry in golden["briefs"]:
        brief = Brief.model_validate(
            {
                "question": entry["question"],
                "allowed_hosts": [golden["host"]],
                "questions": [{"id": q["id"], "text": q["text"]} for q in entry["questions"]],
            }
        )
        labels = {
            q["id"]: {f"https://{golden['host']}/{page}" for page in q["pages"]}
            for q in entry["questions"]
        }
        run_id, started = new_run_id(), time.perf_counter()
        result: RunResult = await (
            await start_run(stack.client, stack.settings, brief, run_id)
        ).result()
        with psycopg.connect(stack.database_url) as conn:
            rows = conn.execute(_EVIDENCE, (run_id,)).fetchall()
        questions += len(labels)
        recalled += sum(
            any(q == qid and url in pages for q, url in rows) for qid, pages in labels.items()
        )
        recorded += len(rows)
        on_label += sum(url in labels.get(qid, set()) for qid, url in rows)
        ends[f"{result.status.value}/{result.stop_reason.value}"] += 1
        print(
            f"{result.status.value:10} {result.stop_reason.value:26} "
            f"steps {result.counters.steps:3} evidence {result.evidence_count} "
            f"{time.perf_counter() - started:5.1f} s  "
            f"{entry['question']}",
            flush=True,
        )
    print()
    print("runs: " + ", ".join(f"{end} {count}" for end, count in ends.most_common()))
    print(f"question recall: {recalled} of {questions}")
    print(f"evidence on a labelled page: {on_label} of {recorded}")


if __name__ == "__main__":
    asyncio.run(bench(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_ROOT))
