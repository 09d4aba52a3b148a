"""The offline policy: a deterministic, extractive stand-in for a model (no network, no weights).

It reads only what a model would see (the brief and the transcript) and, per open question:
searches the question, walks the results in rank order (results whose title and address share
no word with the question or the brief last), opens each page with `find` at its most telling
word (a name the question writes as code, else a lead word the result shows) and quotes the best
excerpt (`baselines.excerpts`), its best-matching sentence as the claim; `find` looks
further before the next result is read. Before settling for a page that only mentions what is
asked, it reads the next result when that shows the question's names, and takes an excerpt that
says what is asked (`answers`) from either. Once every question it can answer has evidence and
the cited sources are fewer than the gate requires, it looks for another source among every
search's results (those showing more of the question's names and words first; two names
compared are looked for together), then after a search for what the questions name, then
further into those pages' matches: only an excerpt that says what is asked counts, never a
passing mention. Then it submits; the gate's gaps say what is missing. A question whose lone
lead word is plain looks for it together with the name its sub-questions share; a name the best
search result does not show is searched by itself (an option with its command, the words written
before it); a page where `find` shows nothing for the
question's name is left for the next result.

Precision first: a required question is settled only by evidence one of whose sentences, on its
own, answers it (`quote_settles`, by `says_answer`: every word asked in the sentence or the
definition it sits under, about what the question names, contrasting where it compares). A weaker
excerpt, once recorded, leaves the question open: the policy works on the questions with no
evidence first, then reads on for a better one (a sentence that passes, from any page read, is
taken over it), and submits the weak one as a limitation, not a finding, so the run ends
incomplete with what it found rather than completing on a sentence that may not answer.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from activities.model.prompt import messages
from baselines.excerpts import (
    GENERIC,
    LIGHT,
    MIN_SHARED_KEYWORDS,
    Excerpt,
    Passage,
    Wanted,
    answers,
    best_excerpt,
    code_words,
    copies,
    corroborates,
    holds_name,
    inner_capital,
    option_token,
    previous_id,
    quote_passes,
    quote_settles,
    running_sentences,
    says_answer,
    shown_words,
    strong_needed,
    unique,
    wanted_words,
    wordless_names,
    written_values,
)
from workflows.contracts import DecideInput
from workflows.models import Decision, Question, ToolCall, Usage
from workflows.substance import figures, keywords
from workflows.tools import (
    FINISH_RESEARCH,
    READ_PAGE,
    RECORD_EVIDENCE,
    SEARCH_WEB,
    EvidenceData,
    GateFailed,
    PageWindow,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    SearchData,
    SearchResultItem,
    tool_schemas,
)

STRICT_RESULTS = 2  # results read for an excerpt that says what is asked before settling
MAX_FINDS = 3  # `find` reads for one question's words on one page before the next result
DEEPER_FINDS = 2  # `find` reads of a further source's page once every lead had one
READ_BACKS = 2  # reads of a page back from a passage, for the definition it sits under
SPARED_FROM = 3  # lead words a question has for a passage read back from to lack one
_TOOLS_CHARS = len(json.dumps(tool_schemas()))


@dataclass(frozen=True)
class Find:
    """A `find` read of a source: the word, where it started, where the next matches start."""

    term: str
    offset: int
    next_offset: int | None
    found: int = 0  # passages the window showed
    more: bool = False  # more passages hold the term past the window (at next_offset)


@dataclass
class Seen:
    """What the transcript shows so far, in the form the policy needs."""

    searches: dict[str, list[SearchResultItem]] = field(default_factory=dict)  # query -> results
    passages: dict[str, Passage] = field(default_factory=dict)  # id -> what the window showed
    finds: dict[str, list[Find]] = field(default_factory=dict)  # source -> its `find` reads
    read_urls: dict[str, str] = field(default_factory=dict)  # url -> source id
    failed_urls: set[str] = field(default_factory=set)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # question -> evidence ids
    quotes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> source id, quote
    used_quotes: set[str] = field(default_factory=set)
    cited_sources: set[str] = field(default_factory=set)
    claims: dict[str, str] = field(default_factory=dict)  # evidence id -> claim
    conflicts: list[str] = field(default_factory=list)  # the host's conflict sentences
    gaps: list[str] = field(default_factory=list)  # from the last failed finish
    backs: set[tuple[str, int]] = field(default_factory=set)  # (source, offset) read back from


def observe(request: DecideInput) -> Seen:
    seen = Seen()
    for entry in request.transcript:
        args, data = entry.args, entry.result.data
        if isinstance(args, SearchArgs) and isinstance(data, SearchData):
            seen.searches[args.query] = list(data.results)
        elif isinstance(args, ReadPageArgs):
            _observe_read(seen, args, data)
        elif isinstance(args, RecordEvidenceArgs) and isinstance(data, EvidenceData):
            _observe_evidence(seen, args, data)
        elif isinstance(data, GateFailed):
            seen.gaps = list(data.gaps)
    return seen


def _observe_read(seen: Seen, args: ReadPageArgs, data: object) -> None:
    if not isinstance(data, PageWindow):  # refused, or the page could not be read
        seen.failed_urls.add(args.url or "")
        return
    seen.read_urls[data.url] = data.source_id
    if args.find:
        find = Find(args.find, args.offset, data.next_offset, len(data.passages), data.more_matches)
        seen.finds.setdefault(data.source_id, []).append(find)
    elif args.source_id:
        seen.backs.add((data.source_id, args.offset))
    for passage in data.passages:
        seen.passages[passage.id] = Passage(
            data.source_id,
            passage.text,
            passage.section,
            data.title,
            passage.offset,
            urlsplit(data.url).hostname or "",
        )


def _observe_evidence(seen: Seen, args: RecordEvidenceArgs, data: EvidenceData) -> None:
    seen.evidence.setdefault(args.question_id, []).append(data.evidence_id)
    seen.quotes[data.evidence_id] = (args.source_id, data.quote)
    seen.used_quotes.add(" ".join(data.quote.split()))
    seen.cited_sources.add(args.source_id)
    seen.claims[data.evidence_id] = args.claim
    seen.conflicts += data.conflicts


def decide_offline(request: DecideInput) -> Decision:
    seen = observe(request)
    call = _next_call(request, seen)
    return Decision(tool_calls=[call], usage=estimate_usage(request, call), model="offline")


def _next_call(request: DecideInput, seen: Seen) -> ToolCall:
    if request.budget.steps_left <= 1 and seen.evidence:
        # The last step submits what there is: the gate then says what is missing.
        return finish_call(request, seen)
    # Required questions first, those with no evidence yet before those with weak evidence
    # only: a question no page answers does not spend the steps another needs.
    ordered = sorted(
        request.brief.questions,
        key=lambda question: (not question.required, question.id in seen.evidence),
    )
    for question in ordered:
        if settled(question, request, seen):
            continue
        # A required question with weak evidence only is revisited for evidence that answers it.
        call = _work_on(question, request, seen, settle=question.id in seen.evidence)
        if call is not None:
            return call
    # Every question answered or out of leads: the gate will want more sources than that.
    if len(_citable_sources(request, seen)) < request.brief.limits.min_sources:
        corroborations = _corroborations(request, seen)
        extra = (
            _corroborate(request, seen, corroborations)
            or _another_source(request, seen, among=corroborations)
            or _another_source(request, seen)
            or _search_by_name(request, seen)
            or _another_source(request, seen, DEEPER_FINDS)
        )
        if extra is not None:
            return extra
    return finish_call(request, seen)


def _read_back(question: Question, request: DecideInput, seen: Seen) -> ToolCall | None:
    """A `find` window shows the passages holding a word, not the definition they may sit
    under: for a question about what it names, read back from a passage that holds every one
    of its lead words but whose passage before is unread (once each, READ_BACKS a page), so the
    signature above it can say whose text it is. A passage lacking one lead word of three or
    more, not the most specific, is read back from once none holds them all ("If check is true,
    and the process exits with a non-zero exit code ..." under `subprocess.run(...)`: no
    "fails")."""
    wanted = wanted_words(question, request)
    if not wanted.things:
        return None
    lead = set(wanted.lead) - wanted.name_words
    spared = 1 if len(lead) >= SPARED_FROM else 0  # lead words a passage may lack
    done = Counter(source for source, _ in seen.backs)  # reads back made, per source
    candidates: list[tuple[int, int, str, int]] = []  # (lacks, order, source, offset)
    for order, (passage_id, passage) in enumerate(seen.passages.items()):
        source = passage.source_id
        if done[source] >= READ_BACKS or passage.offset <= 0:
            continue
        if previous_id(passage_id) in seen.passages:
            continue
        at = max(0, passage.offset - 3)  # inside the passage before (past the blank line)
        lacks = lead - keywords(passage.text)
        if (source, at) in seen.backs or len(lacks) > spared or wanted.lead[0] in lacks:
            continue
        candidates.append((len(lacks), order, source, at))
    if not candidates:
        return None
    _, _, source, at = min(candidates)  # holding every lead word first, then in reading order
    return tool_call(READ_PAGE, source_id=source, offset=at)


def _corroborate(request: DecideInput, seen: Seen, queries: list[str]) -> ToolCall | None:
    """Search what a settled question's answer says, with what the question names
    (`heapq.heappop smallest item heap`, one of `_corroborations`): a page that says the same
    answer ranks high there though the question's own words found only the page that answered
    it. Once a question."""
    if request.budget.searches_left < 1:
        return None
    for query in queries:
        if query not in seen.searches:
            return tool_call(SEARCH_WEB, query=query)
    return None


ANSWER_WORDS = 3  # words of a settled answer searched with what its question names


def _corroborations(request: DecideInput, seen: Seen) -> list[str]:
    """Per settled question, the search for another page saying its answer: its names as
    written (else its first lead word) and the answer's ANSWER_WORDS most specific words that
    neither the question nor the brief uses."""
    queries = []
    for question in request.brief.questions:
        wanted = wanted_words(question, request)
        claims = [seen.claims[eid] for eid in _settling(question, wanted, seen)]
        if not claims:
            continue
        # the words of its claim's first sentence, not code (`key=str.lower`) nor framing
        asked = keywords(question.text) | keywords(request.brief.question) | GENERIC | LIGHT
        sentence = (running_sentences(claims[0]) or [""])[0]
        tokens = [token.strip("?!,;:.()[]'\"`") for token in sentence.split()]
        words = unique(
            [
                token
                for token in tokens
                if token.isalpha() and (said := keywords(token)) and not said & asked
            ]
        )
        words = sorted(words, key=len, reverse=True)[:ANSWER_WORDS]
        # a value it states ("Default: KeepAliveTimeout 5"), when no word is left to search
        words = words or sorted(figures(sentence) - figures(question.text))[:1]
        named = wanted.written or wanted.lead[:1]
        if words and named:
            queries.append(" ".join([*named, *words]))
    return queries


@dataclass(frozen=True)
class Settled:
    """What the settled answers of a question say: the claims, the words a page saying the same
    answer says again (`words`) and the values they state (`values`)."""

    claims: str
    words: set[str]
    values: set[str]


def _settled(
    question: Question, wanted: Wanted, request: DecideInput, seen: Seen, common: set[str]
) -> Settled:
    """The settled answers of `question`: their words that neither it nor the brief asks, nor
    the title and heading of the page they are quoted from (`re — Regular expression
    operations`: what the page is about, not what the answer says), nor the corpus's own
    (`common`); and the values they state that it does not ("Default: KeepAliveTimeout 5": 5)."""
    asked = keywords(question.text) | keywords(request.brief.question) | GENERIC | LIGHT
    claims = []
    for eid in _settling(question, wanted, seen):
        source, quote = seen.quotes[eid]
        claims.append(seen.claims[eid])
        opening = " ".join(quote.split())[:60]
        for passage in seen.passages.values():
            if passage.source_id == source:
                asked |= keywords(passage.title)
                if opening in " ".join(passage.text.split()):
                    asked |= keywords(passage.section)
    said = " ".join(claims)
    return Settled(said, keywords(said) - asked - common, figures(said) - figures(question.text))


COMMON_SHARE = 0.5  # of the passages read: a word in more is the corpus's, not an answer's
COMMON_LEAST = 3  # passages a word must be in to be common at all


def _common_words(seen: Seen) -> set[str]:
    """The words most passages read so far hold (`commit` on a Git manual): the corpus's own
    vocabulary, which says nothing of one answer. Counted over what the run has read, the one
    view of the corpus's statistics a reader has."""
    counts: dict[str, int] = {}
    for passage in seen.passages.values():
        for word in keywords(passage.text):
            counts[word] = counts.get(word, 0) + 1
    least = max(COMMON_LEAST, COMMON_SHARE * len(seen.passages))
    return {word for word, count in counts.items() if count >= least}


