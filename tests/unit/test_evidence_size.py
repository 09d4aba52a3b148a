"""Evidence at the size of a claim: recording by passage_id quotes the sentences that hold the
claim, and every evidence ID a report names is shown in its Evidence section."""

from __future__ import annotations

from activities.evidence import MAX_QUOTE_SENTENCES, QUOTE_WHOLE_CHARS, claim_sentences
from activities.markdown import render_markdown
from workflows.models import Evidence, Finding, Report, RunStatus, SourceRef, StopReason

# The demo corpus's visibility-timeout passage as a real model recorded it by passage_id (the
# run in ../shared/real-model/run8-harborq-conflict): a heading, the current default, the older.
PASSAGE = (
    "The default visibility timeout\n\n"
    "Unless you change it, a received Harbor Queue message stays hidden for 30 seconds: the "
    "default visibility timeout is 30 seconds, both for queues that do not set\n"
    "visibility_timeout and for receive calls that do not pass a value of their own.\n\n"
    "Releases before 2.0 used 60 seconds. The shorter default means that work held by a crashed "
    "consumer is retried sooner; queues created under 1.x keep the value stored with them when "
    "the server is upgraded."
)

# The same passage as one of a longer page section: past QUOTE_WHOLE_CHARS it is cut to its claim.
LONG = (
    f"{PASSAGE}\n\n"
    "Extending the timeout of a message you are still working on is done with harborq extend, "
    "which sets a new deadline counted from the moment of the call. Consumers that process "
    "large batches should extend early rather than late, since an expired timeout makes the "
    "message visible to every other consumer of the queue at once.\n\n"
    "A consumer that crashes while it holds a message never acknowledges it: the message "
    "becomes visible again when its timeout expires, and the next receive counts as a new "
    "delivery attempt. Set the timeout a little longer than the slowest message you expect to "
    "handle, and watch the queue's redelivery rate after each change of it."
)


def quoted(claim: str, text: str = LONG) -> str:
    start, end = claim_sentences(text, claim)
    return text[start:end]


def test_a_passage_recording_quotes_only_the_sentence_of_its_claim() -> None:
    quote = quoted("The default visibility timeout is 30 seconds.")
    assert quote.startswith("Unless you change it") and quote.endswith("a value of their own.")
    assert "60 seconds" not in quote and "The default visibility timeout\n" not in quote
    assert quoted("Releases before 2.0 used 60 seconds.") == "Releases before 2.0 used 60 seconds."


def test_a_claim_of_several_sentences_gets_them_all_and_no_more() -> None:
    quote = quoted("The default is 30 seconds; releases before 2.0 used 60 seconds.")
    assert "30 seconds" in quote and "Releases before 2.0 used 60 seconds." in quote
    assert len(quote) < len(PASSAGE)


def test_a_passage_of_a_few_sentences_is_quoted_whole() -> None:
    """A careful model cites the facts around its claim's sentence (the older release's value,
    the version in the next sentence): a short passage stays whole, and the gate reads the older
    figure as that release's, so no conflict hides in it."""
    assert len(PASSAGE) <= QUOTE_WHOLE_CHARS < len(LONG)
    assert quoted("The default visibility timeout is 30 seconds.", PASSAGE) == PASSAGE


def test_a_long_passage_is_cut_to_a_few_sentences() -> None:
    filler = " ".join(f"Sentence {n} is about routing rule {n}." for n in range(1, 40))
    text = f"{filler} Messages are dead-lettered after 5 delivery attempts. {filler}"
    quote = quoted("A message is dead-lettered after 5 delivery attempts.", text)
    assert quote == "Messages are dead-lettered after 5 delivery attempts."
    assert quote.count(".") <= MAX_QUOTE_SENTENCES


def test_a_wrapped_line_is_not_a_sentence_end_and_one_sentence_stays_whole() -> None:
    text = "Invalidation messages travel over a pub/sub channel\nto every node within milliseconds."
    assert quoted("Invalidation reaches every node.", text) == text


def test_evidence_named_only_in_the_limitations_or_answer_is_shown_with_quote_and_url() -> None:
    evidence = [
        Evidence(id=f"E00{n}", question_id="Q1", source_id=f"S{n}", claim="c", stance="supports",
                 quote=f"quote number {n}")
        for n in (1, 2, 3)
    ]  # fmt: skip
    sources = [SourceRef(id=f"S{n}", url=f"https://docs.example/{n}") for n in (1, 2, 3)]
    report = Report(
        answer="Five attempts (see E003).",
        findings=[Finding(text="Five attempts.", evidence_ids=["E001"])],
        limitations="E002 (a blog) gives another figure; E999 was never recorded.",
    )
    markdown = render_markdown(report, evidence, sources, RunStatus.COMPLETED,
                               StopReason.COVERAGE_GATE_PASSED)  # fmt: skip
    section = markdown.split("## Evidence", 1)[1].split("## Limitations", 1)[0]
    for n in (1, 2, 3):
        assert f"### E00{n}" in section and f"quote number {n}" in section
        assert f"https://docs.example/{n}" in section
    assert section.index("### E001") < section.index("### E003") < section.index("### E002")
    assert "E999" not in section, "only recorded evidence is listed"
