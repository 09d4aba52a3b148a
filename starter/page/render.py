"""The review page of one run (pure): one self-contained HTML file built from its ledger rows.

What `research report ID --html` prints and `research export` writes as `report.html`: the same
rows as `report --json`, with the quotes in their passages, the verdicts, the bounds used and the
timeline. The page loads nothing: its one style sheet is inline and allowed by its hash in a
Content-Security-Policy that forbids every other load (scripts, images, fonts, frames, forms),
and it holds no script at all.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from activities.ledger.review import RunRows
from starter.audit.base import AuditData
from starter.page.evidence import evidence_section
from starter.page.markup import Html, cut, element, plain, void
from starter.page.report import (
    answer_section,
    citations,
    conflicts_section,
    findings_section,
    limitations_section,
    more_section,
    open_questions_section,
    outcome_section,
    question_header,
)
from starter.page.run import bounds_section, reproduce_section, timeline_section
from starter.page.style import STYLE
from starter.page.verdicts import other_verdicts_section
from starter.review import report_view

STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True)
class PageLinks:
    """Addresses the page names that are not ledger rows: the run's Temporal Web UI page."""

    web_ui: str = ""


def render_page(rows: RunRows, links: PageLinks | None = None) -> str:
    """The page for a run that has saved its report (`report_view` says so otherwise)."""
    view = report_view(rows)
    data = AuditData(rows)
    evidence, sources = data.evidence_models(), data.source_refs()
    recorded = set(evidence)
    questions = {question.id: question.text for question in rows.run.brief.questions}
    body = [
        question_header(view),
        _contents(),
        outcome_section(view, rows),
        answer_section(view, recorded),
        findings_section(view, questions, evidence),
        evidence_section(rows, citations(view, recorded)),
        conflicts_section(evidence, sources),
        open_questions_section(view, questions),
        limitations_section(view, recorded),
        other_verdicts_section(view, recorded),
        more_section(view, rows.report.report if rows.report else None),
        bounds_section(rows),
        timeline_section(rows),
        reproduce_section(rows.run.run_id, (links or PageLinks()).web_ui),
    ]
    head = element(
        "head",
        void("meta", charset="utf-8"),
        void("meta", http_equiv="Content-Security-Policy", content=CONTENT_SECURITY_POLICY),
        void("meta", name="referrer", content="no-referrer"),
        void("meta", name="viewport", content="width=device-width, initial-scale=1"),
        element("title", plain(f"{cut(rows.run.run_id, 80)}: {cut(view.question, 120)}")),
        element("style", Html(STYLE)),
    )
    page = element("html", head, element("body", element("main", body)), lang="en")
    return f"<!DOCTYPE html>\n{page}\n"


def _contents() -> Html:
    parts = [
        ("outcome", "Outcome"),
        ("answer", "Answer"),
        ("findings", "Findings"),
        ("evidence", "Evidence"),
        ("conflicts", "Conflicts"),
        ("open-questions", "Open questions"),
        ("limitations", "Limitations"),
        ("bounds", "Bounds"),
        ("timeline", "Timeline"),
        ("reproduce", "Reproduce"),
    ]
    return element("nav", [element("a", title, href=f"#{fragment}") for fragment, title in parts])
