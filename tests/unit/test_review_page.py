"""The review page (`research report --html`, `report.html`) with hostile page and model text: the
recorded demo run's rows with every string a page or a model writes replaced by markup, scripts,
style breakers, `javascript:` URLs, direction controls and a 1 MB quote. Parsed as a browser
parses it (html5lib), nothing executable or loading comes through, every hostile string is there
as text, links go only to the ledger's http(s) URLs and the page's own fragments, and the page
stays bounded. The Markdown report copies the same quotes byte for byte."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from xml.etree.ElementTree import Element

import html5lib
import pytest

from activities.ledger import RunRows
from activities.ledger.review import PassageRow
from activities.markdown import render_markdown
from starter.audit import AuditData, run_checks
from starter.export import load_export, write_export
from starter.page import CONTENT_SECURITY_POLICY, PageLinks, render_page
from starter.page.style import STYLE
from starter.review import report_view
from workflows.models import UNVERIFIED, Finding, Report, RunStatus, StopReason
from workflows.verification import Verdict, Verification

EXPORTS = Path(__file__).parent.parent / "exports"
NS = "{http://www.w3.org/1999/xhtml}"
WEB_UI = "http://localhost:8233/namespaces/default/workflows/research-demo-recorded"
# Markup a hostile author would try, each closing what the page could have open around it.
HOSTILE = [
    "<script>alert(1)</script>",
    "</style><script>alert(2)</script>",
    "</title></head><body onload=alert(3)>",
    '"><a href="javascript:alert(4)">click</a>',
    "'><img src=x onerror=alert(5)>",
    "</mark></blockquote><svg onload=alert(6)>",
    '<iframe src="https://evil.example/"></iframe>',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    '<base href="https://evil.example/"><link rel="stylesheet" href="https://evil.example/x.css">',
    "<style>@import url(https://evil.example/y.css)</style><!-- ]]> <![CDATA[",
    "javascript:alert(7)",
    "\u202eevil\u202c and \u2066isolated\u2069 and zero\u200bwidth \x1b[31m\x07",
]
SCRIPTED = " ".join(HOSTILE)
BIG_QUOTE = ("<script>alert(8)</script> " * 40_000)[:1_000_000]  # 1 MB of a page's text
FORBIDDEN_TAGS = {"script", "iframe", "frame", "object", "embed", "img", "svg", "math", "link"}
FORBIDDEN_TAGS |= {"base", "form", "input", "button", "audio", "video", "source", "template"}
DIRECTION_AND_INVISIBLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200e\x1b"


@cache
def _demo() -> RunRows:
    rows, _ = load_export(EXPORTS / "demo")
    return rows


def demo_rows() -> RunRows:
    return _demo().model_copy(deep=True)


def hostile_rows() -> RunRows:
    """The demo run, its first page holding a hostile quote and a 1 MB one inside hostile text,
    and every model-written field, title, heading, URL, verdict and step hostile."""
    rows = demo_rows()
    assert rows.report is not None
    source = next(s for s in rows.sources if s.source_id == "S1")
    first, second = rows.evidence[0], rows.evidence[1]
    assert first.source_id == "S1"
    second.source_id = "S1"  # both quotes on the first page
    before, between, after = f"{SCRIPTED}\n\n", f"\n{SCRIPTED}\n", f"\n{SCRIPTED}"
    source.snapshot = before + SCRIPTED + between + BIG_QUOTE + after
    first.quote, first.start = SCRIPTED, len(before)
    first.end = first.start + len(SCRIPTED)
    second.quote, second.start = BIG_QUOTE, first.end + len(between)
    second.end = second.start + len(BIG_QUOTE)
    rows.passages = [p for p in rows.passages if p.source_id != "S1"] + [
        PassageRow(source_id="S1", passage_no=1, passage_id="S1.P1", start=0,
                   end=len(source.snapshot), section=SCRIPTED, text=source.snapshot)
    ]  # fmt: skip
    first.passage_id = second.passage_id = "S1.P1"
    source.title, source.url, source.final_url = SCRIPTED, "javascript:alert(9)", ""
    for item in rows.evidence:
        item.claim = SCRIPTED
    report = rows.report.report
    report.answer = f"{SCRIPTED}\n\nSee E001 and E002."
    report.limitations = SCRIPTED
    report.open_questions = [SCRIPTED]
    report.findings = [
        Finding(text=SCRIPTED, evidence_ids=["E001", '"><script>x</script>', "E999"]),
        Finding(text=SCRIPTED * 100, evidence_ids=["E002", "E003"]),
    ]
    rows.report.verification = Verification(
        mode="model",
        verifier=SCRIPTED,
        verdicts=[
            Verdict(number=n, claim=SCRIPTED, verdict="contradicted", said="supported",
                    sentence=SCRIPTED, evidence_id=cited, reason=SCRIPTED)
            for n, cited in ((0, 'E001"><script>'), (1, "E998"), (2, "E002"))
        ],
    )  # fmt: skip
    for step in rows.steps:
        step.arguments = f'{{"query": {SCRIPTED!r}}}'
        step.summary = SCRIPTED
    rows.steps[0].ok, rows.steps[0].error = False, SCRIPTED
    rows.run.run_id = "research-<script>alert(10)</script>"
    rows.run.question = SCRIPTED
    return rows


def parse(page: str) -> Element:
    """The page as a browser's parser builds it; strict: any parse error fails the test."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True)
    document: Element = parser.parse(page)
    return document


