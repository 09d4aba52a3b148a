"""What a question names as code (`baselines.excerpts.names`), read the same on any site: code
characters and lower camel case make a name; possessives, acronyms and product names do not."""

from __future__ import annotations

import pytest

from baselines.excerpts import _code_tokens, keeps_reversal, names, wanted_words
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget, ToolCall
from workflows.scope import RunScope
from workflows.substance import keywords
from workflows.tools import SearchArgs, SearchData, SearchResultItem
from workflows.transcript import ToolResult, TranscriptEntry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What does gc.disable() do?", ["gc", "disable"]),
        ("What does the typed argument of lru_cache do?", ["lru_cache"]),
        ("What does action='store_true' store?", ["action", "store_true"]),
        ("What does logging.basicConfig do?", ["logging", "basicConfig"]),
        ("When is basicConfig a no-op?", ["basicConfig"]),
        ("What does the generator's send() return?", ["send"]),
    ],
)
def test_code_characters_and_lower_camel_case_make_a_name(text: str, expected: list[str]) -> None:
    assert names(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "What is the table's primary key?",  # a possessive is not `table` and `s`
        "What is the table\u2019s primary key?",
        "What happens to the LRU feature?",  # an acronym
        "How does PostgreSQL lock a row?",  # a product name
        "Does JavaScript run in the worker?",
        "How do I open a ZIP archive?",
    ],
)
def test_possessives_acronyms_and_product_names_are_no_names(text: str) -> None:
    assert names(text) == []


def _request(main: str, *questions: str) -> tuple[DecideInput, Brief]:
    brief = Brief.model_validate(
        {
            "question": main,
            "questions": [{"id": f"Q{n}", "text": t} for n, t in enumerate(questions, 1)],
            "allowed_hosts": ["docs.example"],
        }
    )
    budget = Budget(steps_left=9, searches_left=1, pages_left=1, tokens_left=9)
    scope = RunScope.turn_of("r", "", 1, 0, "")
    return DecideInput(scope=scope, brief=brief, transcript=[], budget=budget), brief


def test_a_name_the_brief_also_uses_stays_a_lead_word_of_its_question() -> None:
    request, brief = _request(
        "How does the queue use max_deliveries?",
        "What is the default of max_deliveries?",
        "What does the visibility timeout control?",
    )
    lead = wanted_words(brief.questions[0], request).lead
    assert keywords("max_deliveries") & set(lead), lead


def test_a_plain_word_of_the_brief_still_steers_no_search() -> None:
    request, brief = _request(
        "How does the queue retry deliveries?",
        "What is the default of the retry limit?",
        "What does the visibility timeout control?",
    )
    assert "retry" not in wanted_words(brief.questions[0], request).lead
    qualified, brief = _request(
        "How does functools cache results?", "What does functools.lru_cache keep?", "Why?"
    )
    assert "functool" not in wanted_words(brief.questions[0], qualified).lead, "a qualifier"


@pytest.mark.parametrize(
    ("question", "quote", "kept"),
    [
        ("How do I refer to an object without keeping it alive?",
         "A weak reference does not keep the object alive.", True),
        ("How do I refer to an object without keeping it alive?",
         "A reference keeps the object alive as long as it exists.", False),
        ("What happens when the file is not a ZIP archive?",
         "If the file isn't an archive, a new archive is appended.", True),
        ("How do I keep an object alive?", "A reference keeps the object alive.", True),
        # "when no mode is given" asks for the default: a sentence saying it answers
        ("Which mode does reset use when no mode option is given?",
         "If <mode> is omitted, defaults to --mixed.", True),
        ("What does rebase do with merges when --rebase-merges is not given?",
         "By default, a rebase will simply drop merge commits.", True),
        ("What does rebase do with merges when --rebase-merges is not given?",
         "A rebase drops merge commits when asked to.", False),
        # another reversal beside it still needs its own
        ("What does reset keep, when no mode is given, that is not in the index?",
         "By default it keeps the working tree.", False),
    ],
)  # fmt: skip
def test_a_question_that_reverses_is_answered_by_a_sentence_that_reverses(
    question: str, quote: str, kept: bool
) -> None:
    request, brief = _request("How do references work?", question, "What is a proxy?")
    wanted = wanted_words(brief.questions[0], request)
    assert keeps_reversal(wanted, quote) is kept


def test_a_word_with_inner_capitals_is_a_name_where_the_corpus_writes_it_as_code() -> None:
    request, brief = _request(
        "How do threads synchronise?", "What is the difference between Lock and RLock?", "Why?"
    )
    assert wanted_words(brief.questions[0], request).codes == [], "casing alone says nothing"

    def searched(snippet: str) -> DecideInput:
        found = SearchData(
            results=[SearchResultItem(url="https://docs.example/t", snippet=snippet)]
        )
        call = ToolCall(name="search_web", arguments='{"query": "q"}')
        done = TranscriptEntry(
            step=1, call=call, result=ToolResult(ok=True, data=found), args=SearchArgs(query="q")
        )
        return request.model_copy(update={"transcript": [done]})

    as_code = searched("class threading.RLock: a reentrant lock")
    assert wanted_words(brief.questions[0], as_code).codes == ["RLock"]
    as_prose = searched("An RLock is a lock that one thread may take twice.")
    assert wanted_words(brief.questions[0], as_prose).codes == []


def test_a_name_is_written_without_the_prose_s_parentheses() -> None:
    """ "(the main message_size_limit)" writes `message_size_limit` (searched and looked for as
    written), "(-v, --verbose)" two options; a call keeps its own parentheses."""
    text = (
        "What is the default size (the main message_size_limit)? See lru_cache() (-v, --verbose)."
    )
    assert _code_tokens(text) == ["message_size_limit", "lru_cache()", "-v", "--verbose"]


def test_pronouns_and_auxiliaries_are_no_words_a_question_asks() -> None:
    """'my', 'whose' and 'being' are as closed-class as 'your', 'whom' and 'been', which were
    already stop words: a question is not asking about them, and no answer need say them. Not
    'us', 'ours', 'am' or 'mine': the US locale, git's ours strategy, `git am`."""
    assert keywords("my me myself his him her hers whose being shall") == set()
    assert keywords("us ours am mine") == {"us", "our", "am", "mine"}
    request, brief = _request(
        "How do I handle warnings in my tests?",
        "How can I make my warnings raise exceptions instead of just being printed?",
        "Whose filter does catch_warnings restore?",
    )
    for question in brief.questions:
        wanted = wanted_words(question, request)
        assert not {"my", "being", "whos"} & {*wanted.lead, *wanted.content}, wanted
