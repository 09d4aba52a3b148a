"""Counts and tables in the README and docs/ that the code decides are checked against it, so they
cannot drift: the audit's checks (their number wherever a page gives it, the table of an all-ok
audit in docs/operations.md, how many compare with the history). The demo's output in the README
is checked by tests/system/test_demo.py, which runs it."""

from __future__ import annotations

import re

from runtime.settings import PROJECT_ROOT
from starter.audit.checks import CHECKS, ORDER, CheckResult, audit_table

PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
NUMBER_WORDS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14}


def _ordered() -> list[CheckResult]:
    """Every check as an all-ok audit lists them (`run_checks`'s order)."""
    checks = sorted(CHECKS, key=lambda check: ORDER.index(check.run.__module__))
    return [CheckResult(check, []) for check in checks]


def test_every_count_of_the_audits_checks_is_their_number() -> None:
    stated = [
        (page.name, int(count))
        for page in PAGES
        for count in re.findall(r"\b(\d+) (?:consistency )?checks\b", page.read_text())
    ]

    assert stated, "the pages give the number somewhere"
    assert [count for _, count in stated if count != len(CHECKS)] == [], stated


def test_the_all_ok_audit_in_the_operations_page_is_the_audits_own_table() -> None:
    text = (PROJECT_ROOT / "docs" / "operations.md").read_text()
    shown = re.search(
        r"^(CHECK +RESULT +GUARDS / PROBLEM\n.*?^\d+ checks: .*?)$", text, re.M | re.S
    )

    assert shown is not None
    assert shown[1].splitlines() == audit_table(_ordered())


def test_the_number_of_history_checks_is_stated_as_it_is() -> None:
    text = (PROJECT_ROOT / "docs" / "operations.md").read_text()
    word = re.search(r"skips the\s+(\w+) history checks", text)

    assert word is not None
    assert NUMBER_WORDS[word[1]] == sum(check.needs_history for check in CHECKS)