def _search_by_name(request: DecideInput, seen: Seen) -> ToolCall | None:
    """Search what a question names, as it writes it (`heapq.nlargest`): the pages that use the
    name most, where the question's phrasing found only one."""
    if request.budget.searches_left < 1:
        return None
    for question in request.brief.questions:
        query = " ".join(wanted_words(question, request).written)
        if query and query not in seen.searches:
            return tool_call(SEARCH_WEB, query=query)
    return None


def settled(question: Question, request: DecideInput, seen: Seen) -> bool:
    """Done with: an optional question with any evidence, a required one with evidence that says
    what it asks by the policy's strongest test (`quote_settles`)."""
    ids = seen.evidence.get(question.id, [])
    if not question.required or not ids:
        return bool(ids)
    return bool(_settling(question, wanted_words(question, request), seen))


def _settling(question: Question, wanted: Wanted, seen: Seen) -> list[str]:
    """The question's evidence that says what it asks by the strongest test (`quote_settles`)."""
    return [
        eid
        for eid in seen.evidence.get(question.id, [])
        if eid in seen.quotes and quote_settles(wanted, seen.passages, *seen.quotes[eid])
    ]


def _work_on(
    question: Question, request: DecideInput, seen: Seen, *, settle: bool = False
) -> ToolCall | None:
    """The seed URLs first (the brief's that could be read, then the operator's, in order), then
    search the question and walk its results in rank order: read the next unread one, or record
    from a read one, or look in it with `find` for a word not looked for yet."""
    # A sentence that answers it among every passage read so far, on any page: taken over
    # what was recorded for it before.
    answer = best_excerpt(
        wanted_words(question, request),
        seen.passages,
        seen.used_quotes,
        set(seen.read_urls.values()),
        1,
        about=says_answer,
    )
    if answer is not None:
        return record_call(question, answer, seen)
    back = _read_back(question, request, seen)
    if back is not None:
        return back
    unreadable = {seed.url for seed in request.unreadable_seeds}  # the start's check said so
    seeds = dict.fromkeys(
        url for url in [*request.brief.seed_urls, *request.seeds] if url not in unreadable
    )
    if seeds:
        hits = [SearchResultItem(url=url) for url in seeds]
        call = _from_results(question, request, seen, hits, by_title=False, strict=True)
        call = call or _from_results(question, request, seen, hits, by_title=False)
        if call is not None:
            return call
    if question.text not in seen.searches:
        if request.budget.searches_left > 0:
            return tool_call(SEARCH_WEB, query=question.text)
        return None
    hits = seen.searches[question.text]
    named = _by_name(question, request, seen, hits)
    if isinstance(named, ToolCall):
        return named
    hits = unique_hits(named + hits)
    return _from_results(question, request, seen, hits, strict=True) or _from_results(
        question, request, seen, hits, settle=settle
    )


