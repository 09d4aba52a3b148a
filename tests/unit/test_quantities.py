# ruff: noqa: RUF001, RUF003 -- confusable characters are what this module is about
"""Figures as quantities: the parser over real documentation sentences, both ways of each rule."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workflows.canonical import canonical, direction_controls, mixed_script, strip_invisible
from workflows.quantities import Quantity, matches, mismatch, read


def one(text: str) -> Quantity:
    found = [item for item in read(text) if item.kind == "amount"]
    assert len(found) == 1, (text, found)
    return found[0]


def supported(claim: str, evidence: str) -> bool:
    """Every figure of `claim` is one `evidence` states."""
    known = read(evidence)
    return all(any(matches(stated, item) for item in known) for stated in read(claim))


# (sentence, value, unit, noun, qualifier)
AMOUNTS = [
    ("Harbor Queue makes 30 delivery attempts.", "30", "", "attempt", "exactly"),
    ("the message stays hidden for 30 seconds", "30", "duration", "", "exactly"),
    ("Durations are written with a unit (500ms)", "0.500", "duration", "", "exactly"),
    ("Default: 256KiB", "262144", "size", "", "exactly"),
    ("Up to 20% random jitter is added", "20", "percent", "", "at most"),
    ("is retried up to 3 times", "3", "", "attempt", "at most"),
    ("at least 5, usually many more", "5", "", "", "at least"),
    ("more than 10 consumers", "10", "", "consumer", "more than"),
    ("fewer than 3 replicas", "3", "", "replica", "fewer than"),
    ("after about 1 second", "1", "duration", "", "about"),
    ("5 attempts or more", "5", "", "attempt", "at least"),
    ("a maximum of 14d", "1209600", "duration", "", "at most"),
    ("twelve", "12", "", "", "exactly"),
    ("a dozen retries", "12", "", "attempt", "exactly"),
    ("zero", "0", "", "", "exactly"),
    ("resets its delivery count to zero.", "0", "", "", "exactly"),
    ("one billion rows", "1000000000", "", "row", "exactly"),
    ("1 billion rows", "1000000000", "", "row", "exactly"),
    ("two hundred and fifty messages", "250", "", "message", "exactly"),
    ("twenty-five messages", "25", "", "message", "exactly"),
    ("10k messages", "10000", "", "message", "exactly"),
    ("1,000 messages", "1000", "", "message", "exactly"),
    ("a 60-second default", "60", "duration", "", "exactly"),
    ("counts one delivery", "1", "", "attempt", "exactly"),
    ("the server answered twice", "2", "", "attempt", "exactly"),
]


@pytest.mark.parametrize(("text", "value", "unit", "noun", "qualifier"), AMOUNTS)
def test_amounts_are_read_with_unit_noun_and_qualifier(
    text: str, value: str, unit: str, noun: str, qualifier: str
) -> None:
    quantity = one(text)
    assert quantity.value == Decimal(value)
    assert (quantity.unit, quantity.noun, quantity.qualifier) == (unit, noun, qualifier)


def test_ranges_keep_both_ends_and_a_unit_given_once() -> None:
    assert (one("range 1 to 1000").value, one("range 1 to 1000").high) == (1, 1000)
    hours = one("the allowed range is 1 second to 12 hours")
    assert (hours.unit, hours.value, hours.high, hours.qualifier) == ("duration", 1, 43200, "range")
    assert one("between 2 and 5 seconds").high == 5
    assert one("5-10 seconds").unit == "duration"


def test_rates_say_what_they_are_per() -> None:
    assert one("50 messages per second").per == "second"
    assert one("50 messages").per == ""


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("PostgreSQL 15 adds it", "version", "15"),
        ("v1.4 of the client", "version", "1.4"),
        ("Redrive was added in Harbor Queue 2.1.", "version", "2.1"),
        ("Releases before 2.0 used 60 seconds.", "version", "2.0"),
        ("queues created under 1.x keep it", "version", "1.x"),
        ("a 2023 blog post", "year", "2023"),
        ("Published 18 April 2023.", "date", "2023-04-18"),
        ("Published on April 18th, 2023.", "date", "2023-04-18"),
        ("Published: 2023-04-18.", "date", "2023-04-18"),
        ("Published 18 April.", "date", "18 apr"),
        ("Fixed in the 2.0 release", "version", "2.0"),
        ("Python 3.11 adds it", "version", "3.11"),
    ],
)
def test_versions_years_and_dates_are_names_not_counts(text: str, kind: str, name: str) -> None:
    assert any((item.kind, item.name) == (kind, name) for item in read(text)), read(text)
    assert not any(item.kind == "amount" and item.name == name for item in read(text))


@pytest.mark.parametrize(
    "text",
    [
        "I found no independent third-party account.",
        "a first-class citizen",
        "the 5th attempt",
        "the 99th-percentile duration",
        "they extend the timeout every third of its length",
        "cite E001 and S1.P2",
        "listen on 0.0.0.0:7450",
        "set with max_deliveries",
        "harborq extend reports 7f3c9a",
        "one of the consumers",
        "no one reads it",
    ],
)
def test_ordinals_identifiers_and_pronouns_are_not_figures(text: str) -> None:
    assert [item for item in read(text) if item.kind == "amount"] == []


def test_years_before_a_counted_noun_are_amounts() -> None:
    assert one("2000 messages").noun == "message"
    assert one("2048 bytes").unit == "size"


# (claim, evidence, supported): both directions of every rule
SUPPORT = [
    ("Harbor Queue makes 30 delivery attempts.", "the message stays hidden for 30 seconds", False),
    ("the timeout is 30 seconds", "the default visibility timeout is 30 seconds (30s)", True),
    ("It waits 1 minute", "it waits 60 seconds", True),
    ("up to 1000 delivery attempts by default", "Default: 5; range 1 to 1000.", False),
    ("configurable from 1 to 1000", "Default: 5; range 1 to 1000.", True),
    ("adjustable from 1 second up to 12 hours", "the allowed range is 1 second to 12 hours", True),
    ("adjustable from 1 second up to 6 hours", "the allowed range is 1 second to 12 hours", False),
    ("1 second, up to 12 hours", "the allowed range is 1 second to 12 hours", False),
    ("5 delivery attempts by default", "Default: 5; range 1 to 1000.", True),
    ("at least 5, usually many more", "5 by default", False),
    ("5 by default", "at least 5", False),
    ("about 5 attempts", "5 attempts", True),
    ("5 attempts", "about 5 attempts", False),
    ("the default visibility timeout is 60 seconds", "Releases before 2.0 used 60 seconds.", False),
    ("releases before 2.0 used 60 seconds", "Releases before 2.0 used 60 seconds.", True),
    ("releases before 2.0 used 30 seconds", "the default is 30 seconds", False),
    ("0 retries", "resets its delivery count to zero", True),
    ("zero retries", "0 retries", True),
    ("1 billion rows", "one billion rows", True),
    ("one billion rows", "1 billion rows", True),
    ("twelve retries", "retried 5 times", False),
    ("a dozen retries", "retried 12 times", True),
    ("5 retries", "retried 5 times", True),
    ("3 consumers", "3 attempts", False),
    ("50 messages per second", "at --rate messages per second (50 by default)", True),
    ("50 messages per minute", "50 messages per second", False),
    ("Up to 20% jitter", "Up to 20% random jitter is added", True),
    ("20% jitter", "Up to 20% random jitter is added", False),
    ("the cap is 300 seconds", "never exceeds max_backoff (300 seconds by default)", True),
    ("added in Harbor Queue 2.1", "Redrive was added in Harbor Queue 2.1.", True),
    ("added in Harbor Queue 2.2", "Redrive was added in Harbor Queue 2.1.", False),
    ("PostgreSQL 15 or newer", "needs PostgreSQL 15", True),
    # a date however written is one date; another day, or a year the evidence lacks, is not
    ("released on 1 May 2023", "Released: 2023-05-01.", True),
    ("released on May 1, 2023", "Released 1 May 2023", True),
    ("released on 1 May", "Released: 2023-05-01.", True),
    ("released in 2023", "Released: 2023-05-01.", True),
    ("released on 2 May 2023", "Released: 2023-05-01.", False),
    ("released on 1 May 2024", "Released: 2023-05-01.", False),
    ("released on 1 May 2023", "Released 1 May", False),
    ("the 2.0 release shipped it", "2.0 was released that day.", True),
    ("the 2.1 release shipped it", "2.10 was released that day.", False),
    ("run it on one worker", "run it on a single worker", True),
    ("run it on a single worker", "run it on 1 worker", True),
    ("run it on two workers", "run it on a single worker", False),
    ("it uses single quotes", "strings take single quotes", True),
    ("a single-threaded loop", "the loop is single-threaded", True),
    # a setting's value written name=value is the value
    ("max_retries is 5 by default", "The default is max_retries=5.", True),
    ("max_retries is 6 by default", "The default is max_retries=5.", False),
    ("5 retries by default", "The default is max_retries=5.", True),
    ("5 retries by default", "Defaults: retries=3, workers=5.", False),
    ("5 workers by default", "Defaults: retries=3, workers=5.", True),
    # comparatives say "more than" / "fewer than" in many words
    ("messages over 256 KB are rejected", "messages larger than 256 KB are rejected", True),
    ("messages of at least 256 KB are rejected", "messages larger than 256 KB are rejected", False),
    ("jobs shorter than 5 seconds", "jobs under 5 seconds", True),
    ("more than 5 retries", "it never makes more than 5 retries", False),
    ("at most 5 retries", "it never makes more than 5 retries", True),
    ("messages over 256 KB are rejected", "a message may not be above 256 KB", False),
    ("messages of at most 256 KB", "a message may not be above 256 KB", True),
    ("fewer than 3 replicas", "never below 3 replicas", False),
    ("at least 3 replicas", "never below 3 replicas", True),
    ("more than 5 workers", "it doesn't go above 5 workers", False),
    ("more than 5 workers is not recommended", "not recommended for more than 5 workers", True),
    ("jobs longer than 5 seconds", "jobs under 5 seconds", False),
    # a negated comparative is the opposite bound, never the comparative it negates
    ("messages over 256 KB are rejected", "messages no larger than 256 KB are kept", False),
    ("messages over 256 KB are kept", "messages not bigger than 256 KB are kept", False),
    ("at most 256 KB", "messages no larger than 256 KB are kept", True),
    ("latency above 5 ms", "latency no higher than 5 ms", False),
    ("jobs under 5 seconds", "jobs no shorter than 5 seconds", False),
    ("jobs of at least 5 seconds", "jobs no shorter than 5 seconds", True),
    ("more than 5 MB", "no greater than 5 MB", False),
    ("more than 5 MB", "files are kept without exceeding 5 MB", False),
    ("more than 5 MB", "a file never exceeding 5 MB", False),
    ("more than 5 MB", "a file not in excess of 5 MB", False),
    ("at most 5 MB", "a file never exceeding 5 MB", True),
    # a version is supported by a bare number as written, not by a count of something
    ("Version 3 removed the retry limit", "it starts 3 workers and removed the limit", False),
    ("Python 3 removed the limit", "the pool holds 3 connections", False),
    ("version 5 removed it", "a limit of 5 was removed", False),  # a bare whole number is a count
    ("Python 3.12 removed it", "3.12 was released that day", True),
    # "not a single" is none, not one
    ("1 request failed", "not a single request failed", False),
]


@pytest.mark.parametrize(("claim", "evidence", "expected"), SUPPORT)
def test_a_stated_figure_matches_its_evidence_in_value_unit_and_qualifier(
    claim: str, evidence: str, expected: bool
) -> None:
    assert supported(claim, evidence) is expected


def test_a_mismatch_says_what_the_evidence_states_in_plain_words() -> None:
    stated = one("Harbor Queue makes 30 delivery attempts.")
    why = mismatch(stated, read("the message stays hidden for 30 seconds"))
    assert why == (
        'but the evidence says "the message stays hidden for 30 seconds", a duration: not the '
        "same unit or thing"
    )
    era = mismatch(one("a timeout of 60 seconds"), read("Releases before 2.0 used 60 seconds."))
    assert era == (
        'as current, but the evidence says "Releases before 2.0 used 60 seconds", tied to '
        "before 2.0: say so"
    )
    ranged = mismatch(one("up to 1000 attempts"), read("Default: 5; range 1 to 1000."))
    assert ranged == (
        'but the evidence says "range 1 to 1000", a range: state it with the quote\'s qualifier'
    )
    bare = mismatch(one("at least 5 attempts"), read("By default, this option is set to 5."))
    assert bare == (
        'but the evidence says "this option is set to 5", with no qualifier: state it with '
        "the quote's qualifier"
    )
    counted = mismatch(one("5 seconds"), read("It starts 5 processes."))
    assert counted == (
        'but the evidence says "It starts 5 processes", counting processes: not the same unit or '
        "thing"
    )


# ---------------------------------------------------------------- canonical text


def test_canonical_text_is_nfkc_without_invisible_characters() -> None:
    assert canonical("３０ seconds") == "30 seconds"
    assert canonical("30\u200b0 seconds") == "300 seconds"
    assert canonical("dead\u00adletter") == "deadletter"
    assert canonical("10²") == "10^2" and canonical("1½") == "1 1\u20442"


def test_direction_controls_are_found_anywhere_in_arguments() -> None:
    assert direction_controls({"findings": [{"text": "\u202e05\u202c"}]}) == ["U+202C", "U+202E"]
    assert direction_controls({"answer": "plain"}) == []
    assert strip_invisible("\u202e05\u202c") == "05"


def test_mixed_script_tokens_are_found_but_units_are_not_a_script() -> None:
    assert mixed_script("makes 5\u041e attempts, 30\u041e seconds") == ["5\u041e", "30\u041e"]
    assert mixed_script("H\u0430rbor Queue") == ["H\u0430rbor"]  # a Cyrillic а inside
    assert mixed_script(canonical("waits 5\u00b5s or 10\u2126")) == []
    assert mixed_script("Привет and hello") == []


# ---------------------------------------------------------------- no two figures become one

# "one" alone is a pronoun ("one of them"); before a noun it is a figure (tested above).
_WORDS = {0: "zero", 2: "two", 3: "three", 5: "five", 12: "twelve", 20: "twenty",
          25: "twenty-five", 40: "forty", 100: "one hundred", 1000: "one thousand"}  # fmt: skip
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _shown(value: int, style: int) -> str:
    """`value` displayed one way: digits, separators, full-width, words, a power of ten."""
    if style == 1 and value >= 1000:
        return f"{value:,}"
    if style == 2:
        return str(value).translate(_FULL_WIDTH)
    if style == 3 and value in _WORDS:
        return _WORDS[value]
    if style == 4 and value in (100, 1000):
        return "10" + str(len(str(value)) - 1).translate(_SUPERSCRIPT)
    if style == 5:
        return f"\u200b{value}\u00ad"
    return str(value)


@given(
    st.integers(min_value=0, max_value=100_000),
    st.integers(min_value=0, max_value=100_000),
    st.integers(0, 5),
    st.integers(0, 5),
    st.sampled_from(["seconds", "attempts", "MiB", ""]),
)
def test_no_normalisation_maps_two_different_figures_to_one(
    left: int, right: int, left_style: int, right_style: int, unit: str
) -> None:
    first = read(f"it takes {_shown(left, left_style)} {unit}".strip())
    second = read(f"it takes {_shown(right, right_style)} {unit}".strip())
    assert len(first) == len(second) == 1, (first, second)
    assert matches(first[0], second[0]) == (left == right)
    assert (first[0].value == second[0].value) == (left == right)


@given(st.integers(min_value=1, max_value=999), st.integers(min_value=0, max_value=9))
def test_superscripts_and_fractions_never_read_as_plain_digits(base: int, power: int) -> None:
    written = read(f"{base}{str(power).translate(_SUPERSCRIPT)} items")
    assert written[0].value == Decimal(base) ** power
    assert read(f"{base}½ hours")[0].value == (Decimal(base) + Decimal("0.5")) * 3600


# ---------------------------------------------------------------- at the tool boundary


def test_a_call_with_a_direction_control_is_refused_with_one_sentence() -> None:
    from workflows.models import ToolCall
    from workflows.tools import InvalidCall, parse_call

    arguments = '{"answer": "\\u202e05\\u202c attempts", "findings": []}'
    with pytest.raises(InvalidCall) as refused:
        parse_call(ToolCall(name="finish_research", arguments=arguments))
    assert str(refused.value) == (
        "arguments of finish_research hold the direction control U+202C, U+202E, which shows "
        "text in another order than it is stored: send plain text"
    )


def test_model_text_is_stored_canonical_and_quotes_verbatim() -> None:
    from workflows.models import ToolCall
    from workflows.tools import RecordEvidenceArgs, parse_call

    arguments = (
        '{"question_id": "Q1", "source_id": "S1", "stance": "supports", '
        '"claim": "\\uff15 deliveries\\u200b", "quote": "5 deliveries \\u2026 \\ufb01ne"}'
    )
    args = parse_call(ToolCall(name="record_evidence", arguments=arguments))
    assert isinstance(args, RecordEvidenceArgs)
    assert args.claim == "5 deliveries"
    assert args.quote == "5 deliveries \u2026 \ufb01ne", "a quote is matched as the page has it"


def test_nothing_printed_carries_a_control_a_terminal_would_obey() -> None:
    from workflows.cleaning import as_text, for_terminal

    assert for_terminal("5\u202e0\u202c\n\x1b[31mred\ttab") == "50\n\ufffd[31mred\ttab"
    assert "\u202e" not in as_text("\u202e05\u202c")


def test_json_printed_keeps_its_data_but_no_direction_control() -> None:
    import json

    from workflows.cleaning import json_for_terminal

    printed = json_for_terminal(json.dumps({"quote": "5\u202e0\u202c \u0085"}, ensure_ascii=False))
    assert "\u202e" not in printed and "\u0085" not in printed
    assert json.loads(printed) == {"quote": "5\u202e0\u202c \u0085"}


def test_a_text_read_again_reads_the_same_and_a_caller_cannot_change_it() -> None:
    text = "Messages move after 5 delivery attempts; the timeout is 30 seconds (since 2.1)."
    first = read(text)
    first.clear()  # a caller's list is its own: the next read is whole

    again = read(text)

    assert [item.text for item in again] == ["5 delivery attempts", "30 seconds", "2.1"]
    assert again == read(text) and again is not read(text)
