"""The offline policy's choices, from transcripts it could be shown: open a result at the name the
question writes as code, follow a `find`, quote the best prose excerpt (a signature above it
counts; code never), read the next result that shows the question's names before settling for a
page that only mentions them, look for a second source among results that show the question (one
that says what is asked, never a passing mention, also after a search for its name, then further
into those pages); and the fixed pipeline's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from baselines.excerpts import wanted_words, written_values
from baselines.fixed import decide_fixed
from baselines.offline import _pinned, decide_offline
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget, Decision, RefusedSeed, ToolCall
from workflows.scope import RunScope
from workflows.tools import (
    EvidenceData,
    FinishArgs,
    GateFailed,
    PageWindow,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    SearchData,
    SearchResultItem,
    ToolArgs,
    ToolData,
    WindowPassage,
)
from workflows.transcript import ToolResult, TranscriptEntry

BRIEF = Brief.model_validate(
    {
        "question": "How does functools cache function results?",
        "questions": [{"id": "Q1", "text": "What does the typed argument of lru_cache do?"}],
        "allowed_hosts": ["docs.example"],
        "limits": {"min_sources": 2},
    }
)
PAGE = "https://docs.example/functools.html"
OTHER = "https://docs.example/whatsnew.html"
UNRELATED = "https://docs.example/sorting.html"
ANSWER = (
    "If typed is set to true, function arguments of different types will be cached separately. "
    "For example, f(3) and f(3.0) will be treated as distinct calls with distinct results."
)


def entry(step: int, args: ToolArgs, data: ToolData | None, ok: bool = True) -> TranscriptEntry:
    name = {
        SearchArgs: "search_web",
        ReadPageArgs: "read_page",
        RecordEvidenceArgs: "record_evidence",
        FinishArgs: "finish_research",
    }[type(args)]
    call = ToolCall(name=name, arguments=args.model_dump_json())
    return TranscriptEntry(step=step, call=call, result=ToolResult(ok=ok, data=data), args=args)


def window(
    source_id: str, url: str, *texts: str, next_offset: int | None = None, more: bool = True
) -> PageWindow:
    """A `find` window; a `next_offset` is the term's next match unless `more` is false."""
    passages = [
        WindowPassage(id=f"{source_id}.P{n}", text=text) for n, text in enumerate(texts, start=1)
    ]
    return PageWindow(
        source_id=source_id,
        url=url,
        passages=passages,
        next_offset=next_offset,
        more_matches=more and next_offset is not None,
    )


def next_call(
    *transcript: TranscriptEntry,
    policy: Callable[[DecideInput], Decision] = decide_offline,
    brief: Brief = BRIEF,
    seeds: tuple[str, ...] = (),
    steps_left: int = 10,
    unreadable: tuple[str, ...] = (),
) -> tuple[str, dict[str, Any]]:
    budget = Budget(steps_left=steps_left, searches_left=3, pages_left=5, tokens_left=10_000)
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""),
        brief=brief,
        transcript=list(transcript),
        budget=budget,
        seeds=list(seeds),
        unreadable_seeds=[
            RefusedSeed(url=url, reason="could not be read: 404") for url in unreadable
        ],
    )
    call = policy(request).tool_calls[0]
    return call.name, json.loads(call.arguments)


SEARCHED = entry(
    1,
    SearchArgs(query=BRIEF.questions[0].text),
    SearchData(
        results=[
            SearchResultItem(url=PAGE, title="functools", snippet="@functools.lru_cache(...)"),
            SearchResultItem(url=OTHER, title="What's new", snippet="lru_cache now takes typed"),
            SearchResultItem(url=UNRELATED, title="Sorting", snippet="key functions"),
        ]
    ),
)
SIGNATURE = "@functools.lru_cache(user_function, typed=False)"
INTRO = "functools — Higher-order functions and operations on callable objects"


def opened(*texts: str, next_offset: int | None = None) -> TranscriptEntry:
    return entry(
        2,
        ReadPageArgs(url=PAGE, find="lru_cach"),
        window("S1", PAGE, *texts, next_offset=next_offset),
    )


def test_a_result_is_opened_at_the_first_question_word_its_snippet_shows() -> None:
    assert next_call(SEARCHED) == ("read_page", {"url": PAGE, "find": "lru_cach"})


