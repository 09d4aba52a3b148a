"""The report as Markdown (pure): answer, findings with their evidence, quotes, limitations.

Two kinds of text meet here, and a reader must tell them apart at a glance:

- **Model-written** (answer, findings, claims, limitations) is data, never markup: it is escaped
  (`as_text`) so it cannot open a heading, a quote block, a link, an image, a table or HTML, and
  it sits under labels that say who wrote it.
- **From the ledger** (quotes, URLs, evidence ids, status): only the host produces the structure
  that carries them (`### E001`, the quote's fenced block, `Source: <url>`, **bold** citations).
  A quote is copied exactly, byte for byte as the ledger holds it, inside a fence longer than any
  run of backticks it holds: nothing in it is markup, and no line of it can close the block.
  (Reports saved before that escaped quotes as other text: `QuoteStyle`.)
"""

from __future__ import annotations

import re
from typing import Literal

from workflows.cleaning import as_text
from workflows.models import UNVERIFIED, Evidence, Report, RunStatus, SourceRef, StopReason
from workflows.verification import ANSWER, Verdict, Verification

MODEL_LABEL = "*Written by the model; every finding was checked against the quotes below.*"
# A run no model took part in (`Verification.mode` "deterministic": the offline policy).
POLICY_LABEL = (
    "*Written by the run's policy, not a model; every finding was checked against the quotes "
    "below.*"
)
COMPOSED_LABEL = "*Composed by the host from the recorded evidence only.*"
# How the report's meaning was checked (`Verification.mode`; "" says nothing: older runs).
RULES = (
    "the proof rules only (every quote verbatim in its page, every required question cited, "
    "enough independent sources) and the word checks; no model read whether the quotes say what "
    "the findings claim"
)
MEANING = {
    "model": "Meaning: an independent verifier ({verifier}) judged the answer, each finding and "
    "the limitations against the quotes they cite, and whether the evidence cited for each "
    "required question answers it; its verdicts are shown beside them.",
    "off": f"Meaning: not checked. The verifier is off: these findings passed {RULES}.",
    "deterministic": "Meaning: not checked. No model took part (a policy without one ran the "
    f"investigation): this report passed {RULES}.",
}
# "told": the header says when meaning was not checked, and the answer's label who wrote it;
# "model_label": as reports were saved before that label named a policy (the model's label on
# every answer); "earlier": before the header said it either (`research audit` reads those).
HeaderStyle = Literal["told", "model_label", "earlier"]
EARLIER_MEANING = MEANING | {
    "off": "Meaning: the verifier is off; these findings passed the deterministic checks only.",
    "deterministic": "Meaning: the offline policy wrote this report; the deterministic checks "
    "are its verifier (no model read the claims).",
}


# "exact": a fenced block holding the ledger's quote as it is; "escaped": a `>` block of the quote
# escaped as Markdown text, as reports were saved before (`research audit` reads those).
QuoteStyle = Literal["exact", "escaped"]


def _one_line(text: str) -> str:
    return as_text(" ".join(text.split()))


def render_markdown(
    report: Report,
    evidence: list[Evidence],
    sources: list[SourceRef],
    status: RunStatus,
    stop_reason: StopReason,
    *,
    question: str = "",
    verification: Verification | None = None,
    quotes: QuoteStyle = "exact",
    header: HeaderStyle = "told",
    lanes: tuple[list[str], str] = ([], ""),
) -> str:
    """The report a reader gets: every finding names its evidence, every evidence its quote+URL,
    and, when a verifier read them, its verdict. `lanes`: the lanes the run entered and why it
    escalated (its header names them once it entered the fixed lane)."""
    checked = verification or Verification()
    label = COMPOSED_LABEL if report.composed else MODEL_LABEL
    if not report.composed and header == "told" and checked.mode == "deterministic":
        label = POLICY_LABEL
    verdicts = {verdict.number: verdict for verdict in checked.verdicts}
    answer = _paragraphs(report.answer) or "(no answer)"
    if ANSWER in verdicts and verdicts[ANSWER].subject in ("answer", "finding"):
        answer += "\n\n" + _verdict(verdicts[ANSWER])
    sections = [
        f"# {_one_line(question) or 'Research report'}",
        _outcome(report, status, stop_reason, checked, header) + _lanes(*lanes),
        f"## Answer\n\n{label}\n\n{answer}",
        _findings(report, verdicts),
        _notes(report),
        _evidence(_cited_ids(report, evidence), evidence, sources, quotes),
        f"## Limitations\n\n{_paragraphs(report.limitations) or 'None stated.'}"
        + "".join(f"\n\n{_verdict(v)}" for v in checked.verdicts if v.subject == "limitations"),
        _coverage(checked),
        _open_questions(report),
        _submitted(report),
    ]
    return "\n\n".join(section for section in sections if section) + "\n"


