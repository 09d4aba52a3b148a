"""The floor's word rules (no verifier) on the false refusals real models met, each class beside
the fair refusal it must keep: a correct claim in the quote's own meaning passes; a changed
figure, a dropped qualifier, an inverted negation or an off-topic quote is still refused."""

from __future__ import annotations

import re

import pytest

from workflows.canonical import canonical
from workflows.quantities import plural, read
from workflows.rules import RULES
from workflows.substance import (
    claim_problem,
    distinctive_words,
    evidence_problem,
    figure_problems,
    unsupported_negation,
)

PREFETCH = (
    "When using the default of early acknowledgment, having a prefetch multiplier setting of "
    "one, means the worker will reserve at most one extra task for every worker process: or "
    "in other words, if the worker is started with -c 10, the worker may reserve at most 20 "
    "tasks (10 acknowledged tasks executing, and 10 unacknowledged reserved tasks) at any time."
)
RETRIES = (
    "A number. Maximum number of retries before giving up. A value of None means task will "
    "retry forever. By default, this option is set to 3."
)
MAX_RETRIES = "max_retries = 3\n\nMaximum number of retries before giving up."
TWICE = "ETA tasks that exceed the visibility timeout will be executed twice (or more)."
LIFETIME = "PERMANENT_SESSION_LIFETIME\n\nDefault: timedelta(days=31) (2678400 seconds)"
TIMEDELTA = "tomorrow = datetime.utcnow() + timedelta(days=1)"
CHANGED = "Changed in version 2.0: The default is None instead of 12 hours."
CHANGED_ABOVE = "Changed in version 2.0:\nDefaults to None instead of 12 hours."
EXPIRATION = "The max_age argument is used to set the expiration to 30 days."

# (claim, quotes, refused): a false refusal the floor made, then fair ones of the same class
FIGURES = [
    # a number followed by a verb is no count of that verb, and "10 may" is no date
    ("a worker started with -c 10 may reserve at most 20 tasks", [PREFETCH], False),
    ("a worker started with -c 12 may reserve at most 20 tasks", [PREFETCH], True),
    ("a worker started with -c 10 may reserve 20 tasks", [PREFETCH], True),
    (
        "a prefetch multiplier of one still lets it reserve at most one extra task",
        [PREFETCH],
        False,
    ),
    (
        "a prefetch multiplier setting of one means the worker will reserve at most one extra "
        "task for every worker process",
        [PREFETCH],
        False,
    ),
    ("the worker will reserve at most two extra tasks", [PREFETCH], True),
    ("the worker will reserve one extra task", [PREFETCH], True),
    ("One trade-off is that the worker reserves tasks it may not run.", [PREFETCH], False),
    ("One hour is the limit.", [PREFETCH], True),
    ("run it on one worker", ["run it on two workers"], True),
    # counts of the research's own pages and sources are not the subject's figures
    ("Q2 rests on one page.", [TIMEDELTA], False),
    ("Q2 rests on two sources.", [TIMEDELTA], False),
    ("the task runs 1 day later", [TIMEDELTA], False),
    ("the task runs 2 days later", [TIMEDELTA], True),
    # a qualifier said in other words
    ("the task is retried at most 3 times", [RETRIES], False),
    ("the task is retried at most 3 times", [MAX_RETRIES], False),
    ("the task is retried at most 4 times", [RETRIES], True),
    ("the task is retried at least 3 times", [RETRIES], True),
    ("the task is retried 3 times", ["the task is retried at most 3 times"], True),
    ("the pool keeps at least 2 workers", ["min_workers = 2\n\nThe smallest pool size."], False),
    ("the pool keeps at most 2 workers", ["min_workers = 2\n\nThe smallest pool size."], True),
    # a paragraph naming a maximum and a minimum bounds neither way
    ("at most 2 workers", ["min_workers = 2, max_workers = 8"], True),
    # another paragraph's maximum bounds nothing here
    ("at most 3 retries", ["The maximum is 10.\n\nIt retries 3 times."], True),
    ("it is executed twice or more", [TWICE], False),
    ("it is executed twice", [TWICE], True),
    ("it is executed three times or more", [TWICE], True),
    ("sessions last 31 days", [LIFETIME], False),
    ("sessions last 30 days", [LIFETIME], True),
    ("sessions last 31 days", ["Default: timedelta(days=31)"], False),
    ("sessions last 31 hours", ["Default: timedelta(days=31)"], True),
    # eras: what a change note replaced is the older value; "is used to" is no era
    ("before version 2.0 the default was 12 hours", [CHANGED], False),
    ("before version 2.0 the default was 12 hours", [CHANGED_ABOVE], False),
    ("the default is 12 hours", [CHANGED], True),
    ("the default is 12 hours", [CHANGED_ABOVE], True),
    ("max_age sets the expiration to 30 days", [EXPIRATION], False),
    ("max_age used to set the expiration to 30 days", [EXPIRATION], True),
    ("the default is 12 hours instead of 1 hour", ["Use 12 hours instead of 1 hour."], False),
]