def test_seed_urls_are_read_before_searching_the_brief_s_then_the_operator_s() -> None:
    """Each seed is opened and looked in with `find` for the question's words; only when no seed
    holds an answer does the policy search."""
    seeded = BRIEF.model_copy(update={"seed_urls": [OTHER]})
    transcript: list[TranscriptEntry] = []
    opened_urls: list[str] = []
    while True:
        name, arguments = next_call(*transcript, brief=seeded, seeds=(PAGE,))
        if name != "read_page":
            break
        url = arguments.get("url") or {"S1": OTHER, "S2": PAGE}[arguments["source_id"]]
        if "url" in arguments:
            opened_urls.append(url)
        source_id = {OTHER: "S1", PAGE: "S2"}[url]
        args = ReadPageArgs.model_validate(arguments)
        transcript.append(entry(len(transcript) + 1, args, window(source_id, url, INTRO)))

    assert opened_urls == [OTHER, PAGE]
    assert name == "search_web", "neither seed holds an answer: now it searches"


def test_a_seed_the_start_could_not_read_is_not_opened() -> None:
    seeded = BRIEF.model_copy(update={"seed_urls": [OTHER, PAGE]})

    assert next_call(brief=seeded, unreadable=(OTHER,)) == (
        "read_page",
        {"url": PAGE, "find": "lru_cach"},
    )


def test_an_answer_on_a_seed_is_recorded_without_a_search() -> None:
    read = entry(1, ReadPageArgs(url=PAGE, find="lru_cach"), window("S1", PAGE, SIGNATURE, ANSWER))

    name, arguments = next_call(read, seeds=(PAGE,))

    assert (name, arguments["source_id"]) == ("record_evidence", "S1")


def test_a_find_with_more_matches_is_followed_before_the_next_word() -> None:
    alone = entry(1, SearchArgs(query=BRIEF.questions[0].text), SearchData(results=[
        SearchResultItem(url=PAGE, title="functools", snippet="@functools.lru_cache(...)"),
        SearchResultItem(url=UNRELATED, title="Sorting", snippet="key functions"),
    ]))  # fmt: skip
    first = opened(INTRO, next_offset=5_000)
    assert next_call(alone, first) == (
        "read_page",
        {"source_id": "S1", "find": "lru_cach", "offset": 5_000},
    )
    rest = entry(
        3, ReadPageArgs(source_id="S1", find="lru_cach", offset=5_000), window("S1", PAGE, INTRO)
    )
    assert next_call(alone, first, rest) == ("read_page", {"source_id": "S1", "find": "type"})


def test_a_find_whose_window_holds_every_match_goes_on_to_the_next_word() -> None:
    """A window with no more matches past it still says where reading goes on (`next_offset`):
    `find` there shows nothing, so the policy looks for the next word instead of spending a
    step on it."""
    alone = entry(1, SearchArgs(query=BRIEF.questions[0].text), SearchData(results=[
        SearchResultItem(url=PAGE, title="functools", snippet="@functools.lru_cache(...)"),
    ]))  # fmt: skip
    read = entry(
        2,
        ReadPageArgs(url=PAGE, find="lru_cach"),
        window("S1", PAGE, INTRO, next_offset=5_000, more=False),
    )
    assert next_call(alone, read) == ("read_page", {"source_id": "S1", "find": "type"})


def test_the_next_result_showing_the_names_is_read_before_settling_for_a_mention() -> None:
    """The first page only mentions what is asked; the second result shows the question's names:
    it is read before the mention is taken, and what says what is asked wins."""
    mention = "Many decorators keep a typed flag as it was given to them (lru_cache among them)."
    first = opened(mention)
    assert next_call(SEARCHED, first) == ("read_page", {"url": OTHER, "find": "lru_cach"})
    says = (
        "The lru_cache decorator now accepts a typed argument: arguments of different types "
        "are cached separately."
    )
    second = entry(3, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, says))
    name, arguments = next_call(SEARCHED, first, second)
    assert (name, arguments["source_id"], arguments["quote"]) == ("record_evidence", "S2", says)
    nothing = entry(3, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, INTRO))
    name, arguments = next_call(SEARCHED, first, nothing)
    assert (name, arguments["source_id"]) == ("record_evidence", "S1"), "else the mention"


def test_the_best_excerpt_is_quoted_with_its_signature_as_context() -> None:
    name, arguments = next_call(SEARCHED, opened(SIGNATURE + "\n\n" + ANSWER))

    assert name == "record_evidence"
    assert arguments["quote"] == ANSWER, "no signature; whole sentences"
    assert arguments["claim"] == ANSWER.split(". ")[0] + "."