def _tag(element: Element) -> str:
    return element.tag.removeprefix(NS) if isinstance(element.tag, str) else ""


def text_of(element: Element) -> str:
    return "".join(element.itertext())


def test_hostile_text_renders_as_inert_text_within_bounds() -> None:
    rows = hostile_rows()

    page = render_page(rows, PageLinks(web_ui=WEB_UI))
    document = parse(page)

    elements = list(document.iter())
    tags = {_tag(element) for element in elements}
    assert tags & FORBIDDEN_TAGS == set(), "no element that runs, loads or submits anything"
    styles = [element for element in elements if _tag(element) == "style"]
    assert [text_of(style) for style in styles] == [STYLE], "one style sheet: the page's own"
    metas = [dict(element.attrib) for element in elements if _tag(element) == "meta"]
    assert metas == [
        {"charset": "utf-8"},
        {"http-equiv": "Content-Security-Policy", "content": CONTENT_SECURITY_POLICY},
        {"name": "referrer", "content": "no-referrer"},
        {"name": "viewport", "content": "width=device-width, initial-scale=1"},
    ]
    assert CONTENT_SECURITY_POLICY.startswith("default-src 'none';")
    for element in elements:
        for name in element.attrib:
            assert not name.lower().startswith("on"), (name, element.attrib)
            assert name.lower() not in {"style", "src", "srcdoc", "action", "formaction"}
    ids = {element.get("id") for element in elements if element.get("id")}
    allowed_urls = {WEB_UI} | {s.url for s in rows.sources} | {s.final_url for s in rows.sources}
    for href in (element.get("href") for element in elements if _tag(element) == "a"):
        assert href is not None
        if href.startswith("#"):
            assert href[1:] in ids, f"a fragment the page has: {href}"
        else:
            assert href in allowed_urls and href.startswith(("http://", "https://")), href
    body = text_of(document)
    for hostile in HOSTILE[:-1]:
        assert hostile in body, f"shown as text: {hostile}"
    assert not any(char in body for char in DIRECTION_AND_INVISIBLE), "shown as U+XXXX marks"
    assert "U+202E" in body and "U+200B" in body and "U+001B" in body
    assert len(page) < 600_000, "a 1 MB quote and 200 KB of model text are shown cut"
    assert "more characters not shown" in body
    title = text_of(next(element for element in elements if _tag(element) == "title"))
    assert title.startswith("research-<script>alert(10)</script>: <script>alert(1)</script>")
    assert "hidden-char" not in title and "\u202e" not in title, "hidden characters as U+FFFD"


