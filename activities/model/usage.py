"""A model turn's usage, checked against what the host sent and received, before it is counted.

The host estimates every turn from characters, CHARS_PER_TOKEN to a token: the input from the
request it sent (the messages and the tool schemas, as JSON), the output from the reply (its text,
tool names and arguments). Real tokenizers give about 3 to 4.5 characters a token for English,
code and JSON (more tokens, never fewer, for other scripts), so the provider's report is taken as
it is unless it is far below: reported input plus output under 1/UNDER_REPORT_FACTOR of the
estimate is replaced by the estimate, and so is usage that is missing or not whole numbers
(strings, booleans, fractions, negatives; read from the raw body, which the `openai` client would
otherwise convert silently). Each replacement is noted (`Usage.note`, `model_calls.usage_note`),
and the token bound trips on what was really sent.
"""

from __future__ import annotations

import reprlib
from typing import TYPE_CHECKING, Any

from workflows.models import MAX_REPORTED_TOKENS, ToolCall, Usage

if TYPE_CHECKING:
    from workflows.contracts import DecideInput

CHARS_PER_TOKEN = 4
UNDER_REPORT_FACTOR = 4  # a report below a quarter of the estimate is not believed
PROMPT_OVERHEAD_CHARS = 2_000  # the system prompt and schemas, when the request was not measured


def estimate(
    request: DecideInput, sent_chars: int | None, text: str, calls: list[ToolCall]
) -> Usage:
    """The host's estimate of a turn: `sent_chars` of request (else the transcript's size and a
    prompt's overhead), and the reply's text and calls."""
    if sent_chars is None:
        sent_chars = request.context_chars + PROMPT_OVERHEAD_CHARS
    output_chars = len(text) + sum(len(call.name) + len(call.arguments) for call in calls)
    return Usage(
        input_tokens=sent_chars // CHARS_PER_TOKEN,
        output_tokens=output_chars // CHARS_PER_TOKEN + 1,
        estimated=True,
    )


def checked_usage(usage: Any, estimated: Usage) -> Usage:
    """The provider's `usage` (a raw JSON object) when it is sane: whole numbers, input above 0
    (a request always has a prompt), not far below `estimated`, at most MAX_REPORTED_TOKENS a
    turn. Otherwise the estimate or a clamp, with a note saying so."""
    if usage is None:
        return estimated.model_copy(update={"note": "the provider reported no usage: estimated"})
    prompt = _field(usage, "prompt_tokens")
    completion = _field(usage, "completion_tokens")
    if not (_count(prompt) and _count(completion)) or prompt == 0:
        note = (
            f"the provider reported unusable usage (input {_shown(prompt)}, output "
            f"{_shown(completion)}): estimated instead"
        )
        return estimated.model_copy(update={"note": note})
    if (prompt + completion) * UNDER_REPORT_FACTOR < estimated.total:
        note = (
            f"the provider reported {prompt} input and {completion} output tokens, under a "
            f"quarter of the {estimated.total} the host estimates from what it sent and "
            "received (4 characters a token): estimated instead"
        )
        return estimated.model_copy(update={"note": note})
    return _clamped(_reported(usage, prompt, completion))


def _reported(usage: Any, prompt: int, completion: int) -> Usage:
    reasoning = _field(_field(usage, "completion_tokens_details"), "reasoning_tokens")
    cached = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=min(reasoning, completion) if _count(reasoning) else 0,
        cached_input_tokens=min(cached, prompt) if _count(cached) else 0,
    )


def _clamped(reported: Usage) -> Usage:
    if reported.total <= MAX_REPORTED_TOKENS:
        return reported
    input_tokens = min(reported.input_tokens, MAX_REPORTED_TOKENS)
    return reported.model_copy(
        update={
            "input_tokens": input_tokens,
            "output_tokens": MAX_REPORTED_TOKENS - input_tokens,
            "reasoning_tokens": min(reported.reasoning_tokens, MAX_REPORTED_TOKENS - input_tokens),
            "cached_input_tokens": min(reported.cached_input_tokens, input_tokens),
            "note": f"the provider reported {_shown(reported.total)} tokens for one turn: "
            f"counted as {MAX_REPORTED_TOKENS}, the most one turn may report",
        }
    )


def printed(value: object) -> str:
    """str() of anything a JSON body can hold, even an integer of more digits than Python
    prints, or a huge list (cut short)."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # more than sys.int_info.str_digits_check_threshold digits
            return f"<a {value.bit_length()}-bit number>"
    return value if isinstance(value, str) else reprlib.repr(value)


def _field(value: object, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: object) -> str:
    """A reported value fit for a note: at most 20 characters."""
    text = printed(value) if isinstance(value, int) else reprlib.repr(value)
    return text if len(text) <= 20 else f"{text[:12]}... ({len(text)} characters)"
