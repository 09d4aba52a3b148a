"""The report's parts on the review page: question, outcome, answer, findings with their verdicts,
conflicts, open questions, limitations, and anything else the saved report or verifier holds.
"""

from __future__ import annotations

import re

from activities.ledger.review import RunRows
from activities.markdown import EVIDENCE_ID
from starter.page.markup import Html, cut, definitions, element, join, jump, section
from starter.page.verdicts import cite, claim_verdicts, verdict_block
from starter.review import ReportView
from workflows import gate
from workflows.models import UNVERIFIED, Evidence, Report, SourceRef

MAX_TEXT_CHARS = 20_000  # an answer, a finding, a reason, the limitations
# Fields the page shows in their own place, of the saved report, of its JSON view and of its
# verification; any other (added after this page was written) is shown under "More".
SHOWN_FIELDS = frozenset(
    {"run_id", "question", "status", "stop_reason", "composed", "answer", "findings"}
    | {"limitations", "open_questions", "evidence", "saved_at", "verification", "verified"}
    | {"mode", "verifier", "verdicts"}
)


def question_header(view: ReportView) -> Html:
    return element(
        "header",
        element("p", "Research run ", element("code", view.run_id), class_="note"),
        element("h1", cut(view.question, MAX_TEXT_CHARS)),
    )


def outcome_section(view: ReportView, rows: RunRows) -> Html:
    checked = view.verification
    badge = element("span", view.status, class_=f"badge {_status(view.status)}")
    if checked.mode == "model":
        meaning = f"verified by {checked.verifier or 'a verifier model'}"
    else:
        meaning = f"{UNVERIFIED}: no model read whether the quotes say what the findings claim"
    status = join([badge, element("span", UNVERIFIED)], " ") if view.verified is False else badge
    facts: list[tuple[str, object]] = [
        ("Status", status),
        ("Stop reason", view.stop_reason),
        ("Meaning", meaning),
        ("Written by", _author(view)),
    ]
    lane = getattr(rows.run, "lane", None) or getattr(view, "lane", None)
    if lane:
        facts.append(("Lane", str(lane)))
    facts += [
        ("Started", rows.run.started_at.isoformat(timespec="seconds")),
        (
            "Finished",
            rows.run.finished_at.isoformat(timespec="seconds") if rows.run.finished_at else "-",
        ),
        ("Report saved", view.saved_at.isoformat(timespec="seconds")),
    ]
    return section("outcome", "Outcome", definitions(facts))


def _author(view: ReportView) -> str:
    """Who wrote the report's text: the host, the run's policy when no model took part (the
    offline policy: meaning checked deterministically), else the model."""
    if view.composed:
        return "the host, from the recorded evidence"
    return (
        "the run's policy, not a model"
        if view.verification.mode == "deterministic"
        else "the model"
    )


def _status(status: str) -> str:
    return {"completed": "good", "incomplete": "warn", "cancelled": "warn"}.get(status, "bad")


def answer_section(view: ReportView, recorded: set[str]) -> Html:
    verdicts = claim_verdicts(view).get(0, [])
    return section(
        "answer",
        "Answer",
        paragraphs(view.answer, recorded) or element("p", "(no answer)"),
        [verdict_block(verdict, recorded) for verdict in verdicts],
    )


def findings_section(
    view: ReportView, questions: dict[str, str], evidence: dict[str, Evidence]
) -> Html:
    verdicts = claim_verdicts(view)
    items = []
    for number, finding in enumerate(view.findings, start=1):
        asked = dict.fromkeys(
            evidence[e].question_id for e in finding.evidence_ids if e in evidence
        )
        cites = [cite(eid, eid in evidence) for eid in finding.evidence_ids]
        items.append(
            element(
                "li",
                paragraphs(finding.text, set(evidence)),
                element(
                    "p",
                    element("span", "Answers: ", class_="label"),
                    join([element("span", f"{q}: {questions.get(q, '')}") for q in asked], "; ")
                    if asked
                    else "no sub-question (it cites no recorded evidence)",
                    class_="q",
                ),
                element(
                    "p",
                    element("span", "Cites: ", class_="label"),
                    join(cites) if cites else "no evidence",
                ),
                [verdict_block(verdict, set(evidence)) for verdict in verdicts.get(number, [])],
                id=f"finding-{number}",
                class_="finding",
            )
        )
    body = element("ol", items) if items else element("p", "No findings.")
    return section("findings", "Findings", body)


