"""Two runs side by side (pure): what `research rerun` prints about a source run and its rerun.

A run is reduced to what a user would call its behaviour: outcome, counters, each step's tool,
arguments and outcome, each piece of evidence (question, source URL, quote) and the report. Times,
run ids and row timestamps are left out: they differ between any two runs.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from activities.ledger import RunRows
from activities.ledger.review import StepRow
from workflows.models import Counters, Finding

LABEL_CHARS = 15  # "finish attempts"
COLUMN_CHARS = 40  # each run's column in the side-by-side table
LINE_CHARS = 110  # a step, evidence or finding line in the text output (JSON keeps it whole)


class StepView(BaseModel):
    step: int
    tool: str
    arguments: str
    outcome: str  # ok | insufficient | refused: <why>

    def line(self) -> str:
        return f"{self.tool or '(no tool)'} {self.arguments} -> {self.outcome}"


class EvidenceView(BaseModel):
    id: str
    question_id: str
    url: str
    quote: str

    def line(self) -> str:
        return f'{self.id} {self.question_id} {self.url} "{self.quote}"'


class RunView(BaseModel):
    run_id: str
    status: str
    stop_reason: str
    counters: Counters
    steps: list[StepView] = Field(default_factory=list)
    evidence: list[EvidenceView] = Field(default_factory=list)
    answer: str = ""
    findings: list[Finding] = Field(default_factory=list)
    limitations: str = ""
    open_questions: list[str] = Field(default_factory=list)


class Comparison(BaseModel):
    source: RunView
    rerun: RunView
    differences: list[str] = Field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


def run_view(rows: RunRows) -> RunView:
    urls = {source.source_id: source.url for source in rows.sources}
    report = rows.report.report if rows.report is not None else None
    return RunView(
        run_id=rows.run.run_id,
        status=rows.run.status.value,
        stop_reason=rows.run.stop_reason or "",
        counters=rows.run.counters,
        steps=[
            StepView(
                step=step.step, tool=step.tool, arguments=step.arguments, outcome=_outcome(step)
            )
            for step in rows.steps
        ],
        evidence=[
            EvidenceView(
                id=item.id,
                question_id=item.question_id,
                url=urls.get(item.source_id, item.source_id),
                quote=item.quote,
            )
            for item in rows.evidence
        ],
        answer=report.answer if report else "",
        findings=report.findings if report else [],
        limitations=report.limitations if report else "",
        open_questions=report.open_questions if report else [],
    )


def _outcome(step: StepRow) -> str:
    if not step.ok:
        return f"refused: {step.error or '(no reason recorded)'}"
    return "insufficient" if step.insufficient else "ok"


def compare(source: RunView, rerun: RunView) -> Comparison:
    found = [
        f"{label}: {mine} (source) vs {theirs} (rerun)"
        for label, mine, theirs in _scalars(source, rerun)
        if mine != theirs
    ]
    for label, mine_lines, their_lines in _lists(source, rerun):
        for number, (mine, theirs) in enumerate(_paired(mine_lines, their_lines), start=1):
            if mine != theirs:
                found.append(f"{label} {number}: {mine} (source) vs {theirs} (rerun)")
    return Comparison(source=source, rerun=rerun, differences=found)


def _scalars(source: RunView, rerun: RunView) -> list[tuple[str, str, str]]:
    rows = [
        ("status", source.status, rerun.status),
        ("stop reason", source.stop_reason, rerun.stop_reason),
    ]
    for name, mine in source.counters.model_dump().items():
        rows.append((name.replace("_", " "), str(mine), str(getattr(rerun.counters, name))))
    rows += [
        ("evidence", str(len(source.evidence)), str(len(rerun.evidence))),
        ("answer", source.answer, rerun.answer),
        ("limitations", source.limitations, rerun.limitations),
        ("open questions", ", ".join(source.open_questions), ", ".join(rerun.open_questions)),
    ]
    return rows


def _lists(source: RunView, rerun: RunView) -> list[tuple[str, list[str], list[str]]]:
    return [
        ("step", [s.line() for s in source.steps], [s.line() for s in rerun.steps]),
        ("evidence", [e.line() for e in source.evidence], [e.line() for e in rerun.evidence]),
        ("finding", _finding_lines(source.findings), _finding_lines(rerun.findings)),
    ]


def _finding_lines(findings: list[Finding]) -> list[str]:
    return [f"{finding.text} [{', '.join(finding.evidence_ids)}]" for finding in findings]


def _paired(mine: list[str], theirs: list[str]) -> list[tuple[str, str]]:
    size = max(len(mine), len(theirs))
    padded = (
        [*mine, *["(none)"] * (size - len(mine))],
        [*theirs, *["(none)"] * (size - len(theirs))],
    )
    return list(zip(*padded, strict=True))


# ---------------------------------------------------------------- text


def render(comparison: Comparison) -> list[str]:
    """The side-by-side table, each step, evidence and finding (`=` when both runs agree), then
    the differences."""
    source, rerun = comparison.source, comparison.rerun
    lines = [_row("", "source", "rerun", marked=False)]
    lines.append(_row("run", source.run_id, rerun.run_id, marked=False))
    lines += [_row(label, mine, theirs) for label, mine, theirs in _scalars(source, rerun)]
    for label, mine_lines, their_lines in _lists(source, rerun):
        lines += ["", f"{label.capitalize()}s" if label != "evidence" else "Evidence"]
        lines += _paired_lines(mine_lines, their_lines)
    lines.append("")
    if comparison.identical:
        lines.append("Differences: none (the rerun made the same steps, evidence and report)")
    else:
        lines.append(f"Differences ({len(comparison.differences)}):")
        lines += [
            f"  - {_cut(difference, 2 * LINE_CHARS)}" for difference in comparison.differences
        ]
    return lines


def _paired_lines(mine_lines: list[str], their_lines: list[str]) -> list[str]:
    if not mine_lines and not their_lines:
        return ["  (none in either run)"]
    lines = []
    for number, (mine, theirs) in enumerate(_paired(mine_lines, their_lines), start=1):
        if mine == theirs:
            lines.append(f"  {number:>3} = {_cut(mine, LINE_CHARS)}")
        else:
            lines.append(f"  {number:>3} source: {_cut(mine, LINE_CHARS)}")
            lines.append(f"      rerun:  {_cut(theirs, LINE_CHARS)}")
    return lines


def _row(label: str, mine: str, theirs: str, *, marked: bool = True) -> str:
    """One line of the side-by-side table; `*` marks a value that differs."""
    marker = "*" if marked and mine != theirs else " "
    cells = (_cut(mine, COLUMN_CHARS).ljust(COLUMN_CHARS), _cut(theirs, COLUMN_CHARS))
    return f"{marker} {label.ljust(LABEL_CHARS)} {cells[0]}  {cells[1]}".rstrip()


def _cut(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 3] + "..."