def _recorded_then_short_of_sources() -> list[TranscriptEntry]:
    recorded = entry(
        3,
        RecordEvidenceArgs(
            question_id="Q1", source_id="S1", claim="c", stance="supports", quote=ANSWER
        ),
        EvidenceData(evidence_id="E001", quote=ANSWER),
    )
    gap = "the cited evidence comes from 1 independent source(s); at least 2 are required"
    failed = entry(
        4, FinishArgs(answer="a"), GateFailed(gaps=[gap], finish_attempts_left=2), ok=False
    )
    return [opened(SIGNATURE + "\n\n" + ANSWER), recorded, failed]


def test_a_second_source_is_sought_only_among_results_that_show_the_question() -> None:
    before = _recorded_then_short_of_sources()

    assert next_call(SEARCHED, *before) == ("read_page", {"url": OTHER, "find": "lru_cach"})
    weak = "The typed flag is new."
    looked = entry(5, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, weak))
    name, arguments = next_call(SEARCHED, *before, looked)
    assert (name, arguments) == ("search_web", {"query": "lru_cache"}), "then what it names"
    again = entry(6, SearchArgs(query="lru_cache"), SEARCHED.result.data)
    name, _ = next_call(SEARCHED, *before, looked, again)
    assert name == "finish_research", "no weak match, never the unrelated page"
    more = window("S2", OTHER, weak, next_offset=900)
    looked = entry(5, ReadPageArgs(url=OTHER, find="lru_cach"), more)
    assert next_call(SEARCHED, *before, looked, again) == (
        "read_page",
        {"source_id": "S2", "find": "lru_cach", "offset": 900},
    ), "then the name's next matches in each page that showed the question"
    deeper = entry(7, ReadPageArgs(source_id="S2", find="lru_cach", offset=900), more)
    name, _ = next_call(SEARCHED, *before, looked, again, deeper)
    assert name == "finish_research", "two finds a page"

    strong = "With lru_cache, if typed is true, the arguments of different types are cached apart."
    found = entry(5, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, strong))
    name, arguments = next_call(SEARCHED, *before, found)
    assert (name, arguments["source_id"], arguments["quote"]) == ("record_evidence", "S2", strong)


def test_two_names_compared_are_looked_for_together_in_a_further_source() -> None:
    brief = Brief.model_validate(
        {
            "question": "How does the re module match patterns?",
            "questions": [
                {"id": "Q1", "text": "What is the difference between re.match and re.search?"}
            ],
            "allowed_hosts": ["docs.example"],
            "limits": {"min_sources": 2},
        }
    )
    library, howto = "https://docs.example/re.html", "https://docs.example/regex.html"
    says = (
        "re.match() checks for a match only at the beginning of the string, re.search() anywhere."
    )
    searched = entry(1, SearchArgs(query=brief.questions[0].text), SearchData(results=[
        SearchResultItem(url=library, title="re", snippet="re.match() and re.search()"),
        SearchResultItem(url=howto, title="Regular Expression HOWTO", snippet="match() search()"),
    ]))  # fmt: skip
    read = entry(2, ReadPageArgs(url=library, find="search"), window("S1", library, says))
    recorded = entry(
        3,
        RecordEvidenceArgs(
            question_id="Q1", source_id="S1", claim="c", stance="supports", quote=says
        ),
        EvidenceData(evidence_id="E001", quote=says),
    )
    assert next_call(searched, read, recorded, brief=brief) == (
        "read_page",
        {"url": howto, "find": "match search"},
    )


def test_the_last_step_submits_what_there_is() -> None:
    before = _recorded_then_short_of_sources()
    assert next_call(SEARCHED, *before)[0] == "read_page", "a further source is sought"
    assert next_call(SEARCHED, *before, steps_left=1)[0] == "finish_research"
    assert next_call(SEARCHED, steps_left=1)[0] == "read_page", "nothing to submit yet"


def test_a_passing_mention_is_never_a_further_source() -> None:
    """A sentence that names what is asked among other things does not say it: with nothing
    better, the policy submits one source short and the gate says so (an honest partial run)."""
    before = _recorded_then_short_of_sources()
    passing = (
        "Many tools that take key functions, such as sorted() and lru_cache, have typed flags."
    )
    looked = entry(5, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, passing))
    assert next_call(SEARCHED, *before, looked)[0] == "search_web", "search its name"
    again = entry(6, SearchArgs(query="lru_cache"), SEARCHED.result.data)
    assert next_call(SEARCHED, *before, looked, again)[0] == "finish_research"


