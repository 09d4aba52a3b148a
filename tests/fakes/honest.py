# ruff: noqa: E501 -- the scripted replies are kept as a model sent them, one line each
"""Honest models: scripts for the OpenAI-compatible fake server that do careful, correct work.

Each plays the sample brief (`examples/briefs/harborq-failures.json`) on the demo corpus the way
a capable model did (`../shared/real-model/`: run1, run6 and run8, with what the host now tells
the model up front, such as naming a flagged conflict by its id) or in ways a real model was
wrongly refused for: number words both ways, ordinals inside words, a count of listed items,
a source's date and version in the limitations, key words only in the section heading, and a
conflict stated honestly. `tests/system/test_honest_model.py` asserts each completes with no
refused step.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes.hostile import BLOG, DEAD_LETTER, VISIBILITY, record_passage, scripted
from tests.fakes.openai_server import Message, Reply, Script, tool

CONFIGURATION = "https://docs.harborq.example/reference/configuration.html"
Step = Callable[[list[Message]], Reply]


def _quote(question: str, source: str, quote: str, claim: str) -> Step:
    return lambda _: tool(
        "record_evidence",
        question_id=question,
        source_id=source,
        quote=quote,
        claim=claim,
        stance="supports",
    )


def _finish(answer: str, findings: list[tuple[str, list[str]]], limitations: str) -> Reply:
    return tool(
        "finish_research",
        answer=answer,
        findings=[{"text": text, "evidence_ids": ids} for text, ids in findings],
        limitations=limitations,
    )


def run1() -> Script:
    """run1-harborq: passages recorded whole; a fact from a passage stated in the limitations,
    "third-party" among them, a rate "per second" and a version in a finding."""
    return scripted(
        [
            lambda _: tool("search_web", query="Harbor Queue dead-letter queue maximum delivery attempts"),
            lambda _: tool("read_page", url=DEAD_LETTER),
            record_passage("Q1", "S1", "used up its delivery attempts", "Harbor Queue moves a message to its dead-letter queue after it has used up its delivery attempts, 5 by default, configurable with max_deliveries."),
            record_passage("Q3", "S1", "dlq redrive", "Once the cause is fixed, messages in a dead-letter queue can be replayed to their source queue with harborq dlq redrive, which resets their delivery count to zero."),
            lambda _: tool("read_page", url=VISIBILITY),
            record_passage("Q2", "S2", "default visibility timeout is", "The default visibility timeout is 30 seconds; releases before 2.0 used 60 seconds."),
        ],
        then=_finish(
            "Harbor Queue counts every receive of a message as a delivery, whether it is acknowledged, nacked, crashes or times out. Once a message has used up its delivery attempts (5 by default, configurable via max_deliveries), the server atomically moves it to the queue's dead-letter queue rather than making it visible again. A received message stays hidden for the visibility timeout, 30 seconds by default, and each expiry of that timeout counts as a delivery. After the underlying problem is fixed, dead-lettered messages can be sent back to their source queue with harborq dlq redrive.",
            [
                ("A message is moved to the dead-letter queue after it has used up its delivery attempts, which default to 5 and are set with max_deliveries; the move is atomic and the message keeps its body, attributes and ID.", ["E001"]),
                ("The default visibility timeout is 30 seconds, for queues that do not set visibility_timeout and for receive calls that pass no value; releases before 2.0 used 60 seconds.", ["E003"]),
                ("Messages in a dead-letter queue can be replayed to their source queue with harborq dlq redrive once the cause is fixed; redrive resets the delivery count to zero and is rate-limited (50 messages per second by default). It was added in Harbor Queue 2.1.", ["E002"]),
            ],
            "Evidence comes from the official Harbor Queue documentation only; I did not check the mirror or third-party blog posts. Queues created under 1.x keep their stored visibility timeout (60 seconds in those releases) after an upgrade.",
        ),
    )  # fmt: skip


def run6() -> Script:
    """run6-harborq-thorough without its refused steps: verbatim quotes, a range of durations
    restated ("from 1 second to 12 hours"), "five" for "5", and "Harbor Queue 2.1 and later"."""
    return scripted(
        [
            lambda _: tool("search_web", query="Harbor Queue default visibility timeout"),
            lambda _: tool("read_page", url=VISIBILITY),
            _quote("Q2", "S1", "Unless you change it, a received Harbor Queue message stays hidden for 30 seconds: the default visibility timeout is 30 seconds, both for queues that do not set visibility_timeout and for receive calls that do not pass a value of their own.", "By default a received message stays hidden for 30 seconds, for queues without their own visibility_timeout and for receive calls that pass no value."),
            lambda _: tool("read_page", url=DEAD_LETTER, find="max_deliveries"),
            _quote("Q1", "S2", "After a message has used up its delivery attempts \u2014 5 by default, set with max_deliveries \u2014 Harbor Queue moves it to the queue's dead-letter queue instead of making it visible again.", "A message is moved to the dead-letter queue once it has used up its delivery attempts, five by default, configurable with max_deliveries."),
            lambda _: tool("read_page", url=CONFIGURATION, find="visibility_timeout"),
            _quote("Q2", "S3", "The default visibility timeout is 30 seconds (30s); the allowed range is 1 second to 12 hours.", "The configuration reference gives the default visibility_timeout as 30s, adjustable from 1 second to 12 hours."),
            lambda _: tool("read_page", source_id="S2", find="replay"),
            record_passage("Q3", "S2", "dlq redrive", "Yes. Once the cause is fixed, dead-lettered messages can be replayed to their source queue with harborq dlq redrive, available since Harbor Queue 2.1."),
        ],
        then=_finish(
            "Harbor Queue retries a failing message a limited number of times and then sets it aside. Each receive counts as a delivery attempt; after the message has used up its attempts (5 by default, set with max_deliveries) it is moved to the queue's dead-letter queue instead of becoming visible again. A received message stays hidden for the visibility timeout, 30 seconds by default (configurable from 1 second to 12 hours), and when that timeout expires the message becomes visible again. Once the underlying problem is fixed, dead-lettered messages can be replayed to their source queue with harborq dlq redrive (Harbor Queue 2.1 and later).",
            [
                ("After a message has used up its delivery attempts, five by default and configurable with max_deliveries, Harbor Queue moves it to the dead-letter queue instead of making it visible again.", ["E002"]),
                ("The default visibility timeout is 30 seconds, both for queues that do not set visibility_timeout and for receive calls that pass no value; the configuration reference allows values from 1 second to 12 hours.", ["E001", "E003"]),
                ("Dead-lettered messages can be replayed to their source queue with harborq dlq redrive once the cause is fixed; redrive was added in Harbor Queue 2.1.", ["E004"]),
            ],
            "All sources are the official Harbor Queue documentation; I found no independent third-party account. The backoff schedule between retries was read but could not be recorded under any sub-question, so its figures are not reported here.",
        ),
    )  # fmt: skip


def run8() -> Script:
    """run8-harborq-conflict: an old blog post says 60 seconds, the docs 30 (and that releases
    before 2.0 used 60): the host flags the conflict, the report states both values, names the
    blog by its id, and describes it by its publication year and the version it was written
    against, as the page gives them."""
    return scripted(
        [
            lambda _: tool("search_web", query="HarborQ visibility timeout default seconds"),
            lambda _: tool("read_page", url=BLOG),
            _quote("Q2", "S1", "HarborQ's default visibility timeout is 60 seconds.", "According to this blog post, HarborQ's default visibility timeout is 60 seconds."),
            lambda _: tool("read_page", url=VISIBILITY, find="default"),
            record_passage("Q2", "S2", "Releases before 2.0", "The official documentation says the default visibility timeout is 30 seconds; releases before 2.0 used 60 seconds, and queues created under 1.x keep their stored value after an upgrade."),
            lambda _: tool("read_page", url=DEAD_LETTER, find="delivery attempts"),
            _quote("Q1", "S3", "After a message has used up its delivery attempts \u2014 5 by default, set with max_deliveries \u2014 Harbor Queue moves it to the queue's dead-letter queue instead of making it visible again.", "Harbor Queue moves a message to the dead-letter queue after it has used up its delivery attempts, 5 by default (max_deliveries)."),
        ],
        then=_finish(
            "Harbor Queue retries a failing message until it has used up its delivery attempts (5 by default, configurable with max_deliveries) and then moves it to the queue's dead-letter queue instead of making it visible again. While a consumer holds a message, it stays hidden for the visibility timeout, which defaults to 30 seconds in current releases.",
            [
                ("After a message has used up its delivery attempts, 5 by default and set with max_deliveries, Harbor Queue moves it to the dead-letter queue instead of making it visible again.", ["E003"]),
                ("The default visibility timeout is 30 seconds; releases before 2.0 used 60 seconds, and queues created under 1.x keep their stored value after an upgrade.", ["E002"]),
            ],
            "A 2023 blog post (E001) written against HarborQ 1.4 states a 60-second default visibility timeout; this matches the pre-2.0 default described in the official documentation (E002), so I treated the documentation as current. I did not research whether dead-lettered messages can be replayed.",
        ),
    )  # fmt: skip


ATTRIBUTES = (
    "hq-dead-letter-reason: max_deliveries_exceeded or expired; hq-source-queue: where it came "
    "from; hq-deliveries: how many times it was received before it was set aside."
)


def plain_words() -> Script:
    """Number words both ways ("five" for 5, "0" for zero), a count of the items a quote lists
    (three attributes, the quote names them without a number), a quote whose key words stand
    only in its section heading, and a conflict stated by saying the sources disagree."""
    return scripted(
        [
            lambda _: tool("search_web", query="dead-letter queue delivery attempts"),
            lambda _: tool("read_page", url=DEAD_LETTER),
            _quote("Q1", "S1", "After a message has used up its delivery attempts \u2014 5 by default, set with max_deliveries \u2014 Harbor Queue moves it to the queue's dead-letter queue instead of making it visible again.", "After five delivery attempts by default a message moves to the dead-letter queue."),
            _quote("Q1", "S1", ATTRIBUTES, "A dead-lettered message carries 3 attributes: why it was set aside, its source queue and how often it was received."),
            _quote("Q3", "S1", "Redrive sends each one back to the place named in its hq-source-queue attribute, resets its delivery count to zero and proceeds at --rate messages per second (50 by default), so that a large backlog does not flood your consumers.", "Redrive sends messages back to their source queue and resets the delivery count to 0."),
            lambda _: tool("read_page", url=VISIBILITY),
            # "default visibility timeout" stands only in the heading above this sentence
            _quote("Q2", "S2", "Unless you change it, a received Harbor Queue message stays hidden for 30 seconds", "A received message stays hidden for thirty seconds unless you change it."),
            lambda _: tool("search_web", query="harborq visibility timeout blog"),
            lambda _: tool("read_page", url=BLOG),
            _quote("Q2", "S3", "HarborQ's default visibility timeout is 60 seconds.", "This post gives a default visibility timeout of 60 seconds."),
        ],
        then=_finish(
            "A message is moved to the dead-letter queue after five delivery attempts by default; redrive sends it back with its delivery count reset to 0. The sources disagree on the default visibility timeout: the documentation says thirty seconds, a blog post 60 seconds.",
            [
                ("After five delivery attempts by default, Harbor Queue moves a message to the dead-letter queue.", ["E001"]),
                ("A dead-lettered message carries 3 attributes: its dead-letter reason, its source queue and how many times it was received.", ["E002"]),
                ("Redrive sends dead-lettered messages back to their source queue and resets their delivery count to 0.", ["E003"]),
                ("The sources disagree: the documentation says a received message stays hidden for thirty seconds unless you change it, a blog post gives a default visibility timeout of 60 seconds.", ["E004", "E005"]),
            ],
            "The blog post (E005) was published in 2023 and written against HarborQ 1.4; the documentation describes Harbor Queue 2.1.",
        ),
    )  # fmt: skip


SCRIPTS = {"run1": run1, "run6": run6, "run8": run8, "plain-words": plain_words}