def _paragraphs(text: str) -> str:
    """Escaped text; blank lines keep separating paragraphs, other line breaks become spaces."""
    blocks = [" ".join(block.split()) for block in re.split(r"\n\s*\n", text.strip())]
    return "\n\n".join(as_text(block) for block in blocks if block)


def _outcome(
    report: Report,
    status: RunStatus,
    stop_reason: StopReason,
    checked: Verification,
    header: HeaderStyle = "told",
) -> str:
    told = header != "earlier"
    unverified = status is RunStatus.COMPLETED and checked.mode in ("off", "deterministic")
    said = f"{status.value}: {UNVERIFIED}" if told and unverified else status.value
    line = f"Status: {said} | Stop: {stop_reason.value}"
    if checked.mode and (not report.composed or checked.verdicts or (told and unverified)):
        meaning = MEANING if told else EARLIER_MEANING
        line += "\n\n" + meaning[checked.mode].format(verifier=_one_line(checked.verifier))
    if report.composed and status is RunStatus.COMPLETED:  # finish_now, and the gate passed
        line += (
            "\n\nThis report was composed by the host from the recorded evidence only, when an "
            "operator asked the run to finish; it passed the coverage gate."
        )
    elif report.composed:
        line += (
            "\n\nThis report was composed by the host from the recorded evidence only: "
            "the investigation did not complete."
        )
    return line


def _lanes(entered: list[str], escalation: str) -> str:
    """`Lanes: fixed → agent (escalated: why)`, for a run that entered the fixed lane."""
    if "fixed" not in entered:
        return ""
    why = f" (escalated: {_one_line(escalation)})" if escalation else ""
    return f"\n\nLanes: {' → '.join(entered)}{why}"


def _coverage(checked: Verification) -> str:
    """Each required question's verdict: does the evidence cited for it answer it?"""
    judged = [verdict for verdict in checked.verdicts if verdict.subject == "coverage"]
    if not judged:
        return ""
    lines = ["## Required questions", ""]
    for verdict in judged:
        lines.append(f"- {_one_line(verdict.question_id)}: {_one_line(verdict.claim)}")
        lines.append(f"  {_verdict(verdict)}")
    return "\n".join(lines)


def _findings(report: Report, verdicts: dict[int, Verdict]) -> str:
    if not report.findings and (report.notes or report.submitted):
        return "## Findings\n\nNone accepted: the run did not complete."
    if not report.findings:
        return "## Findings\n\nNo findings."
    lines = ["## Findings", ""]
    for number, finding in enumerate(report.findings, start=1):
        cited = ", ".join(f"**{_one_line(eid)}**" for eid in finding.evidence_ids)
        lines.append(f"{number}. {_one_line(finding.text)} (cites {cited or 'no evidence'})")
        if number in verdicts and verdicts[number].subject == "finding":
            lines.append(f"   {_verdict(verdicts[number])}")
    return "\n".join(lines)


def _notes(report: Report) -> str:
    """The claims the model wrote when it recorded each quote: notes, not findings."""
    if not report.notes:
        return ""
    lines = [
        "## The model's notes",
        "",
        "*Not verified: what the model claimed when it recorded each quote (the quotes are under "
        "Evidence).*",
        "",
    ]
    for note in report.notes:
        lines.append(
            f"- **{_one_line(note.evidence_id)}** ({_one_line(note.question_id)}): "
            f"{_one_line(note.claim)}"
        )
    return "\n".join(lines)


def _submitted(report: Report) -> str:
    """The model's last submitted report, marked as not accepted, with the gaps that stopped it."""
    last = report.submitted
    if last is None:
        return ""
    lines = [
        "## Submitted, not accepted",
        "",
        "*The model's last report. It was not accepted, for the reasons listed after it.*",
        "",
        f"Answer: {_one_line(last.answer)}",
        "",
    ]
    for number, finding in enumerate(last.findings, start=1):
        cited = ", ".join(f"**{_one_line(eid)}**" for eid in finding.evidence_ids)
        lines.append(f"{number}. {_one_line(finding.text)} (cites {cited or 'no evidence'})")
    lines += ["", f"Limitations: {_one_line(last.limitations) or 'none stated'}", "", "Why not:"]
    lines += [f"- {_one_line(gap)}" for gap in last.gaps]
    return "\n".join(lines)


