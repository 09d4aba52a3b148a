"""The PostgreSQL ledger (schema `research`): every run's rows, plain SQL by table family.

It holds no rules and imports no fetcher: callers hand it domain rows (`Snapshot`, `Evidence`).

`Ledger` (`repository`) owns connections and transactions; the SQL lives in the modules next to it.
"""

from activities.ledger.base import LedgerConflict, LedgerError, RunIdTaken, UnknownRun
from activities.ledger.evidence import EvidenceRows, QuotableSource, StoredPassage
from activities.ledger.executions import ExecutionRow, ForkPoint
from activities.ledger.repository import Ledger, activity_execution, ledger_errors
from activities.ledger.review import RunListing, RunRows
from activities.ledger.runs import RunRecord
from activities.ledger.sources import PassageRow, Snapshot, StoredSource, passage_id

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
    "RunListing",
    "RunRecord",
    "RunRows",
    "Snapshot",
    "StoredPassage",
    "StoredSource",
    "UnknownRun",
    "activity_execution",
    "ledger_errors",
    "passage_id",
]