def test_code_is_never_quoted_and_a_definition_beats_a_passing_mention() -> None:
    session = ">>> @lru_cache(typed=True)\n... def f(x): return x\n>>> f(3), f(3.0)"
    mention = "The typed wrapper that lru_cache builds is thin and it is fast."
    name, arguments = next_call(
        SEARCHED, opened(session, mention + "\n\n" + SIGNATURE + "\n\n" + ANSWER)
    )
    assert (name, arguments["quote"]) == ("record_evidence", ANSWER)
    name, _ = next_call(SEARCHED, opened(session))
    assert name == "read_page", "a session is no quote: look further instead"


def test_the_fixed_pipeline_reads_the_first_result_and_records_without_finding() -> None:
    first = entry(2, ReadPageArgs(url=PAGE), window("S1", PAGE, INTRO, SIGNATURE + "\n\n" + ANSWER))
    assert next_call(policy=decide_fixed) == ("search_web", {"query": BRIEF.questions[0].text})
    assert next_call(SEARCHED, policy=decide_fixed) == ("read_page", {"url": PAGE})
    name, arguments = next_call(SEARCHED, first, policy=decide_fixed)
    assert (name, arguments["quote"]) == ("record_evidence", ANSWER)
    nothing = entry(2, ReadPageArgs(url=PAGE), window("S1", PAGE, INTRO))
    assert next_call(SEARCHED, nothing, policy=decide_fixed)[0] == "finish_research"


def test_names_looked_for_together_are_still_looked_for_one_by_one() -> None:
    from baselines.offline import Find, _look_further

    together = [Find("match search", 0, None)]
    assert _look_further(together, ["match search", "match", "search"], 2) == {"find": "match"}
    assert _look_further([Find("lru_cach", 0, None)], ["lru_cach", "lru"], 2) is None


def test_a_page_where_no_find_showed_anything_is_looked_at_for_one_word_more() -> None:
    """A value the question quotes one way (`'store_true'`) and the page the other
    (`"store_true"`): the first find shows nothing, so the other quote is looked for, though the
    page was to be read once (budget 0); one word more, not every word."""
    from baselines.offline import Find, _look_further

    words = ["'store_true'", '"store_true"', "action"]
    missed = Find("'store_true'", 0, None)
    assert _look_further([missed], words, 0) == {"find": '"store_true"'}
    assert _look_further([missed, Find('"store_true"', 0, None)], words, 0) is None
    assert _look_further([Find("'store_true'", 0, None, found=2)], words, 0) is None
    both = [missed, Find('"store_true"', 0, None)]  # a budget of two, both spent on nothing
    assert _look_further(both, words, 2) == {"find": "action"}
    assert _look_further([*both[:1], Find('"store_true"', 0, None, found=1)], words, 2) is None
    # a page another question's find opened: this question's own words, two at most
    opened = Find("zzz", 0, None, found=3)
    assert _look_further([opened], words, 0) == {"find": "'store_true'"}
    assert _look_further([opened, missed, Find('"store_true"', 0, None)], words, 0) is None


# Precision first: a required question is settled by a quote whose own words say it.
WEAK = "Arguments of different kinds are kept apart for every call made to it."


def _weak_recorded() -> list[TranscriptEntry]:
    """A quote about the question only by its heading: relevance from the heading alone."""
    under = WindowPassage(id="S1.P1", section="The typed flag of lru_cache", text=WEAK)
    read = entry(
        2,
        ReadPageArgs(url=PAGE, find="lru_cach"),
        PageWindow(source_id="S1", url=PAGE, passages=[under]),
    )
    recorded = entry(
        3,
        RecordEvidenceArgs(question_id="Q1", source_id="S1", claim=WEAK, stance="supports",
                           quote=WEAK),
        EvidenceData(evidence_id="E001", quote=WEAK),
    )  # fmt: skip
    return [SEARCHED, read, recorded]


def test_weak_evidence_leaves_a_required_question_open_and_is_revisited() -> None:
    """One source would do: a weak quote is still no reason to stop."""
    one = BRIEF.model_copy(update={"limits": BRIEF.limits.model_copy(update={"min_sources": 1})})
    name, arguments = next_call(*_weak_recorded(), brief=one)
    assert (name, arguments.get("url")) == ("read_page", OTHER), "reads on for a better quote"
    says = "The lru_cache decorator now takes typed: arguments of different types are cached apart."
    better = entry(4, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, says))
    name, arguments = next_call(*_weak_recorded(), better, brief=one)
    assert (name, arguments["quote"]) == ("record_evidence", says), "the weak one is replaced"


