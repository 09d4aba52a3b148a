"""`research audit`: consistency checks of one run over its ledger rows, its report and its
workflow history (`checks` runs them and tables the results)."""

from starter.audit.base import CHECKS, AuditData, Check
from starter.audit.checks import CheckResult, audit_table, run_checks

__all__ = ["CHECKS", "AuditData", "Check", "CheckResult", "audit_table", "run_checks"]
