"""The PostgreSQL ledger (schema `research`): every run's rows, plain SQL by table family.

It holds no rules and imports no fetcher: callers hand it domain rows (`Snapshot`, `Evidence`).

`Ledger` (`repository`) owns connections and transactions; the SQL lives in the modules next to it.
"""

from activities.ledger.base import LedgerConflict, LedgerError, RunIdTaken, UnknownRun
from activities.ledger.evidence import EvidenceRows, QuotableSource, StoredPassage
from activities.ledger.executions import ExecutionRow
from activities.ledger.repository import Ledger, ledger_errors
from activities.ledger.review import RunListing, RunRows
from activities.ledger.runs import RunRecord
from activities.ledger.scoped import RunLedger
from activities.ledger.sources import PassageRow, Snapshot, StoredSource, passage_id
from workflows.scope import ForkPoint

__all__ = [
    "EvidenceRows",
    "ExecutionRow",
    "ForkPoint",
    "Ledger",
    "LedgerConflict",
    "LedgerError",
    "PassageRow",
    "QuotableSource",
    "RunIdTaken",
    "RunLedger",
    "RunListing",
    "RunRecord",
    "RunRows",
    "Snapshot",
    "StoredPassage",
    "StoredSource",
    "UnknownRun",
    "ledger_errors",
    "passage_id",
]