def test_every_finding_links_to_its_quotes_and_every_quote_back() -> None:
    rows = demo_rows()

    document = parse(render_page(rows))

    by_id = {element.get("id"): element for element in document.iter() if element.get("id")}
    assert rows.report is not None
    for number, finding in enumerate(rows.report.report.findings, start=1):
        item = by_id[f"finding-{number}"]
        links = {a.get("href") for a in item.iter(f"{NS}a")}
        for evidence_id in finding.evidence_ids:
            assert f"#evidence-{evidence_id}" in links
            back = {a.get("href") for a in by_id[f"evidence-{evidence_id}"].iter(f"{NS}a")}
            assert f"#finding-{number}" in back


def test_each_quote_is_highlighted_inside_its_passage_as_the_ledger_has_it() -> None:
    rows = demo_rows()

    document = parse(render_page(rows))

    marks = {m.get("data-evidence"): m for m in document.iter(f"{NS}mark")}
    cited = AuditData(rows).evidence_models()
    assert set(marks) == set(cited)
    among: list[str] = []  # the quotes shown among neighbouring text (a whole passage is not)
    for evidence_id, item in cited.items():
        assert text_of(marks[evidence_id]) == item.quote
        block = next(e for e in document.iter() if e.get("id") == f"evidence-{evidence_id}")
        passage = text_of(next(e for e in block.iter(f"{NS}blockquote")))
        assert item.quote in passage
        if len(passage) > len(item.quote):
            among.append(evidence_id)
        source = next(s for s in rows.sources if s.source_id == item.source_id)
        assert source.snapshot is not None and passage.strip(".") in source.snapshot
        shown = text_of(block)
        assert source.content_hash and source.content_hash in shown
        assert (source.final_url or source.url) in shown
    assert among, "a quote stands among its neighbouring text, highlighted inside it"


def test_a_quote_not_at_its_offsets_is_shown_as_the_ledger_has_it_and_flagged() -> None:
    rows = demo_rows()
    rows.evidence[0].start += 1

    document = parse(render_page(rows))

    block = next(e for e in document.iter() if e.get("id") == "evidence-E001")
    assert "Not found at its offsets in the stored snapshot" in text_of(block)
    assert text_of(next(block.iter(f"{NS}mark"))) == rows.evidence[0].quote


@pytest.mark.parametrize("quote", [SCRIPTED, "```\nclose?\n```", "> [x](javascript:y) ![i](z) `c`"])
def test_the_markdown_report_copies_each_quote_byte_for_byte(quote: str) -> None:
    rows = demo_rows()
    assert rows.report is not None
    rows.evidence[0].quote = quote
    data = AuditData(rows)

    markdown = render_markdown(
        rows.report.report,
        list(data.evidence_models().values()),
        list(data.source_refs().values()),
        rows.report.status,
        StopReason(rows.report.stop_reason),
    )

    fence = markdown.split(f"\n{quote}\n", 1)[0].rsplit("\n", 1)[-1]
    assert fence.startswith("```") and fence.endswith("text"), "opened by a fence of its own"
    closing = fence.removesuffix("text")
    after = markdown.split(f"\n{quote}\n", 1)[1]
    assert after.startswith(f"{closing}\n"), "closed right after it, by the same fence"
    assert all(closing not in line for line in quote.splitlines()), "no line of it closes it"


def test_an_export_writes_the_review_page(tmp_path: Path) -> None:
    rows = demo_rows()

    files = write_export(rows, None, tmp_path / "out", PageLinks(web_ui=WEB_UI))

    assert "report.html" in files
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page == render_page(rows, PageLinks(web_ui=WEB_UI))
    assert "report.html" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


class _CoverageVerdict(Verdict):
    """A verdict of a kind the page was not written for: its subject and the question judged."""

    subject: str = "coverage"
    question: str = ""


def test_a_verdict_on_another_subject_shows_under_that_subject() -> None:
    rows = demo_rows()
    assert rows.report is not None
    judged = _CoverageVerdict(number=1, claim="", verdict="not_supported", said="not_supported",
                              reason="Q2 is not answered: the quote names no default.",
                              question="Q2: What is the default visibility timeout?")  # fmt: skip
    rows.report.verification = Verification(mode="model", verifier="openai m", verdicts=[judged])

    document = parse(render_page(rows))

    section = next(e for e in document.iter() if e.get("id") == "verdicts")
    shown = text_of(section)
    assert "Coverage" in shown and "not supported" in shown
    assert judged.reason in shown and shown.count(judged.question) == 1
    finding = next(e for e in document.iter() if e.get("id") == "finding-1")
    assert "Verifier" not in text_of(finding), "not taken for a verdict on finding 1"