def _by_name(
    question: Question, request: DecideInput, seen: Seen, hits: list[SearchResultItem]
) -> ToolCall | list[SearchResultItem]:
    """A question naming something with capitals inside or as code (`LimitRequestBody`) whose
    search's best result does not show that name (the question's other words outranked it):
    search the name with the question's lead word, once, while a search is left for every
    question not searched yet; its results are read first."""
    wanted = wanted_words(question, request)
    tokens = [_unvalued(token.strip("?!,;:.()'\"`")) for token in question.text.split()]
    names = unique([t for t in tokens if t and (inner_capital(t) or t in wanted.written)])
    if not names:
        return []
    # An option is its command's: the words written just before it go with it (`git log
    # --follow`), or pages where the option's word is a common one ("the following") outrank
    # the command's own page. In the order the question writes them.
    places = {tokens.index(name) for name in names}
    places |= {place for name in names if option_token(name) for place in _command(tokens, name)}
    words = [tokens[place] for place in sorted(places)]
    said = keywords(" ".join(words))
    words += [word for word in wanted.lead[:1] if word not in said]
    query = " ".join(_distinct(words))
    if query in seen.searches:
        return seen.searches[query]
    shown = " ".join(f"{hit.title} {hit.snippet}" for hit in hits[:1])
    if any(holds_name(name, shown) for name in names):
        return []
    unsearched = sum(q.text not in seen.searches for q in request.brief.questions)
    if request.budget.searches_left <= unsearched:
        return []
    return tool_call(SEARCH_WEB, query=query)


