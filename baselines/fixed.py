"""The fixed pipeline: the evaluation's baseline, with no loop and no judgement of its own.

Per question, in order: search the question, read the first result that can be read, quote its
best excerpt (any distinctive word will do); then submit once. No `find`, no second result, no
second source: what the agent policy and models add is measured against this.
"""

from __future__ import annotations

from baselines.excerpts import best_excerpt, wanted_words
from baselines.offline import (
    Seen,
    estimate_usage,
    finish_call,
    observe,
    record_call,
    tool_call,
)
from workflows.contracts import DecideInput
from workflows.models import Decision, Question, ToolCall
from workflows.tools import READ_PAGE, SEARCH_WEB, RecordEvidenceArgs


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
    if question.id in seen.evidence or _tried(question, request):
        return None
    if question.text not in seen.searches:
        return tool_call(SEARCH_WEB, query=question.text) if request.budget.searches_left else None
    for url in (hit.url for hit in seen.searches[question.text]):
        if url in seen.failed_urls:
            continue
        if url not in seen.read_urls:
            return tool_call(READ_PAGE, url=url) if request.budget.pages_left else None
        wanted = wanted_words(question, request)
        source = {seen.read_urls[url]}
        excerpt = best_excerpt(wanted, seen.passages, seen.used_quotes, source, 1)
        return record_call(question, excerpt, seen) if excerpt is not None else None
    return None


def _tried(question: Question, request: DecideInput) -> bool:
    """A record for the question was refused: the pipeline does not try again."""
    return any(
        isinstance(entry.args, RecordEvidenceArgs)
        and entry.args.question_id == question.id
        and not entry.result.ok
        for entry in request.transcript
    )