def test_weak_evidence_is_a_limitation_not_a_finding_so_the_run_ends_incomplete() -> None:
    name, arguments = next_call(*_weak_recorded(), steps_left=1)
    assert name == "finish_research"
    assert arguments["findings"] == [], "no finding rests on a quote that may not answer"
    assert "E001" not in json.dumps(arguments["findings"])
    assert "may not answer" in arguments["limitations"] and WEAK in arguments["limitations"]
    name, arguments = next_call(SEARCHED, *_recorded_then_short_of_sources(), steps_left=1)
    assert [f["evidence_ids"] for f in arguments["findings"]] == [["E001"]], "a strong one is"


def test_an_optional_question_is_settled_by_any_evidence() -> None:
    first = BRIEF.questions[0].model_copy(update={"required": False})
    other = first.model_copy(update={"id": "Q2", "text": "What does maxsize do?", "required": True})
    optional = BRIEF.model_copy(update={"questions": [first, other]})
    _, arguments = next_call(*_weak_recorded(), brief=optional, steps_left=1)
    assert [f["evidence_ids"] for f in arguments["findings"]] == [["E001"]]


def test_a_question_that_reverses_is_not_settled_by_a_sentence_that_does_not() -> None:
    without = BRIEF.model_copy(
        update={"questions": [BRIEF.questions[0].model_copy(
            update={"text": "What does lru_cache do with arguments of different types "
                            "without typed?"})]}
    )  # fmt: skip
    reverses = "Without typed, lru_cache caches arguments of different types as one call."

    def finished_with(quote: str) -> list[Any]:
        read = opened(SIGNATURE + "\n\n" + quote)
        recorded = entry(
            3,
            RecordEvidenceArgs(question_id="Q1", source_id="S1", claim=quote, stance="supports",
                               quote=quote),
            EvidenceData(evidence_id="E001", quote=quote),
        )  # fmt: skip
        _, arguments = next_call(SEARCHED, read, recorded, brief=without, steps_left=1)
        return list(arguments["findings"])

    assert finished_with(ANSWER) == [], "it says what typed does, not what happens without it"
    assert [f["evidence_ids"] for f in finished_with(reverses)] == [["E001"]]


def test_the_fixed_pipeline_submits_whatever_it_recorded() -> None:
    """It has no judgement of its own: the baseline the policy's precision is measured against."""
    weak = _weak_recorded()
    name, arguments = next_call(*weak, policy=decide_fixed)
    assert name == "finish_research"
    assert [f["evidence_ids"] for f in arguments["findings"]] == [["E001"]]


def test_a_question_with_no_evidence_comes_before_one_with_weak_evidence_only() -> None:
    """A question no page answers well does not spend the steps the next one needs."""
    other = BRIEF.questions[0].model_copy(update={"id": "Q2", "text": "What does maxsize do?"})
    two = BRIEF.model_copy(update={"questions": [BRIEF.questions[0], other]})
    assert next_call(*_weak_recorded(), brief=two) == (
        "search_web",
        {"query": "What does maxsize do?"},
    )


STASH = Brief.model_validate(
    {
        "question": "How do I set work aside with tool stash?",
        "questions": [
            {"id": "Q1", "text": "What does the --keep-index option of tool stash push do?"},
            {"id": "Q2", "text": "How does tool stash apply differ from tool stash pop?"},
        ],
        "allowed_hosts": ["tool-scm.example"],
    }
)
GUIDE = "https://tool-scm.example/MyFirstContribution.html"
STASH_PAGE = "https://tool-scm.example/tool-stash.html"
STASH_SEARCH = entry(
    1,
    SearchArgs(query=STASH.questions[0].text),
    SearchData(
        results=[
            SearchResultItem(url=GUIDE, title="My first contribution", snippet="push --keep-index"),
            SearchResultItem(url=STASH_PAGE, title="tool-stash(1)", snippet="stash --keep-index"),
        ]
    ),
)


def test_a_hyphenated_name_in_a_title_shows_its_words() -> None:
    """`tool-stash(1)` is about stash: it comes before a guide that shares no word with the
    question (before, its title showed no word either, and rank order put the guide first)."""
    assert next_call(STASH_SEARCH, brief=STASH) == (
        "read_page",
        {"url": STASH_PAGE, "find": "keep-index"},
    )


