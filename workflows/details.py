"""What the Temporal Web UI shows of a run (pure): its search attributes, and as its current
details its progress while it runs, its outcome and report once it ended."""

from __future__ import annotations

import re
from typing import Any

from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from workflows.cleaning import as_text
from workflows.models import UNVERIFIED, Progress

STATUS_KEY = SearchAttributeKey.for_keyword("ResearchStatus")
STOP_REASON_KEY = SearchAttributeKey.for_keyword("ResearchStopReason")
# Set when a run completes: true when a verifier model checked its meaning, false when the rules
# alone passed it (no verifier: `offline`, `fixed`, RESEARCH_VERIFIER_PROVIDER=off).
VERIFIED_KEY = SearchAttributeKey.for_bool("ResearchVerified")
# The lanes the run entered (`workflows.lanes`): `fixed`, `agent`, or both (it escalated).
LANE_KEY = SearchAttributeKey.for_keyword_list("ResearchLane")


def attribute_values(progress: Progress, lanes: list[str]) -> tuple[str, ...]:
    """What the search attributes hold, to tell a change: status, stop reason and, for a run
    started since lanes, its lanes (a run recorded before keeps its two values)."""
    stop = progress.stop_reason.value if progress.stop_reason else ""
    return (progress.status.value, stop, *([",".join(lanes)] if lanes else []))


def search_attributes(
    values: tuple[str, ...], verified: bool | None
) -> list[SearchAttributeUpdate[Any]]:
    """The run's search attributes (Web UI lists, `temporal workflow list --query`): its status
    and stop reason (`values`, then its lanes when it has them), and once it completed whether
    its meaning was checked."""
    updates: list[SearchAttributeUpdate[Any]] = [
        STATUS_KEY.value_set(values[0]),
        STOP_REASON_KEY.value_set(values[1]),
    ]
    if verified is not None:
        updates.append(VERIFIED_KEY.value_set(verified))
    if len(values) > 2 and values[2]:
        updates.append(LANE_KEY.value_set(values[2].split(",")))
    return updates


def lanes_line(progress: Progress) -> str:
    """The lanes a run entered and why it escalated, once it entered the fixed lane ("" for a
    run of the agent alone, as every run was before lanes)."""
    if "fixed" not in progress.lanes:
        return ""
    why = f" (escalated: {as_text(progress.escalation)})" if progress.escalation else ""
    return f"lanes: {' → '.join(progress.lanes)}{why}\n\n"


def running(progress: Progress) -> str:
    """Each counter against its bound, as `start --wait` shows them."""
    counters, limits = progress.counters, progress.limits
    return (
        f"**step {counters.steps}/{limits.max_steps}** "
        f"searches {counters.searches}/{limits.max_searches} | "
        f"pages {counters.page_fetches}/{limits.max_page_fetches} | "
        f"evidence {progress.evidence_count} | tokens {counters.tokens}/{limits.max_tokens}\n\n"
        f"{lanes_line(progress)}"
        f"open questions: {', '.join(progress.open_questions) or 'none'}\n\n"
        f"last: {as_text(progress.last_action)}"  # model input is text, never markup
    )


def ended(progress: Progress, markdown: str, verified: bool | None) -> str:
    """An ended run: its own outcome (Temporal's badge says Completed for an incomplete or failed
    run too, and a run the rules alone passed says so), the command that prints the report, and
    the report itself, quotes and all."""
    counters, stop = progress.counters, progress.stop_reason
    status = progress.status.value + (f": {UNVERIFIED}" if verified is False else "")
    return (
        f"**Research status: {status}** | stop: {stop.value if stop else '-'}"
        f" | steps {counters.steps}/{progress.limits.max_steps}"
        f" | evidence {progress.evidence_count} | tokens {counters.tokens}\n\n"
        f"{lanes_line(progress)}"
        f"The report in a terminal: `research report {progress.run_id}` (`--json`: quotes and "
        f"URLs)\n\n---\n\n{for_web_ui(markdown)}"
    )


_NUMBERED = re.compile(r"^(\d+)\. (.*)$")
_UNDER_ITEM = re.compile(r"^ {3}(\S.*)$")
_FENCE = re.compile(r"^(`{3,})")


def for_web_ui(markdown: str) -> str:
    """The report as the Web UI's current details render it: that renderer shows a numbered list
    (`1. finding` with its indented verifier line) as one run-on paragraph, so each numbered item
    and each line under it becomes a paragraph of its own (`**1.** finding`). A fenced block (a
    quote) is left as it is. The report in the ledger and in `research report` is unchanged."""
    lines: list[str] = []
    in_item = False  # the lines under a numbered item, until a line that is not
    fence = ""  # the fence of the code block (a quote) the line is in: its text stays as it is
    for line in markdown.split("\n"):
        numbered, under = _NUMBERED.match(line), _UNDER_ITEM.match(line)
        opened = _FENCE.match(line)
        if fence or opened:
            lines.append(line)
            closes = fence and re.fullmatch(rf"`{{{len(fence)},}}\s*", line)
            fence = "" if closes else fence or (opened[1] if opened else "")
            in_item = False
            continue
        if numbered:
            lines += ["", f"**{numbered[1]}.** {numbered[2]}"]
        elif under and in_item:
            lines += ["", under[1]]
            continue
        else:
            lines.append(line)
        in_item = bool(numbered)
    return "\n".join(lines)
