"""A worker says one line per run when a run is cancelled mid-turn, never a traceback."""

from __future__ import annotations

import logging

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.system.test_audit_loose_ends import held_run
from tests.system.test_hostile_model import brief
from workflows.models import RunStatus

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]


async def test_cancelling_a_run_mid_turn_logs_no_traceback(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    run_id, result = await held_run(dev_client, embedded_pg_url, brief(), cancel=True)

    run = await corpus_ledger.run(run_id)
    assert result is None and run is not None and run.status == RunStatus.CANCELLED
    noisy = [
        f"{record.name} {record.levelname}: {record.getMessage()}"
        for record in caplog.records
        if record.exc_info or record.levelno >= logging.WARNING
    ]
    assert noisy == []