COMMAND_WORDS = 2  # words of a command written before its option (`git log`, `manage.py migrate`)


def _unvalued(token: str) -> str:
    """An option without the value written with it (`--depth` of `--depth=1`)."""
    option = token.partition("=")[0]
    return option if option_token(option) else token


def _command(tokens: list[str], option: str) -> set[int]:
    """Where the words written just before `option` (its first place) are: up to
    COMMAND_WORDS, back to another option or a word that says nothing or only frames the
    question (`git log` of "What does git log --follow do"; none of "the --include-untracked
    option of git stash" or "the difference between --soft and ...")."""
    command: set[int] = set()
    for place in range(tokens.index(option) - 1, -1, -1):
        token = tokens[place]
        stops = not keywords(token) or keywords(token) <= GENERIC or option_token(token)
        if stops or len(command) == COMMAND_WORDS:
            break
        command.add(place)
    return command


def _distinct(words: list[str]) -> list[str]:
    """`words` without one whose content words an earlier one holds ("Git" after "git")."""
    said: set[str] = set()
    kept = []
    for word in words:
        own = keywords(word) or {word}
        if own <= said:
            continue
        said |= own
        kept.append(word)
    return kept


def unique_hits(hits: list[SearchResultItem]) -> list[SearchResultItem]:
    """Each page once, in the order first shown."""
    first: dict[str, SearchResultItem] = {}
    for hit in hits:
        first.setdefault(hit.url, hit)
    return list(first.values())


