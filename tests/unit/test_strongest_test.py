"""The offline policy's strongest test (`baselines.excerpts.says_answer`, through `quote_settles`):
a required question is settled only by a sentence that, on its own, answers it. Each case is a
way a completed run cited a sentence that does not say the answer (issue 24)."""

from __future__ import annotations

from baselines.excerpts import Passage, Wanted, quote_settles, wanted_words
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget
from workflows.scope import RunScope

SIGNATURE = "queue.purge(name, force=False)"
TITLE = "queue — Harbor Queue client"


def _wanted(question: str, main: str = "How does the queue client manage queues?") -> Wanted:
    brief = Brief.model_validate(
        {
            "question": main,
            "questions": [{"id": "Q1", "text": question}, {"id": "Q2", "text": "Why?"}],
            "allowed_hosts": ["docs.example"],
        }
    )
    budget = Budget(steps_left=9, searches_left=1, pages_left=1, tokens_left=9)
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""), brief=brief, transcript=[], budget=budget
    )
    return wanted_words(brief.questions[0], request)


def _settles(
    question: str, quote: str, *texts: str, section: str = "Client functions", title: str = TITLE
) -> bool:
    passages = {
        f"S1.P{n}": Passage("S1", text, section, title) for n, text in enumerate(texts, start=1)
    }
    return quote_settles(_wanted(question), passages, "S1", quote)


OPENING = "Delete every message of the named queue and return how many were deleted."
REMARK = "A purge cannot be undone, so queue.purge() is best kept out of scripts run by hand."


def test_a_question_on_a_name_alone_is_settled_by_its_definitions_opening_only() -> None:
    page = f"{SIGNATURE}\n\n{OPENING} {REMARK}"
    assert _settles("What does queue.purge do?", OPENING + " " + REMARK, page)
    assert not _settles("What does queue.purge do?", REMARK, page), "a remark further on"


def test_every_word_asked_is_in_the_sentence_or_the_definition_it_sits_under() -> None:
    says = "If force is true, messages still being processed are deleted too."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{says}"
    assert _settles("What does the force argument of queue.purge do?", says, page)
    vague = "The queue.purge function deletes messages in batches."
    assert not _settles("What does the force argument of queue.purge do?", vague, f"x\n\n{vague}")


def test_a_long_definition_keeps_its_name_across_passages_and_examples() -> None:
    says = "If force is true, messages still being processed are deleted too."
    example = "    purge('billing')\n    purge('billing', force=True)"
    texts = (f"{SIGNATURE}\n\n{OPENING}", f"Example:\n\n{example}", says)
    assert _settles("What does the force argument of queue.purge do?", says, *texts)


def test_a_leading_label_and_an_aside_say_nothing() -> None:
    changed = "Changed in version 2.1: A warning is now logged for a large purge."
    page = f"{SIGNATURE}\n\n{OPENING}\n\n{changed}"
    assert not _settles("What does queue.purge change?", changed, page)
    aside = "Counts are approximate (as reported by queue.stats(), which returns estimates)."
    assert not _settles("What does queue.stats return?", aside, f"Notes\n\n{aside}")


def test_a_table_row_answers_nothing() -> None:
    row = "force | Whether to delete messages being processed | bool, False by default."
    assert not _settles("What does force mean for queue.purge?", row, f"{SIGNATURE}\n\n{row}")


def test_a_comparison_is_answered_by_a_sentence_that_contrasts() -> None:
    question = "What is the difference between queue.purge and queue.drain?"
    both = "The queue.purge and queue.drain functions both act on messages in a queue."
    contrast = "The queue.purge function deletes messages, while queue.drain delivers them first."
    assert not _settles(question, both, f"Notes\n\n{both}")
    assert _settles(question, contrast, f"Notes\n\n{contrast}")


def test_a_name_after_a_leading_clause_or_under_another_definition_is_not_its_subject() -> None:
    later = "If you want to empty a queue safely, it is best to call queue.purge() with force off."
    assert not _settles("What does queue.purge do with force?", later, f"Recipes\n\n{later}")
    other = "Purge removes the messages that match a pattern from the queue."
    # the heading defines the `purge` command, not the `queue.purge` function
    assert not _settles(
        "What does queue.purge remove?",
        other,
        f"purge PATTERN\n\n{other}",
        section="purge",
        title="hq — the command line",
    )