class _ReportWithAppendix(Report):
    """A saved report with a field the page was not written for."""

    appendix: list[dict[str, str]] = []


def test_a_report_field_the_page_has_no_place_for_still_shows() -> None:
    rows = demo_rows()
    assert rows.report is not None
    saved = rows.report.report
    note = {"evidence_id": "E002", "text": f"the model's note {HOSTILE[0]}"}
    rows.report.report = _ReportWithAppendix(**saved.model_dump(), appendix=[note])

    document = parse(render_page(rows))

    more = next(e for e in document.iter() if e.get("id") == "more")
    assert "appendix" in text_of(more) and note["text"] in text_of(more)


@pytest.mark.parametrize(
    ("checked", "told"),
    [
        (Verification(mode="deterministic"), False),
        (Verification(mode="off", verifier="off"), False),
        (Verification(mode="model", verifier="openai gpt-4o-mini"), True),
    ],
)
def test_the_header_says_whether_a_model_verified_the_completed_report(
    checked: Verification, told: bool
) -> None:
    """A report the rules alone passed is `completed: rules only, meaning not checked` at the top
    of its Markdown and its page; a verified one names the model that verified it."""
    rows = demo_rows()
    assert rows.report is not None and rows.report.status == "completed"
    rows.report.verification = checked
    data = AuditData(rows)
    markdown = render_markdown(
        rows.report.report,
        list(data.evidence_models().values()),
        list(data.source_refs().values()),
        RunStatus.COMPLETED,
        StopReason(rows.report.stop_reason),
        verification=checked,
    )
    header = markdown.split("## Answer")[0]
    outcome = text_of(next(e for e in parse(render_page(rows)).iter() if e.get("id") == "outcome"))
    if told:
        assert "Status: completed | Stop: coverage_gate_passed" in header
        assert "an independent verifier (openai gpt-4o-mini) judged" in header
        assert "verified by openai gpt-4o-mini" in outcome and UNVERIFIED not in outcome
    else:
        assert f"Status: completed: {UNVERIFIED} | Stop: coverage_gate_passed" in header
        assert "Meaning: not checked." in header and "no model read" in header
        assert f"completed {UNVERIFIED}" in outcome and "verified by" not in outcome
    assert report_view(rows).verified is told
    # Who wrote the answer: the run's policy when no model took part, on the page and above it.
    policy = checked.mode == "deterministic"
    author = "the run's policy, not a model" if policy else "the model"
    assert f"Written by{author}" in outcome.replace("\n", "")
    label = markdown.split("## Answer\n\n", 1)[1].splitlines()[0]
    assert label.startswith(
        "*Written by the run's policy, not a model;" if policy else "*Written by the model;"
    )


def test_a_report_saved_before_its_header_told_still_audits() -> None:
    """Reports saved with the earlier header ("the deterministic checks are its verifier") still
    render from their rows: the audit accepts either header."""
    rows = demo_rows()
    assert rows.report is not None
    rows.report.verification = Verification(mode="deterministic")
    data = AuditData(rows)
    args = (
        rows.report.report,
        list(data.evidence_models().values()),
        list(data.source_refs().values()),
        RunStatus.COMPLETED,
        StopReason(rows.report.stop_reason),
    )
    earlier = render_markdown(*args, question=rows.run.question, verification=Verification(
        mode="deterministic"), header="earlier")  # fmt: skip
    assert "the deterministic checks are its verifier" in earlier
    assert "Status: completed | Stop" in earlier
    rows.report.markdown = earlier
    results = [r for r in run_checks(AuditData(rows)) if r.check.name == "markdown-matches-rows"]
    assert results and not any(r.failed or r.skipped for r in results), results
