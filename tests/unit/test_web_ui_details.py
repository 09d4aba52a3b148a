"""The report as the Web UI's current details show it (`workflows.details.for_web_ui`): its
renderer runs a numbered list together (seen in headless Chromium, Temporal UI 2.54.1), so each
numbered finding and each line under it is a paragraph of its own; nothing else changes."""

from __future__ import annotations

from workflows.details import for_web_ui

REPORT = """## Findings

1. Messages move to the DLQ after 5 delivery attempts. (cites **E001**)
   *Verifier: supported* (E001: "After a message has used up its delivery attempts")
2. The default visibility timeout is 30 seconds. (cites **E002**)
   *Verifier: supported* (E002: "stays hidden for 30 seconds")

## Evidence

> When a message is dead-lettered
>    indented inside a quote

   an indented line under no numbered item
"""


def test_each_numbered_finding_and_its_verifier_line_is_a_paragraph() -> None:
    shown = for_web_ui(REPORT)

    paragraphs = [part.strip() for part in shown.split("\n\n") if part.strip()]
    assert paragraphs[:5] == [
        "## Findings",
        "**1.** Messages move to the DLQ after 5 delivery attempts. (cites **E001**)",
        '*Verifier: supported* (E001: "After a message has used up its delivery attempts")',
        "**2.** The default visibility timeout is 30 seconds. (cites **E002**)",
        '*Verifier: supported* (E002: "stays hidden for 30 seconds")',
    ]


def test_the_rest_of_the_report_is_left_as_it_was() -> None:
    shown = for_web_ui(REPORT)

    tail = REPORT[REPORT.index("## Evidence") :]
    assert shown.endswith(tail)
    assert for_web_ui("# Title\n\nNo list here.\n") == "# Title\n\nNo list here.\n"


def test_a_quote_in_its_fence_is_left_as_the_ledger_has_it() -> None:
    quote = "Steps:\n1. stop the consumer\n   2. indented\n```\n1. after a shorter fence"
    report = f"## Evidence\n\n````text\n{quote}\n````\n\n1. a finding after it\n"

    shown = for_web_ui(report)

    assert f"````text\n{quote}\n````" in shown
    assert "**1.** a finding after it" in shown
