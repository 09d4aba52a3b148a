"""Does evidence inform, and does a report say only what its evidence says? (pure, documented)

Deterministic tests on content words and stated figures, shared by the evidence rules (when
evidence is recorded) and the gate (when a report is submitted); their refusals come from the
rules table (`workflows.rules`). Every text is read canonical (`workflows.canonical`).

- **Informative:** a quote has at least MIN_EVIDENCE_WORDS distinct content words (words that
  are not stopwords) and figures of its own, and MIN_EVIDENCE_CHARS characters: "The default
  timeout is 30 seconds" informs, "Harbor Queue" or "after 5 attempts" does not.
- **Relevant:** the quote, with what it sits under (its section heading and the paragraph just
  before it), shares a key term of its sub-question: the sub-question's content words less
  those every sub-question shares (the topic); a term the main question also uses stays. The
  heading supports a quote and does not replace it: what informs is counted in the quote's own
  words, and a list item's label ("Retries and backoff: what happens when ...") is a heading.
- **Not navigation:** a quote of three or more lines that are labelled entries describing pages
  (an index, a table of contents) or bare headings is not evidence.
- **Supported:** a claim, a finding, the answer or the limitations state no figure their
  evidence does not (`figure_problems`: value, unit or counted noun, qualifier and era must
  match, `workflows.quantities`); a count of the items a quote lists is a figure it states; the
  brief's own questions count as evidence for this. A finding also shares at least
  MIN_SHARED_WORDS content words or figures with its quotes, and negates something ("not",
  "never", "instead of") only where a quote negates something of the same words: what follows
  the quote's negation in its clause, or the line of a value that negates ("Amazon SQS | Stable
  | No | No", "Default: Disabled"). A negation stating a condition ("with nothing configured")
  negates no fact. A count of the research's own pages or sources is no figure to support.
- **Conflicting:** two pieces of evidence for one question from different source families state
  a current figure of one kind (a duration, a size, a percentage, a count of the same thing)
  about the same thing (a content word, names aside, among the four before each) with
  different values, and neither also states the other's value as current: they disagree,
  whatever stance the model gave them. A figure a quote ties to an older version ("Releases
  before 2.0 used 60 seconds") is not its current value.

Known limits: one shared key term is enough, so an off-topic sentence that happens to use one
passes the relevance test; meaning (an inversion without a negation word, two quotes stitched
into one relation) is the verifier's to check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The gate reads text through this module alone: these three are its as well.
from workflows.canonical import Canonical as Canonical
from workflows.canonical import canonical as canonical
from workflows.canonical import mixed_script as mixed_script
from workflows.quantities import Quantity, date_parts, matches, mismatch, read, same_value
from workflows.rules import refusal
from workflows.text import sentence_texts, sentences, stem, word_spans, words

MIN_EVIDENCE_CHARS = 20
MIN_EVIDENCE_WORDS = 4
MIN_SHARED_WORDS = 2

STOPWORDS = frozenset(
    (
        "a an and are as at be been before but by can could do does did for from had has have how "
        "if in into is it its may might must no not of on or our should so such than that the "
        "their them then there these they this those to was we were what when where which while "
        "who whom why will with would you your after about also any all each more most other "
        "over same some very yes my me myself his him her hers whose being shall"
    ).split()
)


def keywords(text: str) -> set[str]:
    """Distinct content words of `text` (`workflows.text.words`), lower-cased and stemmed; an
    identifier (`wait_for`, `allow_nan`) counts as itself and as its parts ("dead-letter" stays
    one word)."""
    found = words(canonical(text).lower())  # a canonical text's lower case is canonical
    found += [part for word in found if "_" in word for part in word.split("_")]
    return {
        stem(word)
        for word in found
        if len(word) > 1 and word not in STOPWORDS and not word.isdigit()
    }


def stop_words(text: str) -> tuple[int, int]:
    """How many of `text`'s words are stop words, and how many words it has: prose runs at about
    a third, a signature, an index or a list of links far lower."""
    found = [word for word in words(text.lower()) if not word.isdigit()]
    return sum(word in STOPWORDS for word in found), len(found)


# ---------------------------------------------------------------- recording evidence


def distinctive_words(question: str, main_question: str, sub_questions: list[str]) -> list[str]:
    """The key terms of `question` (sorted): its content words less the brief's topic, the words
    every sub-question shares and the names of the main question that two or more
    sub-questions use ("Harbor Queue" tells nothing about which sub-question a quote answers).
    What the main question asks stays a key term of the sub-questions that ask it too: for
    "Does Celery guarantee that each task is executed exactly once?", a quote saying a task
    "will be executed again" touches "With default settings, can a Celery task end up being
    executed more than once?"."""
    own = keywords(question)
    topic: set[str] = set()
    if len(sub_questions) > 1:
        words = [keywords(text) for text in sub_questions]
        topic = set.intersection(*words)
        topic |= {word for word in _names(main_question) if sum(word in w for w in words) > 1}
    return sorted(own - topic or own)