def _from_results(
    question: Question,
    request: DecideInput,
    seen: Seen,
    hits: list[SearchResultItem],
    *,
    by_title: bool = True,
    strict: bool = False,
    settle: bool = False,
) -> ToolCall | None:
    """In rank order (results about something else last): a new page is opened at the passages
    holding the question's most telling word (`find`): a name it writes as code, else a lead
    word its result shows, else its other words; a strong match is taken at once, else `find`
    looks further, and a weak match is taken only where the result showed a lead word. To
    `settle` a question that has a weak match already, only an excerpt that answers counts."""
    wanted = wanted_words(question, request)
    ordered = _by_title(hits, wanted) if by_title else hits
    for number, hit in enumerate(ordered[:STRICT_RESULTS] if strict else ordered):
        url, shown = hit.url, _shown(hit, wanted.lead)
        if url in seen.failed_urls:
            continue
        if strict and number > 0 and not _shows_names(hit, wanted):
            continue
        # Lead words before topic words (the brief's subject is on every page about it); among
        # them those the result shows (the page surely holds them), most specific first.
        # a value the question sets its name to first (`'+'` of `nargs='+'`): the entry for
        # that value, not the name's first mention
        looked_for = unique(
            written_values(wanted.question)
            + _pinned(wanted)
            + _short_options(wanted)
            + _named_lead(wanted)
            + shown
            + wanted.lead
            + wanted.topic
        )
        if url not in seen.read_urls:
            if request.budget.pages_left > 0:
                find = {"find": looked_for[0]} if looked_for else {}
                return tool_call(READ_PAGE, url=url, **find)
            continue
        source_id = seen.read_urls[url]
        if _lacks(seen.finds.get(source_id, []), (_pinned(wanted) + _named_lead(wanted))[:1]):
            continue  # the page does not hold the question's most telling word: the next one
        strong = best_excerpt(
            wanted,
            seen.passages,
            seen.used_quotes,
            {source_id},
            strong_needed(wanted.lead),
            about=says_answer if strict or settle else None,
        )
        if strong is not None:
            return record_call(question, strong, seen)
        more = _look_further(seen.finds.get(source_id, []), looked_for, 0 if strict else MAX_FINDS)
        if more is not None:  # jump to (more of) the passages holding a word
            return tool_call(READ_PAGE, source_id=source_id, **more)
        if shown and not strict and not settle:
            fallback = best_excerpt(
                wanted, seen.passages, seen.used_quotes, {source_id}, MIN_SHARED_KEYWORDS
            )
            if fallback is not None:
                return record_call(question, fallback, seen)
    return None


def _shows_names(hit: SearchResultItem, wanted: Wanted) -> bool:
    """The result's title or snippet holds every name the question writes as code (it has
    some), qualifiers aside: worth reading before settling for a page that only mentions them."""
    names = wanted.things
    return bool(names) and all(holds_name(name, f"{hit.title} {hit.snippet}") for name in names)


def _lacks(done: list[Find], words: list[str]) -> bool:
    """A `find` from the top of the page for one of `words` (a name the question writes as
    code, or the name its sub-questions share with its lead word) showed no passage: the page
    does not hold it, and its other words there are about something else."""
    return any(find.term in words and find.offset == 0 and not find.found for find in done)