def test_a_page_without_the_question_s_most_telling_word_is_left_for_the_next() -> None:
    pushing = SearchResultItem(url=GUIDE, title="Pushing your work", snippet="push --keep-index")
    stash = SearchResultItem(url=STASH_PAGE, title="tool-stash(1)", snippet="stash --keep-index")
    searched = entry(
        1, SearchArgs(query=STASH.questions[0].text), SearchData(results=[pushing, stash])
    )
    assert next_call(searched, brief=STASH) == (
        "read_page",
        {"url": GUIDE, "find": "keep-index"},
    )
    missing = entry(2, ReadPageArgs(url=GUIDE, find="keep-index"), window("S1", GUIDE))
    assert next_call(searched, missing, brief=STASH) == (
        "read_page",
        {"url": STASH_PAGE, "find": "keep-index"},
    ), "not `find` push on the guide"


LIMITS = Brief.model_validate(
    {
        "question": "How do I limit the size of request bodies the server accepts?",
        "questions": [
            {"id": "Q1", "text": "What is the default value of LimitRequestBody?"},
            {"id": "Q2", "text": "What happens when a body exceeds LimitRequestBody?"},
        ],
        "allowed_hosts": ["docs.example"],
    }
)


def test_a_lone_plain_lead_word_is_looked_for_with_the_name_the_questions_share() -> None:
    brief = LIMITS
    core = "https://docs.example/core.html"
    searched = entry(
        1,
        SearchArgs(query=brief.questions[0].text),
        SearchData(
            results=[SearchResultItem(url=core, title="core", snippet="LimitRequestBody bytes")]
        ),
    )
    assert next_call(searched, brief=brief) == (
        "read_page",
        {"url": core, "find": "limitrequestbody default"},
    )


def test_a_name_no_result_shows_is_searched_with_the_question_s_lead_word() -> None:
    """The question's other words outranked the name it asks about: the name is searched, once
    (a search stays for the other question), and its results are read first."""
    brief = LIMITS
    program = SearchResultItem(url=UNRELATED, title="httpd", snippet="the default value")
    searched = entry(1, SearchArgs(query=brief.questions[0].text), SearchData(results=[program]))
    assert next_call(searched, brief=brief) == (
        "search_web",
        {"query": "LimitRequestBody default"},
    )
    core = SearchResultItem(url=PAGE, title="core", snippet="LimitRequestBody bytes")
    named = entry(2, SearchArgs(query="LimitRequestBody default"), SearchData(results=[core]))
    assert next_call(searched, named, brief=brief) == (
        "read_page",
        {"url": PAGE, "find": "limitrequestbody default"},
    )


LOG_SECOND = "What does git log --first-parent do?"


@pytest.mark.parametrize(
    ("first", "second", "query"),
    [
        ("What does git log --follow do?", LOG_SECOND, "git log --follow"),
        # two words at most, the option without its value, the question's lead word after it
        (
            "Does a shallow git clone --depth=1 fetch every branch?",
            LOG_SECOND,
            "git clone --depth shallow",
        ),
        # the command written before the first option is the next one's too
        ("What does git log --oneline --follow do?", LOG_SECOND, "git log --oneline --follow"),
        # in the order written, a command said once
        (
            "What does git push --force-with-lease add to git push --force?",
            LOG_SECOND,
            "git push --force-with-lease --force",
        ),
        # words that frame the question are no command
        ("What is the difference between --soft and --hard?", LOG_SECOND, "--soft --hard"),
        # no command written before it: the option alone
        (
            "What does the --include-untracked option of git stash do?",
            LOG_SECOND,
            "--include-untracked",
        ),
        # a name that is no option: alone
        (
            "What does Apache LimitRequestBody default to?",
            "What happens when a body exceeds LimitRequestBody in Apache?",
            "LimitRequestBody default",
        ),
    ],
)
def test_an_option_no_result_shows_is_searched_with_its_command(
    first: str, second: str, query: str
) -> None:
    """An option is its command's: searched by itself, "--follow" is a common word of the
    manual's pages (a tag's "the following"), so the words written just before it go with it."""
    brief = Brief.model_validate(
        {
            "question": "How do I use the tool?",
            "questions": [{"id": "Q1", "text": first}, {"id": "Q2", "text": second}],
            "allowed_hosts": ["docs.example"],
        }
    )
    tag = SearchResultItem(url=UNRELATED, title="git-tag(1)", snippet="the following tags")
    searched = entry(1, SearchArgs(query=first), SearchData(results=[tag]))
    assert next_call(searched, brief=brief) == ("search_web", {"query": query})