def conflicts_section(evidence: dict[str, Evidence], sources: dict[str, SourceRef]) -> Html:
    """The conflicts the host's rule finds among the recorded evidence (the gate's own check)."""
    found = gate.conflicts(evidence, sources)
    if not found:
        return section(
            "conflicts", "Conflicts", element("p", "None found among the recorded evidence.")
        )
    items = [
        element(
            "li",
            f"{conflict.question_id}: ",
            jump("evidence", conflict.first, element("code", conflict.first)),
            f" says {conflict.first_says}; ",
            jump("evidence", conflict.second, element("code", conflict.second)),
            f" says {conflict.second_says}",
        )
        for conflict in found
    ]
    return section("conflicts", "Conflicts", element("ul", items))


def open_questions_section(view: ReportView, questions: dict[str, str]) -> Html:
    if not view.open_questions:
        return section("open-questions", "Open questions", element("p", "None."))
    items = [
        element(
            "li",
            f"{qid}: {questions.get(qid, '')}" if qid in questions else cut(qid, MAX_TEXT_CHARS),
        )
        for qid in view.open_questions
    ]
    return section("open-questions", "Open questions", element("ul", items))


def limitations_section(view: ReportView, recorded: set[str]) -> Html:
    return section(
        "limitations",
        "Limitations",
        paragraphs(view.limitations, recorded) or element("p", "None stated."),
    )


def more_section(view: ReportView, saved: Report | None) -> Html | None:
    """Fields of the saved report, its view or its verification this page has no place for."""
    extra = {
        name: value
        for model in (saved or view, view, view.verification)
        for name, value in model.model_dump(mode="json", exclude=set(SHOWN_FIELDS)).items()
    }
    shown = {name: value for name, value in extra.items() if value not in (None, "", [], {})}
    if not shown:
        return None
    return section(
        "more",
        "More in the report",
        [
            [element("h3", name.replace("_", " ")), value_html(value)]
            for name, value in shown.items()
        ],
    )


def value_html(value: object, depth: int = 0) -> Html:
    """Any JSON value as nested lists and text (bounded in depth and length)."""
    if depth > 4:
        return element("span", "...")
    if isinstance(value, dict):
        return definitions(
            [
                (str(k).replace("_", " "), value_html(v, depth + 1))
                for k, v in list(value.items())[:50]
            ]
        )
    if isinstance(value, list):
        return element("ul", [element("li", value_html(item, depth + 1)) for item in value[:200]])
    return element("span", cut(str(value), MAX_TEXT_CHARS))


def paragraphs(text: str, recorded: set[str]) -> Html:
    """Model text as paragraphs (blank lines apart), each evidence id it names linked."""
    blocks = [block.strip() for block in re.split(r"\n\s*\n", cut(text, MAX_TEXT_CHARS).strip())]
    return Html("".join(element("p", _linked(block, recorded)) for block in blocks if block))


def _linked(text: str, recorded: set[str]) -> list[object]:
    parts: list[object] = []
    at = 0
    for match in EVIDENCE_ID.finditer(text):
        if match[0] in recorded:
            parts += [text[at : match.start()], jump("evidence", match[0])]
            at = match.end()
    return [*parts, text[at:]]


def citations(view: ReportView, recorded: set[str]) -> dict[str, list[tuple[str, str]]]:
    """Evidence id -> (fragment, label) of each part of the report citing it, in order of first
    citation: the findings' citations, then ids the answer or limitations name."""
    cited: dict[str, list[tuple[str, str]]] = {}
    for number, finding in enumerate(view.findings, start=1):
        for eid in dict.fromkeys(finding.evidence_ids):
            cited.setdefault(eid, []).append((f"finding-{number}", f"finding {number}"))
    for fragment, label, text in (
        ("answer", "the answer", view.answer),
        ("limitations", "the limitations", view.limitations),
    ):
        for eid in dict.fromkeys(match[0] for match in EVIDENCE_ID.finditer(text)):
            if eid in recorded:
                cited.setdefault(eid, []).append((fragment, label))
    return cited