@pytest.mark.parametrize(("claim", "quotes", "refused"), FIGURES)
def test_figures_are_compared_as_the_quote_means_them(
    claim: str, quotes: list[str], refused: bool
) -> None:
    assert bool(figure_problems(claim, quotes)) is refused, figure_problems(claim, quotes)


def test_a_month_is_a_date_only_with_its_capital() -> None:
    assert [item.kind for item in read("started with -c 10 may reserve")] == ["amount"]
    assert [item.kind for item in read("released on 10 May")] == ["date"]


ACKS_LATE = (
    "task_acks_late\n\nDefault: Disabled.\n\nLate ack means the task messages will be "
    "acknowledged after the task has been executed, not just before (the default behavior)."
)
ADVANCE = (
    "Since the worker cannot detect if your tasks are idempotent, the default behavior is to "
    "acknowledge the message in advance, just before it's executed, so that a task invocation "
    "that already started is never executed again."
)
BROKERS = (
    "Name | Status | Monitoring | Remote Control\n\nRabbitMQ | Stable | Yes | Yes\n\n"
    "Redis | Stable | Yes | Yes\n\nAmazon SQS | Stable | No | No"
)
DLQ = "Harbor Queue moves a message to the dead-letter queue after 5 failed delivery attempts."
INSTEAD = (
    "After a message has used up its delivery attempts, Harbor Queue moves it to the "
    "dead-letter queue instead of making it visible again."
)
DEDUPLICATE = "worker_deduplicate_successful_tasks\n\nDefault: False\n\nBefore each task execution"

# (text, quotes, refused)
NEGATIONS = [
    ("Late ack is not the default behaviour.", [ACKS_LATE], False),
    ("Late ack is not the default behavior.", [ACKS_LATE], False),
    ("Not by default.", [ACKS_LATE, ADVANCE], False),
    ("Remote control: yes for RabbitMQ and Redis, no for Amazon SQS.", [BROKERS], False),
    ("With nothing configured, the message moves after 5 failed delivery attempts.", [DLQ], False),
    ("Without a policy, the message moves after 5 failed delivery attempts.", [DLQ], False),
    ("It does not make the message visible again.", [INSTEAD], False),
    ("Deduplication is not on by default.", [DEDUPLICATE], False),
    # an inverted fact stays refused: what a contrast or a value negates is not the whole line
    ("Harbor Queue never moves failing messages anywhere.", [INSTEAD], True),
    ("Celery does not guarantee exactly-once execution.", [DEDUPLICATE], True),
    ("Harbor Queue never moves a message to the dead-letter queue.", [DLQ], True),
    ("Harbor Queue does not move failing messages.", [DLQ], True),
    ("It moves the message without counting delivery attempts.", [DLQ], True),
    ("Celery does not guarantee exactly-once execution.", [ACKS_LATE, ADVANCE], True),
    ("Redis does not support remote control.", [BROKERS], True),
]


@pytest.mark.parametrize(("text", "quotes", "refused"), NEGATIONS)
def test_a_negation_is_matched_by_what_a_quote_negates_around_it(
    text: str, quotes: list[str], refused: bool
) -> None:
    found = unsupported_negation(text, quotes)
    assert (found is not None) is refused, found


# ---------------------------------------------------------------- refusals in plain words

