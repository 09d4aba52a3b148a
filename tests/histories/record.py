"""Record histories for the replay test: `python -m tests.histories.record [SCENARIO ...]`.

Runs the sample brief with the offline policy on a local Temporal dev server and an embedded
PostgreSQL (both temporary), then writes the workflow history as JSON beside this file. Re-record
only on purpose: a history that no longer replays means running workflows would break.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.ledger import Ledger
from activities.model import ModelActivities
from activities.pages import build_http_client
from activities.research import ResearchActivities
from activities.search import CorpusSearch, index_corpus
from runtime.converter import DATA_CONVERTER
from runtime.database import apply_migrations, open_pool, start_embedded_postgres
from runtime.settings import PROJECT_ROOT, Settings
from tests.conftest import installed_binary
from workflows.models import Brief
from workflows.research import STATUS_KEY, STOP_REASON_KEY, ResearchWorkflow

HERE = Path(__file__).parent
BRIEF = PROJECT_ROOT / "examples" / "briefs" / "harborq-failures.json"


# Scenario name -> limits overriding the sample brief's (a completed run, and one stopped early).
SCENARIOS: dict[str, dict[str, int]] = {
    "demo-offline": {},
    "step-limit-offline": {"max_steps": 4},
}


async def record(name: str) -> None:
    with tempfile.TemporaryDirectory(prefix="hist-") as scratch:
        server, url = start_embedded_postgres(Path(scratch) / "pg")
        try:
            apply_migrations(url)
            await _run(url, HERE / f"{name}.json", SCENARIOS[name])
        finally:
            server.cleanup()


async def _run(url: str, target: Path, limits: dict[str, int]) -> None:
    settings = Settings.from_env({})
    pool = await open_pool(url)
    ledger = Ledger(pool)
    await index_corpus(ledger, settings.corpus_dir, max_chars=settings.max_snapshot_chars)
    env = await WorkflowEnvironment.start_local(
        data_converter=DATA_CONVERTER,
        dev_server_existing_path=installed_binary("temporal"),
        search_attributes=[STATUS_KEY, STOP_REASON_KEY],
    )
    research = ResearchActivities(
        ledger, build_http_client(settings), settings, CorpusSearch(ledger)
    )
    model = ModelActivities(settings, ledger, None)
    brief = Brief.model_validate_json(BRIEF.read_text())
    brief = brief.model_copy(update={"limits": brief.limits.model_copy(update=limits)})
    try:
        async with Worker(
            env.client,
            task_queue="research",
            workflows=[ResearchWorkflow],
            activities=[*model.definitions(), *research.definitions()],
        ):
            handle = await env.client.start_workflow(
                ResearchWorkflow.run, brief, id=f"{target.stem}-recorded", task_queue="research"
            )
            result = await handle.result()
            history = await handle.fetch_history()
        target.write_text(history.to_json())
        print(f"{result.status} / {result.stop_reason}: {len(history.events)} events -> {target}")
    finally:
        await env.shutdown()
        await pool.close()


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        asyncio.run(record(name))
