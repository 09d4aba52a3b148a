"""The run's side of the review page: the bounds used against their limits, the timeline of steps,
and the commands that check and reproduce it."""

from __future__ import annotations

import json
import shlex
from typing import Any

from activities.ledger.review import RunRows, StepRow, VerdictRow
from starter.page.markup import Html, cut, element, link, section

MAX_STEPS_SHOWN = 400  # the first and last half of a longer run's steps
MAX_ARGUMENT_CHARS = 80  # one argument's value in the timeline
MAX_RESULT_CHARS = 400


def bounds_section(rows: RunRows) -> Html:
    """Each bound: used, its limit, and a bar (a `meter`, drawn by the browser)."""
    counters, limits = rows.run.counters, rows.run.brief.limits
    ended = rows.run.finished_at or (rows.report.saved_at if rows.report else None)
    seconds = int((ended - rows.run.started_at).total_seconds()) if ended else 0
    used = [
        ("Steps", counters.steps, limits.max_steps),
        ("Searches", counters.searches, limits.max_searches),
        ("Pages fetched", counters.page_fetches, limits.max_page_fetches),
        ("Tokens", counters.tokens, limits.max_tokens),
        ("Seconds", seconds, limits.deadline_seconds),
        ("Finish attempts", counters.finish_attempts, limits.max_finish_attempts),
    ]
    rows_html = [
        element(
            "tr",
            element("th", name, scope="row"),
            element(
                "td",
                element(
                    "meter",
                    f"{value} of {limit}",
                    value=value,
                    min=0,
                    max=limit,
                    high=int(limit * 0.8),
                    optimum=0,
                ),
            ),
            element("td", f"{value:,} / {limit:,}", class_="figure"),
        )
        for name, value, limit in used
    ]
    note = "Limits as the brief set them (an operator may have raised them while it ran)."
    return section(
        "bounds",
        "Bounds used",
        element("table", rows_html, class_="bounds"),
        element("p", note, class_="note"),
    )


def timeline_section(rows: RunRows) -> Html:
    steps = rows.steps
    shown = steps if len(steps) <= MAX_STEPS_SHOWN else steps[: MAX_STEPS_SHOWN // 2]
    later = steps[-(MAX_STEPS_SHOWN // 2) :] if len(steps) > MAX_STEPS_SHOWN else []
    verdicts: dict[int, list[VerdictRow]] = {}
    for verdict in rows.verdicts:
        verdicts.setdefault(verdict.step, []).append(verdict)
    body = [_step(step, verdicts.get(step.step, [])) for step in shown]
    if later:
        gap = len(steps) - len(shown) - len(later)
        body.append(element("tr", element("td", f"... {gap} steps not shown", colspan=4)))
        body += [_step(step, verdicts.get(step.step, [])) for step in later]
    table = element(
        "table",
        element(
            "thead",
            element("tr", [element("th", h) for h in ("Step", "Tool", "Arguments", "Result")]),
        ),
        element("tbody", body),
        class_="timeline",
    )
    return section(
        "timeline",
        "Timeline",
        table if steps else element("p", "No steps were recorded."),
    )


def _step(step: StepRow, verdicts: list[VerdictRow]) -> Html:
    result: list[object] = [cut(step.summary, MAX_RESULT_CHARS)]
    if not step.ok:
        refused = element("span", "refused", class_="badge bad")
        result = [refused, " ", cut(step.error or step.summary, MAX_RESULT_CHARS)]
    elif step.insufficient:
        result.insert(0, element("span", "nothing useful", class_="badge warn"))
        result.insert(1, " ")
    judged = [
        element("li", f"{v.verdict.replace('_', ' ')}: ", cut(v.claim, 120)) for v in verdicts
    ]
    return element(
        "tr",
        element("td", str(step.step), class_="figure"),
        element("td", element("code", cut(step.tool, 64))),
        element("td", short_arguments(step.arguments)),
        element("td", result, element("ul", judged, class_="verdicts") if judged else None),
        id=f"step-{step.step}",
    )


def short_arguments(arguments: str) -> str:
    """`query=...; url=...`: each argument's value cut short; unparsed text as it is, cut."""
    try:
        parsed: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        return cut(arguments, MAX_ARGUMENT_CHARS * 2)
    if not isinstance(parsed, dict):
        return cut(arguments, MAX_ARGUMENT_CHARS * 2)
    parts = []
    for key, value in list(parsed.items())[:8]:
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{cut(str(key), 40)}={cut(' '.join(shown.split()), MAX_ARGUMENT_CHARS)}")
    return "; ".join(parts)


def reproduce_section(run_id: str, web_ui: str) -> Html:
    quoted = shlex.quote(run_id)
    commands = [
        (f"research audit {quoted}", "check the ledger, the report and the history agree"),
        (f"research replay {quoted}", "replay the workflow history against the current code"),
        (f"research rerun {quoted}", "run it again on its recorded decisions, then compare"),
        (f"research export {quoted} DIR", "the rows, snapshots and history as files"),
    ]
    items = [element("li", element("code", command), f": {what}") for command, what in commands]
    ui = link(web_ui) if web_ui else "not known here (run `research dev` and open its Web UI)"
    return section(
        "reproduce",
        "Check and reproduce",
        element("ul", items),
        element("p", element("span", "Temporal Web UI: ", class_="label"), ui),
    )