# Words the figure rules add to a refusal of their own (what a figure measures or counts).
_RULE_WORDS = frozenset(
    "a an bare number duration size percentage count counting attempts range no qualifier with "
    "at least most more fewer than about exactly tied to before after as current say so not the "
    "same unit or thing state it quote s".split()
)
_TEMPLATE_WORDS = frozenset(
    word
    for item in RULES
    for text in item.refusals.values()
    for word in re.findall(r"[a-z]+", text.lower())
)


def _unknown_words(refusal: str, *texts: str) -> set[str]:
    """The words of `refusal` that no rule's sentence holds and no given text writes (a stem
    such as "mak", or "processs", is neither)."""
    given = {word for text in texts for word in re.findall(r"[a-z]+", canonical(text).lower())}
    said = set(re.findall(r"[a-z]+", refusal.lower()))
    return said - given - _TEMPLATE_WORDS - _RULE_WORDS


QUESTION = "How many delivery attempts does Harbor Queue make before moving a message?"


def _refusals_of_every_kind() -> list[tuple[str, tuple[str, ...]]]:
    found = []
    for claim, quotes, refused in FIGURES:
        if refused:
            for problem in figure_problems(claim, quotes):
                found.append((f"finding 1 states {problem.figure} {problem.why}", (claim, *quotes)))
            found.append((str(claim_problem(claim, quotes[0])), (claim, quotes[0])))
    for text, quotes, refused in NEGATIONS:
        if refused:
            negated = unsupported_negation(text, quotes)
            assert negated is not None
            found.append((f"{negated[0]} {negated[1]}", (text, *quotes)))
    processes = "The pool starts 5 processes for the beat schedule."
    starts = "it starts 5 seconds of work"
    found.append((str(claim_problem(starts, processes)), (starts, processes)))
    terms = distinctive_words(QUESTION, QUESTION, [QUESTION, "What is the default timeout?"])
    unrelated = "The console shows every topic with its name, its region and its owner."
    problem = evidence_problem(unrelated, "", "c", terms, QUESTION)
    found.append((str(problem), (QUESTION, unrelated)))
    return found


def test_refusals_say_what_was_compared_in_words_of_the_texts_never_stems() -> None:
    found = _refusals_of_every_kind()

    assert len(found) > 30
    for refusal, texts in found:
        assert refusal != "None"
        assert _unknown_words(refusal, *texts) == set(), refusal


def test_a_stem_or_a_misspelt_plural_would_be_caught() -> None:
    assert _unknown_words("none of: mak, mov", "How many moves does it make?") == {"mak", "mov"}
    assert _unknown_words("counting processs", "5 processes") == {"processs"}
    assert plural("process") == "processes" and plural("retry") == "retries"
    assert plural("extra task") == "extra tasks" and plural("day") == "days"


def test_a_figure_refusal_shows_the_quote_words_it_was_compared_with() -> None:
    problem = claim_problem("the task is retried at least 3 times", RETRIES)

    assert problem == (
        'states "at least 3 times" but the quote says "this option is set to 3", with no '
        "qualifier: state it with the quote's qualifier"
    )


# ---------------------------------------------------------------- relevance

MAIN = "Does Harbor Queue deliver each message exactly once?"
SUBS = [
    "With default settings, can a Harbor Queue message end up being delivered more than once?",
    "With batching enabled, can a Harbor Queue message be delivered more than once, and when?",
    "Is there a setting that makes a consumer skip a message it already processed?",
]


@pytest.mark.parametrize(
    ("quote", "refused"),
    [
        # what the main question asks ("delivered ... more than once") is the sub-question's too
        ("If the consumer does not delete it within the visibility timeout, the message is "
         "delivered again to another consumer.", False),
        # a name the whole brief is about tells nothing; a sentence about something else is off
        ("The Harbor Queue console lists every queue with its region and its owner.", True),
        ("Each queue has a region, an owner and a retention period of its own.", True),
    ],
)  # fmt: skip
def test_a_quote_touching_what_the_question_asks_is_relevant(quote: str, refused: bool) -> None:
    terms = distinctive_words(SUBS[0], MAIN, SUBS)
    problem = evidence_problem(quote, "", "", terms, SUBS[0])
    assert (problem is not None) is refused, problem
    assert "harbor" not in terms and "deliver" in terms