def _look_further(done: list[Find], words: list[str], budget: int) -> dict[str, Any] | None:
    """The next `find` on a page for a question's words, within `budget` reads of them: the
    rest of the latest word's matches when its window said there are more, else the next
    word. While none of them has shown a passage, up to one read more than `budget` is made,
    and two at least: a value the page quotes otherwise (`"store_true"`, not `'store_true'`)
    after the first missed; on a page another question's find opened, the question's own
    words."""
    mine = [find for find in done if find.term in words]
    missed = not any(find.found for find in mine)
    if len(mine) >= (max(budget, 1) + 1 if missed else budget):
        return None
    read = {(find.term, find.offset) for find in done}
    if mine and mine[-1].more and mine[-1].next_offset is not None:
        latest = mine[-1]
        if (latest.term, latest.next_offset) not in read:
            return {"find": latest.term, "offset": latest.next_offset}
    tried = {find.term for find in done}
    # A word inside one looked for already ("lru" after "lru_cach") finds nothing new first; one
    # of several looked for together ("match" after "match search") may.
    untried = [
        word
        for word in words
        if word not in tried and not any(word in term for term in tried if " " not in term)
    ]
    return {"find": untried[0]} if untried else None


def _by_title(hits: list[SearchResultItem], wanted: Wanted) -> list[SearchResultItem]:
    """Results in rank order, those whose title and address share no word with the question or
    the brief last (a page about something else that uses the words)."""
    words = set(wanted.lead + wanted.topic + wanted.subject)

    def unrelated(hit: SearchResultItem) -> bool:
        path = urlsplit(hit.url).path.replace("/", " ")
        return not words & shown_words(f"{hit.title} {path}")

    return sorted(hits, key=unrelated)


DEFAULT_WORD = "default"  # as `keywords` reads it


def _pinned(wanted: Wanted) -> list[str]:
    """A question with one lead word that is not a name ("the default value of
    LimitRequestBody", when every sub-question names LimitRequestBody): the name its
    sub-questions share, written with inner capitals, looked for together with that word, so
    `find` reaches that name's default rather than the page's first "default". So too, for a
    default asked of a name written as code that is no lead word (its sub-questions or the
    brief share it: "the default maximum size ... (the main message_size_limit)"), that name
    with "default": a reference entry writes the two together, where the page's other
    "default"s are any setting's."""
    if _named_lead(wanted):
        return []
    shared = [word for word in code_words(wanted) if word not in wanted.lead]
    if shared and DEFAULT_WORD in wanted.lead:
        return [f"{shared[0]} {DEFAULT_WORD}"]
    if len(wanted.lead) != 1:
        return []
    written = {
        word
        for token in wanted.question.split()
        if inner_capital(token)
        for word in keywords(token)
    }
    pins = [word for word in wanted.topic if word in written and word not in wanted.subject]
    return [f"{pins[0]} {wanted.lead[0]}"] if pins else []


def _short_options(wanted: Wanted) -> list[str]:
    """The options the question asks about that have no word to look for (`-x`, `-f`): looked
    for as written."""
    return [name for name in wordless_names(wanted) if name.startswith("-")]


def _named_lead(wanted: Wanted) -> list[str]:
    """The lead words the question names as code (`basicConfig`): looked for first."""
    names = {word for name in wanted.named for word in keywords(name)}
    return [word for word in wanted.lead if word in names]


def _shown(hit: SearchResultItem, lead: list[str]) -> list[str]:
    """The distinctive words a result's title, address or snippet shows, most specific first."""
    words = shown_words(f"{hit.title} {hit.url.replace('/', ' ')} {hit.snippet}")
    return [term for term in lead if term in words]