def test_a_near_duplicate_listed_under_a_result_may_be_the_further_source() -> None:
    """The search collapsed the page's other copy under it (`also`): once the page is cited, that
    copy is read for a second source, as the results that show the question are."""
    mirror = "https://docs.example/functools.txt"
    searched = entry(
        1,
        SearchArgs(query=BRIEF.questions[0].text),
        SearchData(
            results=[
                SearchResultItem(
                    url=PAGE, title="functools", snippet="@functools.lru_cache(...)", also=[mirror]
                ),
                SearchResultItem(url=UNRELATED, title="Sorting", snippet="key functions"),
            ]
        ),
    )
    assert next_call(searched, *_recorded_then_short_of_sources()) == (
        "read_page",
        {"url": mirror, "find": "lru_cach"},
    )


def test_a_settled_question_s_finding_cites_what_answers_not_an_earlier_weak_quote() -> None:
    weak = "The typed flag is new in this release."
    page = opened(weak + "\n\n" + SIGNATURE + "\n\n" + ANSWER)
    recorded = [
        entry(
            3 + number,
            RecordEvidenceArgs(
                question_id="Q1", source_id="S1", claim=quote, stance="supports", quote=quote
            ),
            EvidenceData(evidence_id=f"E00{number + 1}", quote=quote),
        )
        for number, quote in enumerate([weak, ANSWER])
    ]
    name, arguments = next_call(SEARCHED, page, *recorded, steps_left=1)
    assert name == "finish_research"
    assert [finding["evidence_ids"] for finding in arguments["findings"]] == [["E002"]]


def test_a_weak_quote_of_another_page_is_no_second_source() -> None:
    """A quote that only resembles the question, recorded from another page before the answer
    was found, is not cited for the gate to count as a second source: the policy looks for one
    that says the answer again, and with no step left submits one source (the gate refuses)."""
    weak = "The typed flag is new."
    first = entry(2, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, weak))
    page = entry(
        4, ReadPageArgs(url=PAGE, find="lru_cach"), window("S1", PAGE, f"{SIGNATURE}\n\n{ANSWER}")
    )
    recorded = [
        entry(
            step,
            RecordEvidenceArgs(
                question_id="Q1", source_id=source, claim=quote, stance="supports", quote=quote
            ),
            EvidenceData(evidence_id=eid, quote=quote),
        )
        for step, source, eid, quote in [(3, "S2", "E001", weak), (5, "S1", "E002", ANSWER)]
    ]
    transcript = [SEARCHED, first, recorded[0], page, recorded[1]]
    name, arguments = next_call(*transcript, steps_left=1)
    assert name == "finish_research"
    assert [finding["evidence_ids"] for finding in arguments["findings"]] == [["E002"]]
    name, _ = next_call(*transcript)
    assert name != "finish_research", "one source cited: it looks for another first"
    again = "In 3.3, lru_cache gained typed: arguments of different types are cached separately."
    said = entry(3, RecordEvidenceArgs(question_id="Q1", source_id="S2", claim=again,
                                       stance="supports", quote=again),
                 EvidenceData(evidence_id="E001", quote=again))  # fmt: skip
    saying = entry(2, ReadPageArgs(url=OTHER, find="lru_cach"), window("S2", OTHER, again))
    name, arguments = next_call(SEARCHED, saying, said, page, recorded[1], steps_left=1)
    assert [finding["evidence_ids"] for finding in arguments["findings"]] == [["E001", "E002"]]


def test_a_settled_answer_is_searched_again_in_its_own_words_for_a_further_source() -> None:
    """Short of sources, the policy searches what the settled answer says with what the
    question names, and reads that search's results before the question's own."""
    claim = "If typed is set to true, function arguments of different types will be cached apart."
    recorded = entry(
        3,
        RecordEvidenceArgs(
            question_id="Q1", source_id="S1", claim=claim, stance="supports", quote=ANSWER
        ),
        EvidenceData(evidence_id="E001", quote=ANSWER),
    )
    before = [opened(SIGNATURE + "\n\n" + ANSWER), recorded]
    name, arguments = next_call(SEARCHED, *before)
    assert name == "search_web"
    query = arguments["query"]
    assert query.startswith("lru_cache ") and "different" in query.split(), query
    assert not {"typed", "arguments", "function"} & set(query.split()), "not the question's words"
    guide = "https://docs.example/howto-caching.html"
    again = entry(
        4,
        SearchArgs(query=query),
        SearchData(
            results=[
                SearchResultItem(url=PAGE, title="functools", snippet="@functools.lru_cache"),
                SearchResultItem(url=guide, title="Caching", snippet="lru_cache with typed"),
            ]
        ),
    )
    assert next_call(SEARCHED, *before, again) == ("read_page", {"url": guide, "find": "lru_cach"})


