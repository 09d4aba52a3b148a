"""Integration-test fixtures: a connection pool and a ledger on each PostgreSQL `pg_url` names."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.ledger import Ledger
from runtime.database import Pool, open_pool


@pytest.fixture
async def pool(pg_url: str) -> AsyncIterator[Pool]:
    opened = await open_pool(pg_url, max_size=4)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def ledger(pool: Pool) -> Ledger:
    return Ledger(pool)