def _another_source(
    request: DecideInput, seen: Seen, finds: int = 1, among: list[str] | None = None
) -> ToolCall | None:
    """Evidence from a source not cited yet, for any question: among the results of every
    search that show one of its names or lead words, the most promising first (showing more of
    its names, then more of those words, then better ranked), read with `find` at its most
    specific name (`finds` reads of its matches: once, then further once every lead had one);
    only a strong match that says what the question asks is taken (`answers`). With `among`,
    only the results of those searches (none: nothing to read)."""
    if among is not None and not among:
        return None
    leads = _leads(request, seen, among)
    cited = [quote for _, quote in seen.quotes.values()]
    common: set[str] | None = None  # the corpus's own words, counted once a turn
    answers_of: dict[str, Settled] = {}  # each question's settled answer, worked out once
    for _, question, wanted, hit, shown in sorted(leads, key=lambda o: o[0]):
        # Two names compared ("re.match and re.search") are looked for together: the passages
        # holding both, not the first that mentions one.
        together = [" ".join(wanted.things)] if len(wanted.things) > 1 else []
        source_id = seen.read_urls.get(hit.url)
        if source_id is None:
            if request.budget.pages_left > 0:
                return tool_call(READ_PAGE, url=hit.url, find=(together + shown)[0])
            continue
        # or, of a settled question, it says again what its answer says (`corroborates`)
        if question.id not in answers_of:
            common = _common_words(seen) if common is None else common
            answers_of[question.id] = _settled(question, wanted, request, seen, common)
        strong = best_excerpt(
            wanted,
            seen.passages,
            seen.used_quotes,
            {source_id},
            1,  # `answers` asks for every word but one
            about=partial(_says_again, settled=answers_of[question.id], cited=cited),
        )
        if strong is not None:
            return record_call(question, strong, seen)
        # Further into a page, only the names (their next matches): its other words are
        # everywhere in it.
        words = unique(together + shown + wanted.lead)
        if finds > 1:
            words = unique(together + code_words(wanted)) or wanted.lead[:1]
        more = _look_further(seen.finds.get(source_id, []), words, finds)
        if more is not None:
            return tool_call(READ_PAGE, source_id=source_id, **more)
    return None


def _says_again(excerpt: Excerpt, wanted: Wanted, *, settled: Settled, cited: list[str]) -> bool:
    """A further source's excerpt says what is asked (`answers`) or again what the settled
    answer says (`corroborates`), and is not the same text as a quote already cited (another
    rendering of the page, `git-rebase.txt` beside `git-rebase.html`), whichever test it
    passes."""
    if answers(excerpt, wanted):
        return not any(copies(excerpt.quote, quote) for quote in cited)
    return corroborates(excerpt, wanted, settled.words, cited, settled.values, settled.claims)


Lead = tuple[tuple[int, int, int, int, int], Question, Wanted, SearchResultItem, list[str]]


def _leads(request: DecideInput, seen: Seen, among: list[str] | None = None) -> list[Lead]:
    """Uncited results that show a question's names or lead words, with how promising they are:
    the share of its names their title and snippets hold, then the share of its words
    (`content`) they and the address show, then how many lead words, then their best rank."""
    leads: list[Lead] = []
    results = _every_result(seen, among)
    for number, question in enumerate(request.brief.questions):
        wanted = wanted_words(question, request)
        for position, hit in results:
            shown = _shown(hit, unique(_named_lead(wanted) + code_words(wanted) + wanted.lead))
            cited = seen.read_urls.get(hit.url) in seen.cited_sources
            if not shown or cited or hit.url in seen.failed_urls:
                continue
            share = 100 * len(_shown(hit, wanted.content)) // max(1, len(wanted.content))
            held = sum(holds_name(name, f"{hit.title} {hit.snippet}") for name in wanted.codes)
            names = 100 * held // max(1, len(wanted.codes))
            rank = (-names, -share, -len(shown), position, number)
            leads.append((rank, question, wanted, hit, shown))
    return leads


def _every_result(seen: Seen, among: list[str] | None = None) -> list[tuple[int, SearchResultItem]]:
    """Each page every search returned, once, and each near-duplicate listed under one (`also`):
    its best rank, and the snippets of all of them (a page found for one question shows
    another's words in the snippet of that one's search)."""
    best: dict[str, int] = {}
    found: dict[str, list[SearchResultItem]] = {}
    for query, hits in seen.searches.items():
        if among is not None and query not in among:
            continue
        for position, hit in enumerate(hits):
            # a near-duplicate listed under a result is found with it (its title and snippet)
            for url in [hit.url, *hit.also]:
                best[url] = min(position, best.get(url, position))
                found.setdefault(url, []).append(hit)
    return [
        (
            best[url],
            SearchResultItem(
                url=url,
                title=hits[0].title,
                snippet=" … ".join(unique([hit.snippet for hit in hits])),
            ),
        )
        for url, hits in found.items()
    ]