def test_the_default_of_a_name_every_sub_question_shares_is_looked_for_with_it() -> None:
    """'the default maximum size ... (the main max_size)', with max_size in both sub-questions:
    `find` looks for "max_size default", not for the page's first "default" or "main"; with no
    default asked, no pin."""
    brief = Brief.model_validate(
        {
            "question": "How big a message will the queue server accept?",
            "questions": [
                {"id": "Q1", "text": "What is the default maximum size of a message that the "
                                     "server will accept (the main max_size)?"},
                {"id": "Q2", "text": "What happens to a message larger than the max_size of "
                                     "its transport?"},
            ],
            "allowed_hosts": ["docs.example"],
        }
    )  # fmt: skip
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""),
        brief=brief,
        transcript=[],
        budget=Budget(steps_left=9, searches_left=1, pages_left=1, tokens_left=9),
    )
    wanted = wanted_words(brief.questions[0], request)
    assert "max_size" not in wanted.lead, "shared by both, it is no lead word"
    assert _pinned(wanted) == ["max_siz default"], "as `find` looks for a word"
    other = brief.questions[0].model_copy(
        update={"text": "What happens to a message that the server will accept (the max_size)?"}
    )
    assert _pinned(wanted_words(other, request)) == [], "no default asked: its own words"


def test_a_value_the_question_sets_a_name_to_is_looked_for_first() -> None:
    """The question "What does typed='always' ...": a result is opened at the value as the
    question quotes it (`'always'`), the entry for that value, not at the name's first mention;
    without a value, at the name."""
    valued = BRIEF.model_copy(
        update={
            "questions": [
                BRIEF.questions[0].model_copy(
                    update={"text": "What does typed='always' mean for lru_cache?"}
                )
            ]
        }
    )
    searched = entry(1, SearchArgs(query=valued.questions[0].text), SEARCHED.result.data)
    assert next_call(searched, brief=valued) == ("read_page", {"url": PAGE, "find": "'always'"})
    assert next_call(SEARCHED) == ("read_page", {"url": PAGE, "find": "lru_cach"})
    assert written_values('What does nargs="+" mean?') == ['"+"', "'+'"], "either quotes"


def test_a_passage_lacking_one_lead_word_of_three_is_read_back_for_its_signature() -> None:
    """A question of three lead words (process, check, fail) reads back from a passage that
    holds all but one of them: "If check is true, and the process exits with a non-zero exit
    code, ..." says what the check argument does when the process fails, under the signature of
    `runner.run(...)` a passage up. One holding only one of them is not read back from."""
    brief = BRIEF.model_copy(
        update={
            "question": "How does runner.run report failures?",
            "questions": [
                BRIEF.questions[0].model_copy(
                    update={
                        "text": "What does the check argument of runner.run do when the "
                        "process fails?"
                    }
                )
            ],
        }
    )
    searched = entry(1, SearchArgs(query=brief.questions[0].text), SEARCHED.result.data)

    def found(text: str) -> TranscriptEntry:
        passage = WindowPassage(id="S1.P4", offset=2540, text=text)
        data = PageWindow(source_id="S1", url=PAGE, passages=[passage])
        return entry(2, ReadPageArgs(url=PAGE, find="check"), data)

    answer = (
        "If check is true, and the process exits with a non-zero exit code, a RunError "
        "exception will be raised."
    )
    assert next_call(searched, found(answer), brief=brief) == (
        "read_page",
        {"source_id": "S1", "offset": 2537},
    )
    mention = "Use check_output() to capture what it prints."
    assert next_call(searched, found(mention), brief=brief)[1].get("offset") != 2537
    # the most specific lead word ("process") is never the one spared
    unspecific = "If check is set, a non-zero exit code fails the call."
    assert next_call(searched, found(unspecific), brief=brief)[1].get("offset") != 2537