def _names(text: str) -> set[str]:
    """The content words of the capitalised words of `text` (its names: "Harbor Queue")."""
    return keywords(" ".join(re.findall(r"\b[A-Z][\w-]*", canonical(text))))


def evidence_problem(
    quote: str, context: str, claim: str, terms: list[str], question: str = ""
) -> str | None:
    """Why this quote cannot be evidence for a question with key `terms`, or None. `context`
    is page text around the quote (section heading, the paragraph before it): it may hold the
    key term, but what informs must be the quote's own words (a list item's label is context).
    `question` is the sub-question as written, to name its terms in a refusal."""
    quote = canonical(quote)
    own, label = (Canonical(part) for part in own_words(quote))
    size = len(keywords(own) | figures(own))
    if len(" ".join(quote.split())) < MIN_EVIDENCE_CHARS or size < MIN_EVIDENCE_WORDS:
        return refusal("relevant", "too_short", count=size, needed=MIN_EVIDENCE_WORDS)
    navigation = navigation_kind(quote)
    if navigation:
        return refusal("relevant", "navigation", what=navigation)
    heading = keywords(context) | keywords(label)
    if terms and not (keywords(own) | heading) & set(terms):
        return refusal("relevant", "off_question", terms=as_written(terms, question))
    problem = claim_problem(claim, quote)
    return None if problem is None else refusal("relevant", "claim", problem=problem)


def as_written(terms: list[str], question: str, limit: int = 8) -> str:
    """Key terms as the question writes them ("attempts, moves"), never as stems ("mov")."""
    found = words(canonical(question).lower())
    written = {stem(word): word for word in reversed(found)}
    return ", ".join(dict.fromkeys(written.get(term, term) for term in terms[:limit]))


def claim_problem(claim: str, quote: str) -> str | None:
    """What a claim says that its quote does not (figures, scripts), in words, or None."""
    mixed = mixed_script(canonical(claim))
    if mixed:
        return f"writes {', '.join(mixed[:3])}, mixing letters of different scripts"
    problems = figure_problems(claim, [quote])
    if problems:
        said = [
            f"{item.figure}, {item.why.replace('the evidence', 'the quote')}"
            if item.why.startswith("which")
            else f'"{item.figure}" {item.why.replace("the evidence", "the quote")}'
            for item in problems[:3]
        ]
        return "states " + "; ".join(said)
    return None


# A list item "Label: what it is" whose label is a phrase (a linked title in an index): the
# label is the item's heading, the rest its content.
_LABEL = re.compile(r"^\s*([A-Z][^:\n.;!?_]{0,60}):\s+(\S.*)$")