def record_call(question: Question, excerpt: Excerpt, seen: Seen) -> ToolCall:
    return tool_call(
        RECORD_EVIDENCE,
        question_id=question.id,
        source_id=seen.passages[excerpt.passage_id].source_id,
        quote=excerpt.quote,
        claim=excerpt.claim,
        stance="supports",
    )


def finish_call(request: DecideInput, seen: Seen, *, judged: bool = True) -> ToolCall:
    """The report: a finding per settled question; a required question whose evidence does not
    say what it asks is a limitation (the gate then finds it uncovered: incomplete, not wrong).
    Not `judged` (the fixed pipeline's), every question with evidence is a finding."""
    questions = request.brief.questions
    unsure = [
        q for q in questions if judged and q.id in seen.evidence and not settled(q, request, seen)
    ]
    findings: list[dict[str, Any]] = [
        {"text": " ".join(seen.claims[eid] for eid in ids), "evidence_ids": ids}
        for ids in _finding_ids(request, seen, judged, unsure)
    ]
    missing = [q.id for q in questions if q.id not in seen.evidence]
    notes = [f"No evidence was found for {', '.join(missing)}."] if missing else []
    notes += [
        f"The evidence found for {q.id} may not answer it: "
        + " ".join(seen.claims[eid] for eid in seen.evidence[q.id])
        for q in unsure
    ]
    notes += [f"Conflicting evidence: {sentence}." for sentence in seen.conflicts]
    limitations = " ".join(notes) or "None identified."
    answer = " ".join(str(finding["text"]) for finding in findings) or "No answer was found."
    return tool_call(FINISH_RESEARCH, answer=answer, findings=findings, limitations=limitations)


def _cited(question: Question, request: DecideInput, seen: Seen, judged: bool) -> list[str]:
    """The evidence a settled question's finding cites: what says the answer (`says_answer`)
    or is about it (`answers`, a further source), and a weaker quote only from a source those
    do not cite and only when it says again what they say (`corroborates`): the gate counts its
    source as another, so a quote that only resembles the question ("match() and search()
    return None ...") is no second source, and one recorded from the same page before a better
    one was found (a usage line's `[--[no-]keep-index]`) is no claim to make."""
    ids = seen.evidence.get(question.id, [])
    if not judged or not question.required:
        return ids
    wanted = wanted_words(question, request)
    good = [
        eid
        for eid in ids
        if eid in seen.quotes
        and any(
            quote_passes(wanted, seen.passages, *seen.quotes[eid], test)
            for test in (says_answer, answers)
        )
    ]
    sources = {seen.quotes[eid][0] for eid in good}
    weak = [
        eid for eid in ids if eid not in good and seen.quotes.get(eid, ("", ""))[0] not in sources
    ]
    if not good or not weak:
        return [eid for eid in ids if eid in good or eid in weak]
    again = partial(
        _says_again,
        settled=_settled(question, wanted, request, seen, _common_words(seen)),
        cited=[seen.quotes[eid][1] for eid in good],
    )
    return [
        eid
        for eid in ids
        if eid in good
        or (eid in weak and quote_passes(wanted, seen.passages, *seen.quotes[eid], again))
    ]


def _finding_ids(
    request: DecideInput, seen: Seen, judged: bool, unsure: list[Question]
) -> list[list[str]]:
    """The evidence each finding of the report cites: of every question with evidence cited
    and not `unsure` (its evidence may not answer it), in the brief's order."""
    return [
        ids
        for question in request.brief.questions
        if question not in unsure and (ids := _cited(question, request, seen, judged))
    ]


def _citable_sources(request: DecideInput, seen: Seen) -> set[str]:
    """The sources the report's findings would cite (`finish_call`): what the gate counts."""
    unsure = [q for q in request.brief.questions if not settled(q, request, seen)]
    return {
        seen.quotes[eid][0]
        for ids in _finding_ids(request, seen, True, unsure)
        for eid in ids
        if eid in seen.quotes
    }


def tool_call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(arguments, sort_keys=True))


def estimate_usage(request: DecideInput, call: ToolCall) -> Usage:
    """No provider reports usage here: estimate ~4 characters a token of what a model would be
    sent (the rendered messages and the tool schemas), and say so."""
    prompt_chars = len(json.dumps(messages(request))) + _TOOLS_CHARS
    return Usage(
        input_tokens=prompt_chars // 4 + 1,
        output_tokens=len(call.arguments) // 4 + 1,
        estimated=True,
    )
