"""Honest models complete: careful, correct work on the demo corpus is never refused a step.

Each scenario of `tests.fakes.honest` plays the sample brief through the OpenAI-compatible fake
server against the real workflow, activities, ledger and corpus (as the hostile scenarios do):
number words both ways, ordinals inside words, a count of listed items, a source's date and
version in the limitations, key words only in a heading, and a conflict honestly stated.
"""

from __future__ import annotations

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes import honest
from tests.system.test_hostile_model import brief, play, steps
from workflows.models import RunStatus, StopReason

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


@pytest.mark.parametrize("name", sorted(honest.SCRIPTS))
async def test_an_honest_run_completes_with_no_refused_step(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, name: str
) -> None:
    script = honest.SCRIPTS[name]()
    result, run_id, _ = await play(dev_client, embedded_pg_url, script, brief(max_steps=30))

    refused = [(row["step"], row["tool"], row["error"]) for row in steps(embedded_pg_url, run_id)
               if not row["ok"]]  # fmt: skip
    assert refused == [], "\n".join(map(str, refused))
    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
