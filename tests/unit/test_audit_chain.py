"""Tamper evidence: `research audit` recomputes the steps' and the evidence's hash chains and
names the row that was edited, deleted or moved (on tests/exports' completed run, chained as the
ledger chains rows since migration 011)."""

from __future__ import annotations

from activities.ledger import RunRows
from activities.ledger.chain import entry_fields, evidence_link, step_link
from starter.audit import AuditData, run_checks
from starter.audit.ledger import evidence_fields, step_fields
from tests.unit.test_audit import recorded
from workflows.transcript import TranscriptEntry


def chained(rows: RunRows) -> RunRows:
    """The run's rows with the chain links and report heads the ledger writes."""
    run_id, previous = rows.run.run_id, ""
    for step in rows.steps:
        step.chain = previous = step_link(previous, step_fields(run_id, step))
    previous = ""
    for evidence in rows.evidence:
        evidence.chain = previous = evidence_link(previous, evidence_fields(run_id, evidence))
    assert rows.report is not None
    rows.report.steps_chain, rows.report.evidence_chain = rows.steps[-1].chain, previous
    return rows


def problems(rows: RunRows) -> dict[str, list[str]]:
    return {r.check.name: r.problems for r in run_checks(AuditData(rows)) if r.failed}


def demo() -> RunRows:
    return chained(recorded("demo")[0])


def test_a_chained_run_passes_and_its_links_are_set() -> None:
    rows = demo()
    assert problems(rows) == {}
    assert all(step.chain for step in rows.steps) and all(e.chain for e in rows.evidence)


def test_an_edited_step_is_named() -> None:
    rows = demo()
    rows.steps[4].summary = "read S9 somewhere.example (1 passage)"
    assert problems(rows)["steps-chain"] == [
        "step 5: does not hash to its chain link (the row was edited, or a row before it was "
        "deleted or moved)"
    ]


def test_a_deleted_step_breaks_the_link_of_the_next_and_the_last_one_the_report_head() -> None:
    rows = demo()
    rows.steps.pop(2)
    assert problems(rows)["steps-chain"][0].startswith("step 4: does not hash")
    rows = demo()
    rows.steps.pop()
    assert problems(rows)["steps-chain"] == [
        "the report's last step hash is not the last row's (a row was deleted or added)"
    ]


def test_reordered_steps_are_named() -> None:
    rows = demo()
    second, third = rows.steps[1], rows.steps[2]
    second.step, third.step = 3, 2
    rows.steps[1:3] = [third, second]
    found = problems(rows)["steps-chain"]
    # The two renumbered rows, and the one after them, whose link was the old step 3's.
    assert [problem.split(":")[0] for problem in found] == ["step 2", "step 3", "step 4"]


def test_a_removed_link_is_named() -> None:
    rows = demo()
    rows.steps[3].chain = None
    assert "step 4: no chain hash after chained rows" in problems(rows)["steps-chain"][0]


def test_edited_deleted_and_reordered_evidence_is_named() -> None:
    rows = demo()
    rows.evidence[1].claim = "Forged claim."
    assert problems(rows)["evidence-chain"][0].startswith("E002: does not hash")

    rows = demo()
    rows.evidence.pop(0)
    assert problems(rows)["evidence-chain"][0].startswith("E002: does not hash")

    rows = demo()
    rows.evidence.pop()
    assert "the report's last evidence hash" in problems(rows)["evidence-chain"][0]

    rows = demo()
    first, second = rows.evidence[0], rows.evidence[1]
    first.id, second.id = second.id, first.id
    rows.evidence[0:2] = [second, first]
    names = [problem.split(":")[0] for problem in problems(rows)["evidence-chain"]]
    assert names[:2] == ["E001", "E002"]


class LaterEntry(TranscriptEntry):
    """The transcript entry as a later version might have it: one more field, with a default."""

    note: str = ""


def test_a_field_a_later_version_adds_leaves_older_rows_hashing_as_they_did() -> None:
    entries = [step.entry for step in demo().steps if step.entry is not None]
    assert entries

    for entry in entries:
        stored = entry.model_dump(mode="json")  # as the ledger stores it
        assert entry_fields(LaterEntry.model_validate(stored)) == entry_fields(entry)
