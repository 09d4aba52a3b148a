"""`research audit`: consistency checks of one run over its ledger rows, its report and its
workflow history, each a small pure function over the loaded data (`AuditData`).

Checks live by subject: `ledger` (snapshots, passages, quotes, IDs, counters), `flow` (steps,
turns, searches, which URLs were read, bounds, stop reason), `report` (the saved report against the
gate, the composer and the renderer), `meaning` (the verifier's verdicts) and `recorded` (the
ledger against the workflow history).
"""

from __future__ import annotations

from dataclasses import dataclass

from starter.audit import flow, ledger, meaning, recorded, report  # each registers its checks
from starter.audit.base import CHECKS, AuditData, Check

__all__ = ["CHECKS", "AuditData", "Check", "CheckResult", "audit_table", "run_checks"]

MAX_DETAIL = 110  # characters of the first problem shown in the table
# The table's order: the rows themselves, how the run went, its report, then the history.
ORDER = [module.__name__ for module in (ledger, flow, report, meaning, recorded)]


@dataclass(frozen=True)
class CheckResult:
    check: Check
    problems: list[str]
    skipped: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.problems)

    @property
    def word(self) -> str:
        return "skip" if self.skipped else "FAIL" if self.failed else "ok"


def run_checks(data: AuditData) -> list[CheckResult]:
    """Every check, in table order; a history check is skipped when there is no history."""
    results = []
    for check in sorted(CHECKS, key=lambda check: ORDER.index(check.run.__module__)):
        if check.needs_history and data.history is None:
            results.append(CheckResult(check, [], skipped=True))
        else:
            results.append(CheckResult(check, list(check.run(data))))
    return results


def audit_table(results: list[CheckResult]) -> list[str]:
    """`check  result  what it guards (or what failed)`, then a count line."""
    width = max(len(result.check.name) for result in results)
    lines = [f"{'CHECK'.ljust(width)}  RESULT  GUARDS / PROBLEM"]
    for result in results:
        detail = result.check.guards if not result.failed else _problem(result.problems)
        if result.skipped:
            detail = "no workflow history to compare with"
        lines.append(f"{result.check.name.ljust(width)}  {result.word.ljust(6)}  {detail}")
    failed = sum(result.failed for result in results)
    skipped = sum(result.skipped for result in results)
    passed = len(results) - failed - skipped
    lines.append(f"{len(results)} checks: {passed} ok, {failed} failed, {skipped} skipped")
    return lines


def _problem(problems: list[str]) -> str:
    first = " ".join(problems[0].split())
    if len(first) > MAX_DETAIL:
        first = first[: MAX_DETAIL - 3] + "..."
    return first + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
