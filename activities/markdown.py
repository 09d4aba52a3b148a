"""The report as Markdown (pure): answer, findings with their evidence, quotes, limitations."""

from __future__ import annotations

from workflows.models import Evidence, Report, RunStatus, SourceRef, StopReason


def render_markdown(
    report: Report,
    evidence: list[Evidence],
    sources: list[SourceRef],
    status: RunStatus,
    stop_reason: StopReason,
    *,
    question: str = "",
) -> str:
    """The report a reader gets: every finding names its evidence, every evidence its quote+URL."""
    sections = [
        f"# {question.strip() or 'Research report'}",
        _outcome(report, status, stop_reason),
        f"## Answer\n\n{report.answer.strip() or '(no answer)'}",
        _findings(report),
        _evidence(_cited_ids(report), evidence, sources),
        f"## Limitations\n\n{report.limitations.strip() or 'None stated.'}",
        _open_questions(report),
    ]
    return "\n\n".join(section for section in sections if section) + "\n"


def _outcome(report: Report, status: RunStatus, stop_reason: StopReason) -> str:
    line = f"Status: {status.value} | Stop: {stop_reason.value}"
    if report.composed:
        line += (
            "\n\nThis report was composed by the host from the recorded evidence only: "
            "the investigation did not complete."
        )
    return line


def _findings(report: Report) -> str:
    if not report.findings:
        return "## Findings\n\nNo findings."
    lines = ["## Findings", ""]
    for number, finding in enumerate(report.findings, start=1):
        cited = ", ".join(finding.evidence_ids) or "no evidence cited"
        lines.append(f"{number}. {finding.text.strip()} [{cited}]")
    return "\n".join(lines)


def _cited_ids(report: Report) -> list[str]:
    """Evidence IDs in order of first citation, each once."""
    return list(dict.fromkeys(eid for finding in report.findings for eid in finding.evidence_ids))


def _evidence(cited: list[str], evidence: list[Evidence], sources: list[SourceRef]) -> str:
    if not cited:
        return ""
    by_id = {item.id: item for item in evidence}
    urls = {source.id: source.final_url or source.url for source in sources}
    blocks = ["## Evidence"]
    for evidence_id in cited:
        item = by_id.get(evidence_id)
        if item is None:
            blocks.append(f"### {evidence_id}\n\nNot recorded in the ledger.")
            continue
        blocks.append(_evidence_block(item, urls.get(item.source_id, "")))
    return "\n\n".join(blocks)


def _evidence_block(item: Evidence, url: str) -> str:
    quote = "\n".join(f"> {line}".rstrip() for line in item.quote.strip().splitlines())
    where = f"{item.source_id}, passage {item.passage_id}" if item.passage_id else item.source_id
    return "\n\n".join(
        [
            f"### {item.id} ({item.stance}, {item.question_id})",
            f"Claim: {item.claim.strip()}",
            quote,
            f"Source: {where}, <{url}>" if url else f"Source: {where}",
        ]
    )


def _open_questions(report: Report) -> str:
    if not report.open_questions:
        return ""
    return "## Open questions\n\n" + "\n".join(f"- {item}" for item in report.open_questions)