def own_words(quote: str) -> tuple[str, str]:
    """(the quote's own text, the labels of its list items): in "Retries and backoff: what
    happens when processing fails." the label names a page, the rest is what the line says."""
    own, labels = [], []
    for line in quote.splitlines():
        item = _LABEL.match(line)
        if item is not None and len(item[1].split()) <= 8:
            labels.append(item[1])
            own.append(item[2])
        else:
            own.append(line)
    return "\n".join(own), " ".join(labels)


def navigation_kind(quote: str) -> str:
    """ "a table of contents" or "a list of headings" when the quote is one ("" otherwise):
    three or more short lines that are labelled entries describing pages, or bare headings."""
    lines = [line.strip() for line in quote.splitlines() if line.strip()]
    if len(lines) < 3:
        return ""
    entries = sum(1 for line in lines if _entry(line))
    headings = sum(1 for line in lines if _bare_heading(line))
    if entries * 3 >= len(lines) * 2:
        return "a table of contents"
    if headings * 3 >= len(lines) * 2:
        return "a list of headings"
    return ""


def _entry(line: str) -> bool:
    item = _LABEL.match(line)
    if item is None or len(item[1].split()) > 8 or len(item[2].split()) > 15:
        return False
    label = item[1]
    return " " in label.strip() or (label[:1].isupper() and label[1:].islower())


def _bare_heading(line: str) -> bool:
    words = line.split()
    return 0 < len(words) <= 6 and line[0].isupper() and line[-1] not in ".!?:;,"


# ---------------------------------------------------------------- figures


@dataclass(frozen=True)
class FigureProblem:
    figure: str  # as stated: "30 delivery attempts"
    why: str  # "which the evidence does not state", "but the evidence states 30 seconds ..."
    deferrable: bool = False  # the rules cannot decide (derived from the quotes): a verifier can


def figure_problems(
    text: str, quotes: Iterable[str], allowed: Iterable[str] = (), names: Iterable[str] = ()
) -> list[FigureProblem]:
    """Each figure of `text` that none of `quotes` states (see `workflows.quantities.matches`);
    `allowed` texts (the brief's questions) count as evidence, `names` (dates and versions of
    the pages read) may be named. A count of the items a quote lists is a figure it states."""
    quotes = [canonical(quote) for quote in quotes]
    allowed = [canonical(text) for text in allowed]
    each = [read(quote) for quote in quotes]
    known = [item for source in (*each, *(read(text) for text in allowed)) for item in source]
    named = set(names)
    named |= {part for name in named for part in date_parts(name)}  # a page's date names its year
    problems = [
        FigureProblem(figure, "which the evidence does not state")
        for figure in unread_figures(text, [*quotes, *allowed])
    ]
    for stated in read(canonical(text)):
        if any(matches(stated, item) for item in known):
            continue
        if stated.kind != "amount" and stated.name in named:
            continue
        if stated.kind == "amount" and (_listed(stated, quotes) or _of_the_research(stated)):
            continue
        if any(problem.figure == stated.text for problem in problems):
            continue
        # Only a value the evidence states nowhere may be derived from it; one it states with
        # another unit, qualifier or era is a decided mismatch.
        absent = not any(same_value(stated, item) for item in known)
        derived = stated.kind == "amount" and absent and _derived(stated, known)
        problems.append(FigureProblem(stated.text, mismatch(stated, known), derived))
    return problems