def _verdict(verdict: Verdict) -> str:
    """`Verifier: supported (E001: "the sentence it copied")` and its reason, or the verdict and
    its reason."""
    word = verdict.verdict.replace("_", " ")
    reason = _one_line(verdict.reason)
    if verdict.evidence_id and not verdict.blocking:
        why = f" Reason: {reason}" if reason else ""
        return (
            f"*Verifier: {word}* ({_one_line(verdict.evidence_id)}: "
            f'"{_one_line(verdict.sentence)}").{why}'
        )
    return f"*Verifier: {word}* ({reason or 'no reason given'})"


def _cited_ids(report: Report, evidence: list[Evidence]) -> list[str]:
    """Evidence IDs in order of first citation, each once: the findings' citations, then every
    recorded ID the answer, a finding's text or the limitations name (a reader must be able to
    see any evidence the report mentions)."""
    submitted = report.submitted.findings if report.submitted else []
    cited = [eid for finding in report.findings for eid in finding.evidence_ids]
    cited += [note.evidence_id for note in report.notes]
    cited += [eid for finding in submitted for eid in finding.evidence_ids]
    texts = [report.answer, *(finding.text for finding in report.findings), report.limitations]
    recorded = {item.id for item in evidence}
    named = [match[0] for text in texts for match in EVIDENCE_ID.finditer(text)]
    return list(dict.fromkeys([*cited, *(eid for eid in named if eid in recorded)]))


EVIDENCE_ID = re.compile(r"(?<![A-Za-z0-9])E\d{3,}(?![A-Za-z0-9])")


def _evidence(
    cited: list[str], evidence: list[Evidence], sources: list[SourceRef], quotes: QuoteStyle
) -> str:
    if not cited:
        return ""
    by_id = {item.id: item for item in evidence}
    urls = {source.id: source.final_url or source.url for source in sources}
    blocks = ["## Evidence", "*Quotes copied by the host from the stored page snapshots.*"]
    for evidence_id in cited:
        item = by_id.get(evidence_id)
        if item is None:
            blocks.append(f"### {_one_line(evidence_id)}\n\nNot recorded in the ledger.")
            continue
        blocks.append(_evidence_block(item, urls.get(item.source_id, ""), quotes))
    return "\n\n".join(blocks)


def _evidence_block(item: Evidence, url: str, quotes: QuoteStyle) -> str:
    quote = _fenced(item.quote) if quotes == "exact" else _escaped_quote(item.quote)
    where = f"{item.source_id}, passage {item.passage_id}" if item.passage_id else item.source_id
    return "\n\n".join(
        [
            f"### {item.id} ({item.stance}, {item.question_id})",
            f"Model's claim: {_one_line(item.claim)}",
            quote,
            *_context(item),
            f"Source: {where}, <{_url(url)}>" if url else f"Source: {where}",
        ]
    )


def _fenced(quote: str) -> str:
    """The quote as it is, in a fence longer than any run of backticks inside it (CommonMark: a
    shorter or other fence inside cannot close it)."""
    if not quote:
        return "(empty quote)"
    longest = max((len(run) for run in re.findall(r"`+", quote)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{quote}\n{fence}"


def _escaped_quote(quote: str) -> str:
    return "\n".join(f"> {line}" for line in as_text(quote).splitlines()) or "> (empty)"


def _context(item: Evidence) -> list[str]:
    """The section heading a quote sits under, and the whole sentence it was cut from."""
    lines = [f"Section: {_one_line(item.section)}"] if item.section else []
    if item.sentence and item.sentence != item.quote:
        lines.append(f"Cut from the sentence: {_one_line(item.sentence)}")
    if item.concerns:
        lines.append("Host's doubts, left to the verifier: " + _one_line("; ".join(item.concerns)))
    return lines


def _url(url: str) -> str:
    """A stored URL inside <...>: nothing in it may close the autolink early."""
    return re.sub(r"[<>\s]", lambda m: f"%{ord(m[0]):02X}", url)


def _open_questions(report: Report) -> str:
    if not report.open_questions:
        return ""
    return "## Open questions\n\n" + "\n".join(
        f"- {_one_line(item)}" for item in report.open_questions
    )
