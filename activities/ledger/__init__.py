"""The PostgreSQL ledger (schema `research`): every run's rows, SQL by table family.

`Ledger` (`repository`) owns connections and transactions; the SQL lives in the modules next to it.
"""

from activities.ledger.base import LedgerConflict, LedgerError, RunIdTaken, UnknownRun
from activities.ledger.executions import ExecutionRow, ForkPoint
from activities.ledger.repository import Ledger, activity_execution, ledger_errors
from activities.ledger.review import RunListing, RunRows
from activities.ledger.runs import RunRecord
from activities.ledger.sources import StoredSource

__all__ = [
    "ExecutionRow",
    "ForkPoint",
    "Ledger",
    "LedgerConflict",
    "LedgerError",
    "RunIdTaken",
    "RunListing",
    "RunRecord",
    "RunRows",
    "StoredSource",
    "UnknownRun",
    "activity_execution",
    "ledger_errors",
]