# Number forms the quantity reader does not read (scientific notation, hex, 1_000, a/b, a value
# after "="): the rules cannot compare them, so a text may state one only as a quote writes it.
_UNREAD = re.compile(
    r"(?<![\w.])(?:0x[0-9a-f]+|\d+(?:\.\d+)?e[+-]?\d+|\d+(?:_\d+)+|\d+(?:\.\d+)?/\d+(?:\.\d+)?)"
    r"(?![\w/])|(?<==)\s*-?\d+(?:\.\d+)?(?!\w|\.\d)",
    re.IGNORECASE,
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


def unread_figures(text: str, quotes: list[str]) -> list[str]:
    """The numbers of `text` in a form `read` does not read that no quote writes as they are."""
    found: list[str] = []
    for match in _UNREAD.finditer(_URL.sub(" ", canonical(text))):
        figure = match[0].strip()
        pattern = rf"(?<![\w.]){re.escape(figure)}(?![\w])"
        if figure not in found and not any(re.search(pattern, quote) for quote in quotes):
            found.append(figure)
    return found


def unsupported_figures(text: str, quotes: Iterable[str], allowed: str = "") -> list[str]:
    """The figures of `text` that none of `quotes` (nor `allowed`) states, as `text` states them."""
    return [problem.figure for problem in figure_problems(text, quotes, [allowed])]


def figures(text: str) -> set[str]:
    """The numbers `text` states, normalised ("1,000" and "1000" alike; "30.0" is "30";
    versions as written): amounts in their base unit, so 1 minute and 60 seconds meet."""
    return {
        f"{item.value.normalize():f}" if item.value is not None and not item.name else item.name
        for item in read(text)
    }


# What a report counts of its own research: "Q2 rests on one page", "two sources disagree".
# The host knows these (the independent-sources rule counts them); no quote states them.
_RESEARCH_NOUNS = frozenset("page source quote question sub-question finding".split())


def _of_the_research(stated: Quantity) -> bool:
    return not stated.unit and bool(set(stated.noun.split()) & _RESEARCH_NOUNS)


def _listed(stated: Quantity, quotes: list[str]) -> bool:
    """`stated` is a count of the items one of `quotes` lists (lines, or a; b; c, or a, b and c)."""
    if stated.unit or stated.qualifier != "exactly" or stated.value is None:
        return False
    return any(stated.value in listed_counts(quote) for quote in quotes)


_SERIES = re.compile(r"[^,;:.]+(?:,\s*[^,;:.]+)+,?\s+(?:and|or)\s+[^,;:.]+")


def listed_counts(quote: str) -> set[int]:
    """How many items `quote` lists, each way it may list them."""
    counts = set()
    lines = [line.strip() for line in quote.splitlines() if line.strip()]
    if len(lines) > 1:
        counts.add(len(lines))
        counts.add(len([line for line in lines if not line.endswith(":")]))
        counts.add(len(lines) - 1)  # a heading or an introduction first
    for part in re.split(r":\s", quote)[1:]:
        items = [item for item in part.split(";") if item.strip()]
        if len(items) > 1:
            counts.add(len(items))
    for series in _SERIES.finditer(quote):
        counts.add(series[0].count(",") + 1 - (1 if re.search(r",\s*(and|or)\s", series[0]) else 0))
    return counts


def _derived(stated: Quantity, known: list[Quantity]) -> bool:
    """`stated` is a sum, difference, product or ratio of two current figures its quotes state
    (3 attempts of 30 seconds: "90 seconds"): the rules cannot tell if that is right."""
    if stated.value is None:
        return False
    amounts = [  # current ones: an old release's figure adds nothing to today's
        (item.value, item.unit)
        for item in known
        if item.kind == "amount" and item.value and not item.era
    ]
    for left, left_unit in amounts:
        for right, right_unit in amounts:
            results = []
            if left_unit == right_unit == stated.unit:
                results += [left + right, left - right]
            if not right_unit and left_unit == stated.unit:  # 5 attempts of 30 seconds
                results += [left * right, left / right]
            if stated.value in results:
                return True
    return False


# ---------------------------------------------------------------- conflicts

_CONTEXT_WORDS = 4  # content words before a figure that say what it measures

Labelled = list[tuple[Quantity, set[str]]]


def _thing(quantity: Quantity) -> str:
    return quantity.unit or f"count:{quantity.noun}"


def disagreement(mine: Labelled, theirs: Labelled) -> tuple[str, str] | None:
    """Two quotes (`labelled`) that state a current figure of one kind about the same thing
    (they share a content word among the few before it, names aside) with different values,
    and where neither quote also states the other's value as current: what each says."""
    for left, left_context in mine:
        for right, right_context in theirs:
            if _thing(left) != _thing(right) or same_value(left, right):
                continue
            if not left_context & right_context:
                continue
            if _states(mine, right) or _states(theirs, left):
                continue
            return left.text, right.text
    return None


def labelled(text: str) -> Labelled:
    """The quote's current measured or counted figures (not those it ties to an older version),
    each with the content words just before it (names and units aside)."""
    text = canonical(text)
    context = [
        (match.start(), stem(match[0].lower()))
        for match in word_spans(text)
        if not match[0][0].isupper() and _context_word(match[0].lower())
    ]
    starts = [start for start, _ in context]
    result = []
    for quantity in read(text):
        if quantity.kind != "amount" or quantity.era or not (quantity.unit or quantity.noun):
            continue
        index, recent = bisect.bisect_left(starts, quantity.at), set[str]()
        while index > 0 and len(recent) < _CONTEXT_WORDS:
            index -= 1
            recent.add(context[index][1])
        result.append((quantity, recent))
    return result


def _context_word(word: str) -> bool:
    return len(word) > 1 and word not in STOPWORDS and not word.isdigit() and word not in _UNITS


_UNITS = frozenset("ms s sec second seconds min minute minutes h hour hours day days".split())


def _states(figures: Labelled, figure: Quantity) -> bool:
    return any(_thing(own) == _thing(figure) and same_value(own, figure) for own, _ in figures)


def states_both(text: str, first: str, second: str) -> bool:
    """`text` states the figure `first` states and the one `second` states (any era)."""
    mine = [item for item in read(text) if item.kind == "amount"]

    def said(figure: str) -> bool:
        wanted = [item for item in read(figure) if item.kind == "amount"]
        return any(
            _thing(own) == _thing(other) and same_value(own, other)
            for own in mine
            for other in wanted
        )

    return said(first) and said(second)


_DISAGREE = re.compile(
    r"(?i)\b(disagree\w*|conflict\w*|contradict\w*|differ\w*|inconsistent|discrepan\w*)\b"
)


def says_disagree(text: str) -> bool:
    return _DISAGREE.search(text) is not None


# ---------------------------------------------------------------- negation

_NEGATIONS = frozenset(
    "not no never cannot can't won't doesn't don't isn't aren't wasn't weren't nothing none "
    "neither nor without".split()
)
_CONTRASTS = ("instead of", "rather than")
# A quote negates with a value as well: "task_acks_late / Default: Disabled."
_NEGATIVE_VALUES = ("disabled", "false")
_CLAUSE_END = re.compile(r"[,;:.!?()]|\b(?:but|and then|while|whereas)\b")
# In a quote, an aside in brackets belongs to its clause ("not just before (the default
# behavior)" negates the default behaviour) and a line ends one (a table row, a definition).
_QUOTE_CLAUSE_END = re.compile(r"[,;:.!?\n]|\b(?:but|and then|while|whereas)\b")
_SCOPE_WORDS = 6
# A negation that states a condition, not a fact: "With nothing configured, ...", "with no
# broker set", "Without a timeout, ..." opening a sentence.
_CONDITION = re.compile(r"(?i)\bwith\s+$")


def _negation_pattern(words: Iterable[str]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(re.escape(word) for word in words) + r")\b")


_NEGATION = _negation_pattern((*_CONTRASTS, *_NEGATIONS))
_QUOTE_NEGATION = _negation_pattern((*_CONTRASTS, *_NEGATIONS, *_NEGATIVE_VALUES))


def negations(text: str) -> list[tuple[str, str, set[str]]]:
    """Each negation `text` states ("not", "never", "instead of" ...; not one that states a
    condition, "with nothing configured"): its word, the clause it governs as written (up to
    SCOPE_WORDS words), and that clause's content words."""
    text = canonical(text).replace("\u2019", "'")
    lowered = Canonical(text.lower())
    opens = {start for start, _ in sentences(lowered)}
    found = []
    for match in _NEGATION.finditer(lowered):
        before = lowered[: match.start()]
        opening = match.start() in opens or before.rstrip().endswith(":")
        if _CONDITION.search(before) or (match[1] == "without" and opening):
            continue
        shown = _governed(lowered[match.end() :], _CLAUSE_END)
        found.append((match[1], shown, keywords(Canonical(shown))))
    return found


def _governed(rest: str, clause_end: re.Pattern[str]) -> str:
    end = clause_end.search(rest)
    clause = rest[: end.start()] if end else rest
    return " ".join(clause.split()[:_SCOPE_WORDS])


def negated_in(quote: str) -> list[set[str]]:
    """The content words of what each negation of `quote` governs: the clause after it (an
    aside in brackets included), or, where nothing follows it in its clause, the line it ends:
    a value says "no" of what it stands beside ("Amazon SQS | Stable | No | No", "Default:
    Disabled.")."""
    text = Canonical(canonical(quote).replace("\u2019", "'").lower())
    found = []
    for match in _QUOTE_NEGATION.finditer(text):
        words = keywords(Canonical(_governed(text[match.end() :], _QUOTE_CLAUSE_END)))
        if not words:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            words = keywords(Canonical(text[start : end if end >= 0 else len(text)]))
        found.append(words)
    return found


def unsupported_negation(text: str, quotes: Iterable[str]) -> tuple[str, str] | None:
    """A negation of `text` that no quote shares (the first; as its word and what it governs):
    "never moves failing messages" when no quote negates moving. A negation governing nothing
    ("No." alone) is left to the verifier."""
    theirs = [words for quote in quotes for words in negated_in(quote)]
    for word, shown, scope in negations(text):
        if scope and not any(scope & other for other in theirs):
            return word, shown
    return None


# ---------------------------------------------------------------- what the limitations state


def stated_names(texts: Iterable[str]) -> set[str]:
    """The dates and versions `texts` state (as `workflows.quantities` names them)."""
    return {item.name for text in texts for item in read(text) if item.kind != "amount"}


def limitation_facts(limitations: str, quotes: Sequence[str]) -> list[str]:
    """The sentences of `limitations` that state a fact no recorded quote states. A sentence
    that names an evidence, question or source id or speaks of the research or its sources
    discloses; any other states a fact, and one recorded quote must hold all its content words
    but one (its figures are checked with the rest of the limitations)."""
    said = [keywords(canonical(quote)) for quote in quotes]
    facts: list[str] = []
    pieces = sentence_texts(canonical(limitations))
    for sentence in (Canonical(" ".join(text.split())) for text in pieces):
        words = keywords(sentence)
        if len(words) < FACT_WORDS or _DISCLOSES.search(sentence):
            continue
        if not any(len(words - quote) <= 1 for quote in said):
            facts.append(sentence)
    return facts


FACT_WORDS = 3  # "None identified." states nothing


# Words of a report about its own research and its sources, not about the subject.
_DISCLOSES = re.compile(
    r"(?i)\b(?:[EQS]\d+(?:\.P\d+)?|research\w*|investigat\w*|found|find|findings?|"
    r"record\w*|evidence|sources?|questions?|sub-questions?|cover\w*|verif\w*|check\w*|"
    r"confirm\w*|read|searched|search\w*|report\w*|answer\w*|unanswered|open|gaps?|scope|"
    r"disagree\w*|conflict\w*|differ\w*|contradict\w*|inconsistent|uncertain\w*|unclear|"
    r"outdated|pages?|documentation|docs?|blogs?|posts?|articles?|guides?|references?|manuals?|"
    r"release notes|mirrors?|authors?|published|written|sites?|website|forums?|changelog|"
    r"according)\b"
)
