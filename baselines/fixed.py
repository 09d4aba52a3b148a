"""The fixed pipeline: the evaluation's baseline, with no loop and no judgement of its own.

Per question, in order: search the question, read the first result that can be read, quote its
best sentence for the question's words (`baselines.offline.candidates`); then submit once. No
`find`, no second result, no second source: what the agent policy and models add is measured
against this.
"""

from __future__ import annotations

from baselines.offline import (
    Seen,
    candidates,
    estimate_usage,
    finish_call,
    observe,
    record_call,
    tool_call,
)
from workflows.contracts import DecideInput
from workflows.models import Decision, Question, ToolCall
from workflows.tools import READ_PAGE, SEARCH_WEB


def decide_fixed(request: DecideInput) -> Decision:
    seen = observe(request)
    call = next(
        (c for q in request.brief.questions if (c := _step(q, request, seen)) is not None),
        None,
    )
    call = call or finish_call(request, seen, judged=False)
    return Decision(tool_calls=[call], usage=estimate_usage(request, call), model="fixed")


def _step(question: Question, request: DecideInput, seen: Seen) -> ToolCall | None:
    """The question's next call, or None when it is done (recorded, tried, or out of budget)."""
    if question.id in seen.evidence or any(qid == question.id for qid, _ in seen.tried):
        return None
    if question.text not in seen.searches:
        return tool_call(SEARCH_WEB, query=question.text) if request.budget.searches_left else None
    for url in (hit.url for hit in seen.searches[question.text]):
        if url in seen.failed_urls:
            continue
        if url not in seen.read_urls:
            return tool_call(READ_PAGE, url=url) if request.budget.pages_left else None
        source = seen.read_urls[url]
        best = [c for c in candidates(question, request, seen) if c.source_id == source]
        return record_call(question, best[0]) if best else None
    return None
