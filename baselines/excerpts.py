"""What a question asks for, and which excerpt of the passages read answers it (pure).

Shared by the offline policy and the fixed pipeline. A question's *lead* words are its
distinctive words (`workflows.substance`) that are not generic; its *names* are what it writes
as code (`gc.disable`, `allow_nan`, `RLock`). An excerpt is whole sentences of one prose
paragraph (never a signature, a table row or code), scored by the lead words it and its heading
hold, by whether it sits under the heading or signature that defines the names (the text under
`json.dump(obj, indent=None)` is about dump, not indent), by the question's other words, and by
whether it opens its definition. A further source must be about what is asked, not a passing
mention of its words (`answers`). A reference entry's labelled value (`Default: | KeepAliveTimeout
5`, `name | Use: main | Default: 20`) is an excerpt of its own, judged by `_field_answers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import lru_cache

from workflows.contracts import DecideInput
from workflows.models import Question
from workflows.substance import (
    distinctive_words,
    evidence_problem,
    figures,
    keywords,
    stop_words,
)
from workflows.text import sentence_texts
from workflows.tools import SearchData

MIN_SHARED_KEYWORDS = 2
PROSE_STOPWORDS = 3
PROSE_WORDS = 3
LISTED_NAMES = 3  # names written as code in an opening that make it a list
OPENING_WORDS = 8  # a further source names what the question asks about this early
EXCERPT_CHARS = 320  # a quote grows by whole sentences of its paragraph until this long
# Words that frame a question rather than name its subject: never looked for with `find`.
GENERIC = frozenset(
    keywords(
        "happen happens difference between mean means work works purpose way behave behaves "
        "provide provides allow allows affect affects describe describes handle handles "
        # words any documentation uses for its subject: never the word that finds the answer
        "parameter parameters argument arguments function functions method methods object "
        "objects value values return returns returned module modules class classes attribute "
        "attributes option options use used using call called"
        # words that frame what is asked: "when the timeout occurs", "instead of random"
        " instead occur occurs addition turn turns off"
    )
)


# Framing words that name the relation a question asks about: its answer says it.
RELATIONS = frozenset(keywords("return allow provide"))


@dataclass(frozen=True)
class Passage:
    source_id: str
    text: str
    section: str
    title: str = ""  # of its page
    offset: int = 0  # where it starts in its page's text
    site: str = ""  # the host its page is on (`git-scm.com`): the name of what the site is about


@dataclass(frozen=True)
class Wanted:
    """What a question's evidence should hold: `terms` (its distinctive words, as the host checks
    relevance), `lead` (those that are not generic, most specific first: what a strong match
    holds and what `find` looks for first) and `topic` (its other words: a tie-break, and what
    `find` looks for next)."""

    terms: list[str]
    lead: list[str]
    topic: list[str]
    named: list[str] = field(
        default_factory=list
    )  # names of lead words, as the question writes them
    subject: list[str] = field(default_factory=list)  # the brief's own words
    asked: list[str] = field(default_factory=list)  # its generic words ("return"): a tie-break
    written: list[str] = field(default_factory=list)  # its code as written (`gc.collect`)
    codes: list[str] = field(default_factory=list)  # every name it writes as code, shared or not
    qualifiers: list[str] = field(default_factory=list)  # of those, what only qualifies a name
    content: list[str] = field(default_factory=list)  # every word but its framing ("do", "return")
    shared: list[str] = field(default_factory=list)  # of those, what another sub-question asks too
    question: str = ""  # as written: the host checks a quote's own words against it
    whole: str = ""  # of a part of a question asking two things (`asked_parts`), the question

    @property
    def name_words(self) -> set[str]:
        """The words of every name it writes as code (`lru_cache`, `functools` ...)."""
        return {word for name in self.codes for word in keywords(name)}

    @property
    def things(self) -> list[str]:
        """The names it writes as code that are not only qualifiers (`patch` of
        `unittest.mock.patch`): what it asks about."""
        return [name for name in self.codes if name not in self.qualifiers]


@dataclass(frozen=True)
class Excerpt:
    """Whole sentences of one paragraph of a passage: the quote, and its best sentence."""

    passage_id: str
    quote: str
    claim: str
    context: str  # the section heading and the paragraph before the quote's
    score: int  # lead words in the quote and its section heading
    own: int  # lead words in the quote itself: what says the quote is about them
    topic: int  # topic words in the quote
    named: int  # names its heading or the signature above it holds (it defines them)
    defines: bool  # it sits under the definition of every name (of either of names compared)
    opens: bool  # it opens the first paragraph of prose under a heading or signature
    asked: int  # the question's generic words in the quote ("return")
    above: str = ""  # its heading and the signature above it, argument lists aside
    title: str = ""  # its page's title
    lead_in: str = ""  # the sentences of its paragraph before it
    signature: str = ""  # the signature it sits under, argument lists aside
    site: str = ""  # the host of its page
    field: Field | None = None  # the labelled value it quotes, when it is a table's or a list's


@dataclass(frozen=True)
class Field:
    """A labelled value of a reference table or list: `Default: | LimitRequestBody 1073741824`
    under a directive's heading, `smtp_accept_max | Use: main | Default: 20`, `Default: 1209600`
    under a setting's heading. `name` is the row's own name cell, if it has one."""

    label: str
    value: str
    name: str = ""


def running_sentences(text: str) -> list[str]:
    """The sentences of `text` read as running prose, white space collapsed: a blank line or a
    list item's line break ends no sentence (a definition list's terms stay with their prose)."""
    return sentence_texts(" ".join(text.split()))


def wanted_words(question: Question, request: DecideInput) -> Wanted:
    known = written_as_code(question.text, request)
    terms = question_terms(question, request, known)
    lead = [term for term in terms if term not in GENERIC] or terms
    topic = sorted(keywords(question.text) - set(terms) - GENERIC, key=_specificity)
    codes = names(question.text, known)
    named = [name for name in codes if keywords(name) & set(lead)]
    written = _code_tokens(question.text, known)
    subject = sorted(keywords(request.brief.question) - GENERIC, key=_specificity)
    asked = sorted(keywords(question.text) & GENERIC)
    return Wanted(
        question=question.text,
        lead=lead,
        terms=terms,
        topic=topic,
        named=named,
        subject=subject,
        asked=asked,
        written=[code.partition("=")[0] for code in written],
        codes=codes,
        qualifiers=_qualifiers(question.text, known),
        content=sorted(keywords(question.text) - GENERIC, key=_specificity),
        shared=sorted(
            keywords(question.text)
            & {
                word
                for other in request.brief.questions
                if other.id != question.id
                for word in keywords(other.text)
            }
        ),
    )


_CODE_CHARACTERS = re.compile(r"\w[._=(\[]|['\"`]\w")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"['\"`]([^'\"`]*)['\"`]")


def written_as_code(text: str, request: DecideInput) -> frozenset[str]:
    """The words of `text` with capitals inside (`RLock`, `PostgreSQL`) that the corpus itself
    writes as code: a search result's title or snippet calls one (`RLock()`), qualifies it
    (`threading.RLock`) or qualifies with it (`RLock.acquire`). The corpus, not the casing, says
    which is a name."""
    shown = " ".join(
        f"{hit.title} {hit.snippet}"
        for entry in request.transcript
        if isinstance(entry.result.data, SearchData)
        for hit in entry.result.data.results
    )
    tokens = {token.strip("?!,;:.") for token in text.split()}
    return frozenset(
        token
        for token in tokens
        if _NAME.fullmatch(token)
        and any(c.isupper() for c in token[1:])
        and re.search(rf"(?:\w\.{token}|{token}(?:\(|\.\w))", shown) is not None
    )


def names(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """The names `text` writes as code, as written: of an identifier with dots, underscores, an
    `=` or a call (`gc.disable`, `lru_cache`, `allow_nan=False`), quoted (`'store_true'`), or
    in lower camel case (`basicConfig`), each of its names (`gc`, `disable`)."""
    found: list[str] = []
    for token in _code_tokens(text, known):
        # `frozen=True` names frozen; `action='store_true'` names action and store_true.
        name, _, value = token.partition("=")
        found += _parts(name) + _NAME.findall(" ".join(_QUOTED.findall(value)))
    return unique(found)


def _qualifiers(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """The names `text` writes only before a dot, qualifying another (`unittest` and `mock` in
    `unittest.mock.patch`)."""
    heads, lasts = [], []
    for token in _code_tokens(text, known):
        parts = _parts(token.partition("=")[0].partition("(")[0])
        heads += parts[:-1]
        lasts += parts[-1:]
    return [name for name in unique(heads) if name not in lasts]


_POSSESSIVE = re.compile(r"(?<=[A-Za-z])['\u2019]s$")
_CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z]\w*$")


def _code_tokens(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """The tokens of `text` written as code: with dots, underscores, an `=`, a call or quotes,
    or camel case that opens in lower case (`basicConfig`). A possessive (`table's`) is a word,
    and capitals inside a word (`LRU`, `PostgreSQL`, `RLock`) do not make it code: acronyms and
    product names are written that way, unless the corpus writes them as code (`known`)."""
    tokens = (_POSSESSIVE.sub("", _unwrapped(token)) for token in text.split())
    return [
        token
        for token in tokens
        if _CODE_CHARACTERS.search(token)
        or _CAMEL.match(token)
        or token in known
        or option_token(token.partition("=")[0])
    ]


def _unwrapped(token: str) -> str:
    """`token` without the sentence's punctuation and the parentheses of the prose around it:
    "(the main message_size_limit)?" writes `message_size_limit`, "(KeepAliveTimeout)"
    `KeepAliveTimeout`; a call keeps its own (`lru_cache()`)."""
    token = token.strip("?!,;:.")
    if token.startswith("(") and token.endswith(")"):
        token = token[1:-1]
    if token.startswith("(") and token.count("(") > token.count(")"):
        token = token[1:]
    if token.endswith(")") and token.count(")") > token.count("("):
        token = token[:-1]
    return token.strip("?!,;:.")


# A command-line option as written (`-x`, `--no-commit`, `--depth=1`): a name whole, dashes
# and all (`--no-commit` is not "no" and "commit"; `-x` is not the letter x).
_OPTION_TOKEN = re.compile(r"--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


def option_token(token: str) -> bool:
    """`token` is a command-line option, whole (`-x`, `--no-commit`)."""
    return _OPTION_TOKEN.fullmatch(token) is not None


def _parts(token: str) -> list[str]:
    """The names a code token writes: an option whole, else each identifier in it."""
    option = token.partition("=")[0]
    return [option] if _OPTION_TOKEN.fullmatch(option) else _NAME.findall(token)


def code_words(wanted: Wanted) -> list[str]:
    """Each name the question writes as code, qualifiers aside (`re` of `re.search`), as the
    word `find` looks for (`lru_cach`), the most specific first."""
    words = [min(keywords(name), key=_specificity) for name in wanted.things if keywords(name)]
    return sorted(unique(words), key=_specificity)


def names_itself(name: str, text: str) -> bool:
    """`text` holds `name` as a word that is not the qualifier of another (`RLock`, not in
    `RLock.acquire`, which is about acquire)."""
    return holds_name(name, re.sub(rf"{re.escape(name)}\.(?=[A-Za-z_])", " ", text))


def holds_name(name: str, text: str) -> bool:
    """`text` holds `name` as a word: exactly as written when it has capitals (`Optional` is not
    "optional"), in any case otherwise (`disable` opens a sentence as "Disable") but only where
    no dot comes before it (`re.Match`, a class, is not `match`; `re.match` is). A hyphen and a
    letter after it go on with another name (`--prune-tags` is not `--prune`)."""
    escaped = re.escape(name)
    end = r"(?![A-Za-z0-9_]|-[A-Za-z0-9])"
    if re.search(rf"(?<![A-Za-z0-9_]){escaped}{end}", text) is not None:
        return True
    return name == name.lower() and (
        re.search(rf"(?<![A-Za-z0-9_.]){escaped}{end}", text, re.IGNORECASE) is not None
    )


def _specificity(word: str) -> tuple[bool, int, str]:
    """Identifiers (`lru_cache`) first, then longer words."""
    return (not re.search(r"[_\d.]", word), -len(word), word)


def question_terms(
    question: Question, request: DecideInput, known: frozenset[str] = frozenset()
) -> list[str]:
    """The question's distinctive words, most specific first."""
    brief = request.brief
    words = distinctive_words(question.text, brief.question, [q.text for q in brief.questions])
    # What the policy looks for leaves out the brief's own words too: the host accepts evidence
    # holding any key term, so this narrower set only steers the search (as it always did). A
    # name the question asks about stays, though the brief names it too (the default of the
    # `max_deliveries` a brief is about is not a question about "default").
    own = {word for name in names(question.text, known) for word in keywords(name)}
    own -= {word for name in _qualifiers(question.text, known) for word in keywords(name)}
    topic = keywords(brief.question) - own
    narrow = [word for word in words if word not in topic]
    # Framing and light words alone ("given" of "when no mode option is given") find nothing:
    # then the brief's words this question alone uses ("mode") are what it asks about.
    if not set(narrow) - GENERIC - LIGHT:
        narrow = [word for word in words if word not in GENERIC | LIGHT] + narrow
    words = narrow or sorted(keywords(question.text))
    # Light words last: what `find` looks for first is what the question is about.
    return sorted(unique(words), key=lambda word: (word in LIGHT, _specificity(word)))


def strong_needed(terms: list[str]) -> int:
    """Distinctive words a passage holds to be taken at once: all of up to three, else 2/3."""
    return len(terms) if len(terms) <= 3 else -(-2 * len(terms) // 3)


def best_excerpt(
    wanted: Wanted,
    passages: dict[str, Passage],
    used: set[str],
    among: set[str],
    needed: int,
    about: Callable[[Excerpt, Wanted], bool] | None = None,
) -> Excerpt | None:
    """The best unused excerpt of the given sources' passages, if it (with its section heading)
    holds `needed` of the lead words (at most all there are) or sits under the definition of
    what the question names, and would be accepted as evidence. With `about` (a further
    source), it must also name what the question names, or else share the brief's subject.
    The best holds the most lead words, in itself more than in its heading, and what defines
    the names counts double; then topic words. Strong matches are taken at once; weak ones only
    once `find` has nothing better."""
    needed = max(1, min(needed, len(wanted.lead)))
    scored = []
    for order, excerpt in every_excerpt(wanted, passages, among):
        enough = excerpt.score >= needed or excerpt.defines
        if about is not None:
            enough = enough and about(excerpt, wanted)
        if not enough or " ".join(excerpt.quote.split()) in used:
            continue
        problem = evidence_problem(
            excerpt.quote, excerpt.context, excerpt.claim, wanted.terms, wanted.question
        )
        if problem is None:
            value = excerpt.score + excerpt.own + excerpt.asked + 2 * excerpt.named
            value = 2 * (value + excerpt.opens) + excerpt.topic
            rank = (value, -order)
            scored.append((rank, excerpt))
    return max(scored, key=lambda entry: entry[0])[1] if scored else None


def quote_settles(wanted: Wanted, passages: dict[str, Passage], source_id: str, quote: str) -> bool:
    """A recorded `quote` of `source_id`, read again as the excerpt it was: does one of its
    sentences, on its own, answer the question (`says_answer`)? A quote no passage read holds
    does not."""
    return quote_passes(wanted, passages, source_id, quote, says_answer)


def quote_passes(
    wanted: Wanted,
    passages: dict[str, Passage],
    source_id: str,
    quote: str,
    test: Callable[[Excerpt, Wanted], bool],
) -> bool:
    """A recorded `quote` of `source_id`, read again as the excerpt it was, passes `test`."""
    quote = " ".join(quote.split())
    for _, excerpt in every_excerpt(wanted, passages, {source_id}):
        if " ".join(excerpt.quote.split()) == quote and test(excerpt, wanted):
            return True
    return False


def every_excerpt(
    wanted: Wanted, passages: dict[str, Passage], among: set[str] | None = None
) -> Iterator[tuple[int, Excerpt]]:
    """Every excerpt the policy could quote from `passages` (of the sources `among`, when
    given), each with its passage's place among them."""
    for order, (passage_id, passage) in enumerate(passages.items()):
        if among is not None and passage.source_id not in among:
            continue
        for excerpt in _excerpts(passage_id, passage, wanted, *_before(passages, passage_id)):
            yield order, excerpt


BACK_PASSAGES = 4  # passages read back for the signature a long definition sits under
_LEAD_IN = re.compile(r"^[^\n]*[A-Za-z]:\s*$")  # "Example:", "For instance:" (not "--depth::")


def _before(passages: dict[str, Passage], passage_id: str) -> tuple[str, str]:
    """The text of the passage before this one (read), and the signature the passage sits
    under when that is further back: a long definition's later passages are still its own
    (prose and its examples between, under the same heading)."""
    passage = passages[passage_id]
    before = passages.get(previous_id(passage_id))
    current, back = before, 0
    while current is not None and back < BACK_PASSAGES and current.section == passage.section:
        rows: list[str] = []  # the signature nearest above, with the table rows above it
        for paragraph in reversed(current.text.split("\n\n")):
            # an example inside the definition ("Example:", then code) goes on
            if _signature(paragraph) and not _LEAD_IN.search(paragraph):
                rows.append(paragraph)
            elif rows:
                break
        if rows:
            entry = [row for row in rows if _entry_row(row, rows[0], passage.section)]
            terms = [rows[0]]
            for row in rows[1:]:
                if not (_terms(row) and _terms(terms[-1])):
                    break
                terms.append(row)
            found = entry[-1] if entry else "\n".join(reversed(terms))
            return (before.text if before else ""), found
        back += 1
        current = passages.get(previous_id(_id_back(passage_id, back)))
    return (before.text if before else ""), ""


def _terms(paragraph: str) -> bool:
    """One line naming a term as code or an option (`--no-autosquash`, `-n`), not a heading
    ("Module contents") nor a table's labelled row."""
    line = paragraph.strip()
    if not line or "\n" in line or fields(line):
        return False
    return _OPTION_TOKEN.match(line) is not None or _CODE_CHARACTERS.search(line) is not None


def _entry_row(row: str, later: str, section: str) -> bool:
    """Of a reference table's rows, `row` is the first to name the entry its heading names, and
    the `later` one is a labelled row after it: `Syntax: | DirectoryIndex local-url ...`, not
    `Default: | DirectoryIndex index.html` nor `Module: | mod_dir`, under the "DirectoryIndex
    Directive" heading. It stays the signature the prose below sits under (what a default row
    says is not what every sentence under it says)."""
    words = section.split()
    return bool(words and row and fields(later)) and holds_name(words[0], row)


def _id_back(passage_id: str, back: int) -> str:
    source, _, number = passage_id.rpartition(".P")
    return f"{source}.P{int(number) - back}" if number.isdigit() else ""


def previous_id(passage_id: str) -> str:
    """`S1.P4` -> `S1.P3`: the passage before this one in its source."""
    source, _, number = passage_id.rpartition(".P")
    return f"{source}.P{int(number) - 1}" if number.isdigit() else ""


def answers(excerpt: Excerpt, wanted: Wanted) -> bool:
    """Worth citing as a further source: it says what the question asks, not a passing mention
    of its words. Outside what its parentheses hold ("(such as heapq.nlargest())"):
    - it is about what the question names as code: the heading or signature it sits under, or
      its opening words, hold each name ("The new contextlib.suppress context manager ...", not
      "... or datetime.astimezone methods"), and the opening neither lists names nor leads with
      another; of two names compared, either; a qualifier (`typing` of `typing.Protocol`, not a
      "Vectorcall Protocol") may be the page's title, the section's or named earlier in the
      paragraph; with no name, they hold the question's most specific word;
    - with that heading or signature it holds every other word the question asks about, its
      framing aside: a page using the words for something else ("reuse a socket without waiting
      for its timeout to expire", for `subprocess.run`'s timeout) leaves one out. With names to
      pin it down, one word may be said otherwise, unless it is the brief's own subject;
    - it says the relation asked for ("What does heapq.nlargest return?": "return");
    - comparing, it says more than what the names compared share (`_shares`: "match() and
      search() return None")."""
    if excerpt.field is not None:  # a further source's labelled value: the same test
        return _field_answers(excerpt, excerpt.field, wanted)
    said = _aside(excerpt.quote)
    # An opening that lists names ("partialmethod(), weakref.finalize(), profile.runcall() ...",
    # "Manager's methods also include Lock(), RLock(), and Semaphore()") is about none of them;
    # one led by another name ("BZ2File performance is improved by removing internal RLock") is
    # about that one. Both read as written, before the aside drops the calls' parentheses.
    ours = set(wanted.codes)
    written = [_written_names(opening, ours) for opening in _openings(excerpt.quote)]
    elsewhere = [len(w) >= LISTED_NAMES or _led_by_another(w, ours) for w in written]
    opening = " ".join(
        o for n, o in enumerate(_openings(said)) if not (n < len(elsewhere) and elsewhere[n])
    )
    # A qualifier (`unittest` of `unittest.mock.patch`) may be the page's, the section's or the
    # paragraph's ("The new textwrap module ... The fill(text, width) function returns ..."); a
    # "glob" heading is not about `Path.glob` because a later aside names `pathlib.Path.glob()`.
    where = f"{excerpt.title} {excerpt.context} {excerpt.lead_in}"
    codes = wanted.things
    defined = _aside(excerpt.above)  # a usage line's optional parts are not what it defines
    qualified = all(holds_name(name, f"{where} {defined} {opening}") for name in wanted.qualifiers)
    # Of two names compared ("textwrap.wrap and textwrap.fill"), a sentence may be about one
    # and its paragraph name the other just before it.
    about_all = all if len(codes) < 2 else any
    if codes:
        about = qualified and about_all(
            holds_name(name, defined) or names_itself(name, opening) for name in codes
        )
    else:
        about = bool(wanted.content) and wanted.content[0] in keywords(f"{defined} {opening}")
    whole = f"{defined} {said}"
    named = all(holds_name(name, f"{whole} {excerpt.lead_in}") for name in codes)
    # "How long" asks for a quantity the excerpt states, not for the word.
    quantity = quantity_asked(wanted.question)
    if quantity and not _QUANTITY.search(said):
        return False
    missing = (
        set(wanted.content)
        - keywords(
            f"{whole} {excerpt.lead_in if len(codes) > 1 else ''} "
            f"{' '.join(wanted.qualifiers) if qualified else ''}"
        )
        - quantity
    )
    # What the question names pins down what it is about; one of its other words may then be
    # said otherwise ("remove whole directory trees" for what `shutil.rmtree` deletes), unless
    # it is the brief's own subject (`csv`, for a sentence on `newline` in C).
    spare = bool(wanted.codes) and len(missing) == 1 and not missing & set(wanted.subject)
    # "What does heapq.nlargest return?" asks what it returns, not what else it does.
    related = set(wanted.asked) & RELATIONS <= keywords(said)
    reversed_too = keeps_reversal(wanted, excerpt.quote)
    # a question comparing is answered by a contrast, not by what both share
    contrasted = not _COMPARES.search(wanted.question) or (
        not _shares(said, wanted) and _sets_apart(said, defined, wanted)
    )
    return (
        excerpt.own > 0
        and about
        and named
        and (not missing or spare)
        and related
        and reversed_too
        and contrasted
    )


CORROBORATING = 2  # words of a settled answer a further source's sentence says again


def corroborates(
    excerpt: Excerpt,
    wanted: Wanted,
    answer: set[str],
    cited: list[str],
    values: AbstractSet[str] = frozenset(),
    settled: str = "",
) -> bool:
    """A further source that says again what the question's settled answer says: one of its
    sentences names what the question names (as code; with no code, its most specific word),
    neither among a list of names nor after another, and holds CORROBORATING of the answer's
    own words (`answer`: those neither the question nor the brief uses), or a value it states
    (`values`: "The default KeepAliveTimeout of 5 seconds ..."). "In addition, the
    module has two new functions nlargest() and nsmallest() that use heaps to find the N largest
    or smallest values in a dataset" says again "Return a list with the n largest elements from
    the dataset". A copy of a quote already cited (`cited`: the same page in another rendering)
    is not another source. A sentence that reverses where the settled answer (`settled`) does
    not ("no longer builds a list") says otherwise, and one naming together the things a
    question compares says what they share ("match() and search() return None ..."); a value
    is said again only with a word the question asks besides its names ("The default
    IdleTimeout of 5 seconds", not "Setting IdleTimeout below 5 seconds is discouraged"). A
    sentence opening by pointing back ("This means that ...") names what the sentence before
    it names, when that one names nothing else ("Unlike nlargest(), sorted() builds a list.
    Such lists ..." is about sorted())."""
    if excerpt.field is not None or not wanted.lead:
        return False
    if not keeps_reversal(wanted, excerpt.quote):
        return False
    if any(copies(excerpt.quote, quote) for quote in cited):
        return False
    ours = set(wanted.codes)
    sentences = running_sentences(excerpt.quote)
    for number, sentence in enumerate(sentences):
        written = _written_names(sentence, ours)
        if len(written) >= LISTED_NAMES or _led_by_another(written, ours):
            continue
        words = keywords(_aside(sentence))
        # a sentence opening by pointing back ("This means that ...") names what the one
        # before it names, when that one names nothing else
        before = sentences[number - 1] if number and _POINTS_AT_OPENING.match(sentence) else ""
        if not _holds_ours(words, sentence, wanted) and not (
            before and _names_only_ours(before, wanted, ours)
        ):
            continue
        if _negates(sentence, words & answer) and not _REVERSAL.search(settled):
            continue
        # a question comparing is answered again by a contrast, not by what both share
        if _COMPARES.search(wanted.question) and _shares(sentence, wanted):
            continue
        named = wanted.name_words | {wanted.lead[0]}
        valued = bool(figures(sentence) & values and words & set(wanted.content) - named)
        if len(words & answer) >= CORROBORATING or valued:
            return True
    return False


def _holds_ours(words: set[str], sentence: str, wanted: Wanted) -> bool:
    """`sentence` (its words, asides aside: `words`) names what the question names: as code,
    or with no code, by its most specific word."""
    if wanted.things:
        return all(holds_name(name, sentence) for name in wanted.things)
    return wanted.lead[0] in words


def _names_only_ours(sentence: str, wanted: Wanted, ours: set[str]) -> bool:
    """`sentence` names what the question names and nothing else, not in a list of names."""
    written = _written_names(sentence, ours)
    if len(written) >= LISTED_NAMES or any(not set(_parts(w)) & ours for w in written):
        return False
    return _holds_ours(keywords(_aside(sentence)), sentence, wanted)


COPIED = 6  # words a sentence has at least, for one found whole in another quote to be a copy


def _negates(sentence: str, shared: set[str]) -> bool:
    """A reversal comes before the first word `sentence` shares with the answer: it says the
    answer is not so ("no longer builds a list: it yields the largest elements"), where one
    after it qualifies ("... in a dataset without the expense of a full sort")."""
    reversal = _REVERSAL.search(sentence)
    if reversal is None:
        return False
    for match in re.finditer(r"\S+", sentence):
        if keywords(match.group()) & shared:
            return reversal.start() < match.start()
    return True


def copies(quote: str, other: str) -> bool:
    """A sentence of `quote` (of COPIED words or more) is found whole in `other`, word for word,
    case and punctuation aside: the same text (another rendering of a page, `git-rebase.txt`
    beside `git-rebase.html`), not another source saying it. A release note restating the
    reference in words of its own ("A new hashlib.pbkdf2_hmac() function provides ...") is
    another source."""
    return _found_whole(quote, other) or _found_whole(other, quote)  # either may be cut short


def _found_whole(quote: str, other: str) -> bool:
    text = " " + " ".join(re.findall(r"[a-z0-9]+", other.lower())) + " "
    for sentence in running_sentences(quote):
        words = re.findall(r"[a-z0-9]+", sentence.lower())
        if len(words) >= COPIED and f" {' '.join(words)} " in text:
            return True
    return False


# Words that reverse what a question asks ("without keeping them alive", "not a ZIP archive",
# "every key except"): stop words to `keywords`, so counted apart.
_REVERSAL = re.compile(
    r"\b(?:not|no|without|except|unless|never|cannot|neither|nor)\b|n['\u2019]t\b", re.IGNORECASE
)


# "when no mode option is given", "if LOGIN_URL is not set": what it asks is the default, which
# a sentence may say as such ("defaults to --mixed", "If <mode> is omitted").
_UNSET_VERBS = r"(?:given|set|specified|configured|provided|passed|supplied)"
_UNSET_ASKED = re.compile(
    rf"\b(?:not|no)\s+(?:[\w-]+\s+){{0,3}}?(?:(?:is|are)\s+)?{_UNSET_VERBS}\b"
    # "when PASSWORD_HASHERS is left alone", "out of the box", "if I configure none"
    r"|\b(?:is|are)\s+left\s+(?:alone|unset|empty|untouched|as\s+it\s+is)\b"
    r"|\bout\s+of\s+the\s+box\b"
    r"|\b(?:configure|set|specify|give|pass)\s+(?:none|nothing)\b",
    re.IGNORECASE,
)
_UNSET_SAID = re.compile(r"\b(?:defaults?|omitted|unset|absent|unspecified)\b", re.IGNORECASE)
# what a thing starts with, which is its default ("the root logger is created with level WARNING")
_STARTS_WITH = re.compile(
    r"\b(?:initially|(?:is|are)\s+(?:created|initiali[sz]ed)\s+(?:with|to|as)"
    r"|starts?\s+(?:with|as|at|out))\b",
    re.IGNORECASE,
)


_CONDITION = re.compile(r"\b(?:when|if|unless|while|where|once)\b[^,;?]*$", re.IGNORECASE)
# What a question asks by is worked out once per question, not for every sentence the test
# reads; a worker lives long, so the questions kept are bounded.
QUESTIONS_CACHED = 256


@lru_cache(maxsize=QUESTIONS_CACHED)
def _unset_clauses(question: str) -> tuple[tuple[int, int], ...]:
    """Where `question` asks for a default by a clause ("when LOGIN_URL is not set", "when
    PASSWORD_HASHERS is left alone", "out of the box"): a negated verb only as a condition
    ("Which headers are not passed to the upstream?" asks what is left out, not a default)."""
    return tuple(
        match.span()
        for match in _UNSET_ASKED.finditer(question)
        if not re.match(r"(?:not|no)\b", match.group(), re.IGNORECASE)
        or _CONDITION.search(question[: match.start()])
    )


@lru_cache(maxsize=QUESTIONS_CACHED)
def _unset_words(question: str) -> frozenset[str]:
    """The words of the clauses by which `question` asks for a default, names aside: a
    sentence saying the default answers them by saying "default", a `Default:` value by its
    label."""
    clauses = " ".join(question[start:end] for start, end in _unset_clauses(question))
    return frozenset(
        keywords(clauses) - {word for name in names(clauses) for word in keywords(name)}
    )


def _without_unset(question: str) -> str:
    """`question` without the clauses by which it asks for a default."""
    for start, end in reversed(_unset_clauses(question)):
        question = f"{question[:start]} {question[end:]}"
    return question


_LEFT_NAME = re.compile(
    r"\b(?:when|if)\s+(?:the\s+)?(\S+)\s+(?:setting\s+|option\s+)?(?:is|are)\s+"
    rf"(?:not\s+{_UNSET_VERBS}|left)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=QUESTIONS_CACHED)
def _left_at_default(question: str) -> frozenset[str]:
    """The names `question` leaves at their default ("when PASSWORD_HASHERS is left alone",
    "when LOGIN_URL is not set"): the setting whose default is asked about, not its subject."""
    # (not an option: what a command does without `--rebase-merges` is that option's to say)
    return frozenset(
        name
        for match in _LEFT_NAME.finditer(question)
        for name in names(match.group(1))
        if not option_token(name)
    )


def _left_unnamed(statement: str, own: set[str], wanted: Wanted) -> set[str]:
    """The words of the names a sentence saying the default need not say: "By default, Django
    uses the PBKDF2 algorithm ..." answers what is used while a name is left at its default
    ("when PASSWORD_HASHERS is left alone") without naming it, where it names nothing else as
    code and says itself what else the question asks, but for one word (not a remark on another
    entry's default that its context makes look like the question's)."""
    left = _left_at_default(wanted.question)
    if not left or not _UNSET_SAID.search(statement) or _code_tokens(statement):
        return set()
    unnamed = {word for name in left for word in keywords(name)}
    # (each word of the name but the name written whole is the sentence's, in some form:
    # "hash" for PASSWORD_HASHERS' "hasher", not "a connect timeout" for READ_TIMEOUT)
    whole = {word for name in left for word in keywords(name.replace("-", "_")) if "_" in word}
    if any(not _said_in_some_form(part, own) for part in unnamed - whole):
        return set()
    asked = set(wanted.content) - unnamed - _unset_words(wanted.question) - LIGHT
    asked -= quantity_asked(wanted.question)
    return unnamed if len(_unsaid(asked - own, own)) <= 1 else set()


def _said_in_some_form(word: str, said: set[str]) -> bool:
    """`said` holds `word` or a form of it one holds the other's opening of ("hash" and
    "hasher")."""
    return word in said or any(
        min(len(word), len(other)) >= 4 and (other.startswith(word) or word.startswith(other))
        for other in said
    )


def keeps_reversal(wanted: Wanted, quote: str) -> bool:
    """A question that reverses what it asks is answered by a sentence that reverses too: "how
    do I keep a reference without keeping the object alive" is not answered by a sentence on
    keeping it alive. One whose only reversal is that something is not given asks for the
    default: a sentence saying the default, or what happens when it is omitted, answers it."""
    if _REVERSAL.search(wanted.question) is None or _REVERSAL.search(quote) is not None:
        return True
    rest = _UNSET_ASKED.sub(" ", wanted.question)
    return _REVERSAL.search(rest) is None and _UNSET_SAID.search(quote) is not None


_LEADING_CLAUSE = frozenset(
    "when if although though while unlike after before once unless because since".split()
)


def _written_names(opening: str, names: set[str]) -> list[str]:
    """What `opening` writes as code, acronyms ("PEP 485 adds the math.isclose() function"),
    version numbers ("Changed in version 3.7:") and abbreviations ("e.g.") aside, unless they are
    among `names` (`VERBOSE`)."""
    written = []
    for token in _code_tokens(opening):
        parts = set(_parts(token))
        if parts & names or (any(len(part) > 1 for part in parts) and not token.isupper()):
            written.append(token)
    return written


def _led_by_another(written: list[str], names: set[str]) -> bool:
    """The first name written is none of `names` (nor qualified by one)."""
    return bool(written) and not set(_parts(written[0])) & names


def _openings(text: str) -> list[str]:
    """Where a sentence says what it is about: its first OPENING_WORDS words and, after a
    leading subordinate clause ("When cancelling the task due to a timeout, asyncio.wait_for()
    will now wait ..."), the first words of the main clause."""
    words = text.split()
    openings = [" ".join(words[:OPENING_WORDS])]
    if words and words[0].lower() in _LEADING_CLAUSE:
        comma = next((n for n, word in enumerate(words) if word.endswith(",")), None)
        if comma is not None:
            openings.append(" ".join(words[comma + 1 : comma + 1 + OPENING_WORDS]))
    return openings


def _aside(text: str) -> str:
    """`text` without what its parentheses hold (a call's empty `()` included) and without a
    synopsis's optional parts (`[-u|--include-untracked]`, `[<pathspec>...]`): a command's
    usage lists its options, it says nothing of them."""
    previous = None
    while previous != text:
        previous, text = text, _SYNOPSIS.sub(" ", _ARGUMENTS.sub(" ", text))
    return text


_SYNOPSIS = re.compile(r"\[[-<][^\[\]]*\]|\[[^\[\]]*\|[^\[\]]*\]|\[[a-z]+-\]")


def _excerpts(
    passage_id: str, passage: Passage, wanted: Wanted, before: str = "", further: str = ""
) -> list[Excerpt]:
    """For each prose sentence holding a lead word (or opening a paragraph whose heading or
    previous paragraph, a signature, holds one; or any, under the definition of a name the
    question asks about): it and the sentences after it in its paragraph, up to EXCERPT_CHARS
    (a sentence, not a signature, a table row or code)."""
    lead = set(wanted.lead)
    excerpts = []
    # A passage may open under a signature that ends the passage before it.
    previous = before.rsplit("\n\n", 1)[-1]
    signature = previous if _signature(previous) else ""
    opens = bool(signature)
    # the table's row naming the entry, not its last row; a definition list's terms, not its last
    if signature and (
        _entry_row(further, signature, passage.section) or further.endswith(f"\n{signature}")
    ):
        signature = further
    # or under one further back, its prose continuing: not its opening
    signature = signature or further
    for paragraph in _split_terms(passage.text.split("\n\n")):
        # What the paragraph sits under: the heading and the paragraph before (a signature).
        context, previous = f"{passage.section} {previous}", paragraph
        if _TERMS_ONLY.fullmatch(paragraph.strip()):  # a labelled list's terms: what follows
            signature, opens = paragraph, True  # defines them (their words are no prose)
            continue
        if not _prose(paragraph):
            # Code defines nothing: the prose after a session is not the session's definition,
            # but it is still the definition's above it (an example inside it).
            if _signature(paragraph) and not _entry_row(signature, paragraph, passage.section):
                # a definition list's terms one after another (`--autosquash`, then
                # `--no-autosquash`; `-u`, `--include-untracked`, `--no-include-untracked`) all
                # name what the prose below defines
                last = signature.rsplit("\n", 1)[-1]
                joined = opens and _terms(last) and _terms(paragraph)
                signature = f"{signature}\n{paragraph}" if joined else paragraph
            opens = _signature(paragraph)
            continue
        # What the heading or the signature above names, its argument list aside: the text under
        # `dump(obj, indent=None)` is about dump, not indent.
        above = _ARGUMENTS.sub(" ", f"{passage.section} {signature}")
        under = Under(
            context=context,
            heading=lead & keywords(context),
            defined={name for name in wanted.named if holds_name(name, above)},
            opens=opens,
            above=above,
            title=passage.title,
            signature=_ARGUMENTS.sub(" ", signature),
            site=passage.site,
        )
        # an option with no word to hold (`-c`) is defined where its signature opens the prose
        wordless = under.opens and any(holds_name(name, above) for name in wordless_names(wanted))
        opens = False
        sentences = running_sentences(paragraph)
        for first, sentence in enumerate(sentences):
            heads = first == 0 and (under.heading or wordless)
            if not (lead & keywords(sentence) or heads or under.defined):
                continue
            # one that points back ("The size of these chunks ...") is quoted with the
            # sentence it points to: a quote says what it is about itself
            start = first - 1 if first and _points_back(sentence) else first
            taken = sentences[start : first + 1]
            for following in sentences[first + 1 :]:
                if len(" ".join(taken)) >= EXCERPT_CHARS:
                    break
                taken.append(following)
            lead_in = " ".join(sentences[:start])
            excerpts.append(_excerpt(passage_id, taken, under, wanted, start == 0, lead_in))
    return excerpts + _field_excerpts(passage_id, passage, wanted, before)


_TERMS = re.compile(r"^(?:\S+::\s+)+")  # a labelled list's terms: `-n:: --no-commit::`
_TERMS_ONLY = re.compile(r"(?:\S+::\s*)+")


def _split_terms(paragraphs: list[str]) -> list[str]:
    """A labelled list's item as written in plain text (`--prune:: Before fetching, remove
    ...`): its terms are the signature the text after them defines, a paragraph of their own."""
    split = []
    for paragraph in paragraphs:
        terms = _TERMS.match(paragraph)
        rest = paragraph[terms.end() :] if terms else ""
        split += [terms.group().strip(), rest] if terms and rest.strip() else [paragraph]
    return split


FIELD_LABEL_WORDS = 3
FIELD_ROWS_BEFORE = 3  # rows of its table quoted before a labelled value (description, syntax)
_FIELD = re.compile(r"^([A-Za-z][A-Za-z -]{0,30}):\s+(?:\|\s+)?(\S.{0,200})$")


def fields(line: str) -> list[Field]:
    """The labelled values a one-line row or list item holds: `Label: | value` (a two-cell
    row), `name | Label: value | Label: value` (a row of cells after its name) or `Label: value`
    (a line), each label a short phrase of letters."""
    cells = [cell.strip() for cell in line.split(" | ")]
    found = []
    if len(cells) >= 2 and ":" not in cells[0]:
        matches = [(cells[0], _FIELD.match(cell)) for cell in cells[1:]]
    else:
        matches = [("", _FIELD.match(line))]
    for name, match in matches:
        if match is not None and len(match[1].split()) <= FIELD_LABEL_WORDS:
            found.append(Field(match[1], match[2], name))
    return found


def _field_excerpts(
    passage_id: str, passage: Passage, wanted: Wanted, before: str = ""
) -> list[Excerpt]:
    """For each labelled value of a row or line whose label the question uses ("Default"): the
    table's rows up to it and the first sentence of the prose after, as one quote (a reference
    entry's description, syntax and default; or a row and the definition under it)."""
    asked = keywords(wanted.question)
    asked |= keywords("default") if _unset_words(wanted.question) else set()
    paragraphs = passage.text.split("\n\n")
    excerpts = []
    rows: list[str] = []  # the rows before this one of the table it is in
    previous = before.rsplit("\n\n", 1)[-1]
    for number, paragraph in enumerate(paragraphs):
        line = " ".join(paragraph.split())
        found = fields(line) if "\n" not in paragraph.strip() else []
        if not found and " | " not in line:
            rows, previous = [], paragraph
            continue
        for item in found:
            if not keywords(item.label) or not keywords(item.label) <= asked:
                continue
            after = paragraphs[number + 1] if number + 1 < len(paragraphs) else ""
            sentences = running_sentences(after)
            described = sentences[:1] if after and _prose(after) and not fields(after) else []
            above = f"{passage.section} {item.name}"
            # Three labelled lines read as a table of contents to the host: the value with the
            # row before it, or alone, is a quote it takes, the entry's rows above it read as
            # its lead-in (what it is of: "Description: | Amount of time the server will wait").
            table = rows[-FIELD_ROWS_BEFORE:]
            counts = [len(table)]
            if len(table) + 1 + len(described) >= 3:
                counts += [1, 0]  # a table row at least: three lines need two before
            for count in dict.fromkeys(counts):
                quote = "\n".join([*table[len(table) - count :], line, *described])
                lead_in = "\n".join(table[: len(table) - count])
                excerpts.append(
                    _field_excerpt(
                        passage_id, passage, wanted, item, quote, above, previous, lead_in
                    )
                )
        rows.append(line)
    return excerpts


def _field_excerpt(
    passage_id: str,
    passage: Passage,
    wanted: Wanted,
    field: Field,
    quote: str,
    above: str,
    previous: str,
    lead_in: str = "",
) -> Excerpt:
    lead = set(wanted.lead)
    words = keywords(quote)
    defined = {name for name in wanted.named if holds_name(name, above)}
    return Excerpt(
        passage_id,
        quote,
        " ".join(f"{field.name} {field.label}: {field.value}".split())[:400],
        f"{passage.section} {previous}",
        score=len(lead & (words | keywords(above))),
        own=len(lead & words),
        topic=len(set(wanted.topic) & words),
        named=len(defined),
        defines=bool(wanted.named) and len(defined) == len(wanted.named),
        opens=False,
        asked=len(set(wanted.asked) & words),
        above=above,
        title=passage.title,
        signature=field.name,
        site=passage.site,
        field=field,
        lead_in=lead_in,
    )


def _field_answers(excerpt: Excerpt, field: Field, wanted: Wanted) -> bool:
    """A labelled value answers a question that asks for what its label names ("the default
    of LimitRequestBody": `Default: | LimitRequestBody 1073741824`), never one that compares or
    reverses; of what the question names (as code, or written with inner capitals), the heading,
    the row's name or the value; every other word the question asks in the quote, the heading,
    the page's title or site, or the ground its sub-questions share; a quantity where it asks
    how many; and a value that tells something the question does not."""
    question = wanted.question
    unset = _unset_words(question)
    if _COMPARES.search(question) or _REVERSAL.search(_without_unset(question)):
        return False
    subject = f"{excerpt.above} {field.value}"
    if any(not holds_name(name, subject) for name in wanted.codes):
        return False
    asked = keywords(question)
    entry_name = _entry_name(excerpt, field)
    if entry_name is not None and not entry_name & asked:
        return False  # another entry's value: `ErrorLog`'s default is not what `Options` has
    capitalised = [token for token in question.split() if inner_capital(token)]
    if not keywords(" ".join(capitalised)) <= keywords(subject):
        return False
    quantity = quantity_asked(question)
    if quantity and not _QUANTITY.search(field.value):
        return False
    ground = set(wanted.shared) & shown_words(excerpt.context)
    # the entry's rows above the quote say what its value is of, as a quote would
    entry = f"{excerpt.quote} {excerpt.lead_in}"
    known = keywords(entry) | shown_words(f"{subject} {excerpt.title} {excerpt.site}")
    # The entry is the one the question writes as code by name (`message_size_limit |
    # Use: main | Default: 50M`): one word of it may be said otherwise ("the maximum size of
    # message that Exim will process" for "accept"), never its lead words.
    missing = set(wanted.content) - quantity - LIGHT - unset - known - ground
    pinned = any(
        holds_name(name, field.name) or _opening(excerpt.above) == name.lower()
        for name in wanted.things
    )  # (or the entry's heading is the name: `Default: '/accounts/login/'` under LOGIN_URL)
    if len(missing) > (1 if pinned else 0) or missing & set(wanted.lead):
        return False
    told = figures(field.value) - figures(question)
    told |= keywords(field.value) - asked - keywords(field.name)
    return bool(told)


def _entry_name(excerpt: Excerpt, field: Field) -> set[str] | None:
    """The words of the name of the entry a labelled value belongs to, where the entry names
    itself: its row's name (`message_size_limit | Use: main | Default: 50M`), or the name its
    heading opens with when the value, or another row of its table, opens with it too
    (`Default: | ErrorLog logs/error_log` under 'ErrorLog Directive', `Syntax: | RLimitCPU
    seconds` above 'Default: | Unset' under 'RLimitCPU Directive'). A question asking for that
    value says one of them ("the default of the Options directive" does not ask for ErrorLog's).
    None where the value names no entry (`Default: 1209600` under its setting's heading, a
    `Default:` row under a section of several options, "A Host: header ..." under "Phase 2"):
    nothing to hold it to. Of a name with parts (`smtp_accept_queue`) any part is said: a
    limit, not a test of which option."""
    if said := keywords(field.name):
        return said
    heading = _opening(next((token for token in excerpt.above.split() if keywords(token)), ""))
    rows = f"{excerpt.lead_in}\n{excerpt.quote}".splitlines()  # the quote holds the value's row
    values = [item.value for row in rows for item in fields(row.strip())]
    if heading and any(_opening(value) == heading for value in values):
        return keywords(heading)
    return None


def _opening(text: str) -> str:
    """The first word of `text`, lower case, without the punctuation around it."""
    first = text.split()[:1]
    return first[0].strip(",;:.()[]").lower() if first else ""


_INNER_CAPITAL = re.compile(r"^[A-Za-z]+[a-z][A-Z]\w*")


def inner_capital(token: str) -> bool:
    """`LimitRequestBody`, `AllowOverride`: a word written with capitals inside (a name, though
    the corpus may never write it as code)."""
    return _INNER_CAPITAL.search(token.strip("?!,;:.()'\"`")) is not None


_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def name_parts(text: str, asked: str) -> set[str]:
    """The words of each word with capitals inside that `text` writes and `asked` writes too
    (`LimitRequestBody`: limit, request, body), as `keywords` has the parts of `allow_nan`: what
    a heading defining a name the question asks about says. Only a name the question writes: a
    product's name is no phrase of its own (PowerShell is not "shell", FreeBSD not "free")."""
    tokens = {token.strip("?!,;:.()[]<>'\"`=") for token in text.split()}
    spelled = [token for token in tokens if inner_capital(token) and holds_name(token, asked)]
    return keywords(" ".join(part for token in spelled for part in _CAMEL_PART.findall(token)))


@dataclass(frozen=True)
class Under:
    """What a paragraph sits under: its heading and the paragraph before (`context`), the lead
    words they hold (`heading`), the names the heading or signature above defines, and whether
    it is the first paragraph of prose after them (`opens`: a definition's own words)."""

    context: str
    heading: set[str]
    defined: set[str]
    opens: bool
    above: str
    title: str = ""  # of the page
    signature: str = ""  # the signature above, argument lists aside
    site: str = ""  # the host of the page


def wordless_names(wanted: Wanted) -> list[str]:
    """The names the question asks about that hold no word to look for (`-c`, `-x`)."""
    return [name for name in wanted.things if not keywords(name)]


def _excerpt(
    passage_id: str, taken: list[str], under: Under, wanted: Wanted, first: bool, lead_in: str
) -> Excerpt:
    lead = set(wanted.lead)
    quote = " ".join(taken)
    words = keywords(quote)
    claim = max(taken, key=lambda s: (len(lead & keywords(s)), -taken.index(s)))
    return Excerpt(
        passage_id,
        quote,
        claim[:400],
        under.context,
        score=len(lead & (words | under.heading)),
        own=len(lead & words),
        topic=len(set(wanted.topic) & words),
        asked=len(set(wanted.asked) & words),
        named=len(under.defined),
        # of two names compared, the definition of either says half the answer (a qualifier's,
        # the module's introduction, does not)
        defines=bool(wanted.named)
        and (
            bool(under.defined & set(wanted.things))
            if len(wanted.things) > 1
            else len(under.defined) == len(wanted.named)
        ),
        opens=under.opens and first,
        above=under.above,
        signature=under.signature,
        title=under.title,
        lead_in=lead_in,
        site=under.site,
    )


_ARGUMENTS = re.compile(r"\([^()]*\)")


def _signature(text: str) -> bool:
    """A line naming what the prose after it defines: neither prose nor code."""
    return bool(text.strip()) and not _prose(text) and not _code(text)


def _prose(text: str) -> bool:
    """Sentences rather than a signature, a table row or code: some stop words, or a short
    sentence ("Disable automatic garbage collection.")."""
    stops, words = stop_words(text)
    sentence = words >= PROSE_WORDS and text.rstrip().endswith((".", "!", "?"))
    return (stops >= PROSE_STOPWORDS or sentence) and not _code(text)


_CODE_LINE = re.compile(
    r"\s{2,}\S|#|(?:import|from)\s+[\w.]+(?:\s+import\b.*)?$|(?:def|class)\s+\w+\s*[(:]"
    r"|(?:if|elif|else|for|while|with|try|except|finally|return)\b.*:$|[\w.\[\]'\"]+\s*=\s"
    r"|.*[{};]$"
)


def _code(text: str) -> bool:
    """A session or listing: a prompt line (`>>>`, `$ `), or most lines that read as code
    (indented, assignments, keywords opening a statement, comments, braces)."""
    lines = [line for line in text.split("\n") if line.strip()]
    if any(line.startswith((">>>", "$ ")) for line in lines):
        return True
    return len(lines) > 1 and 2 * sum(bool(_CODE_LINE.match(line)) for line in lines) >= len(lines)


def unique(words: list[str]) -> list[str]:
    return list(dict.fromkeys(words))


_HYPHEN = re.compile(r"(?<=[A-Za-z0-9])-(?=[A-Za-z])")


def shown_words(text: str) -> set[str]:
    """The words a title, an address, a host or a snippet shows: its `keywords` and the parts of
    its hyphenated names too (`git-stash(1)` shows stash, `git-scm.com` git), as a reader sees
    them; a question's own hyphenated word (`include-untracked`) stays whole among them."""
    words = keywords(text) | keywords(_HYPHEN.sub(" ", text))
    # and the runs of its parts (`tool-cherry-pick(1)` shows cherry-pick)
    for word in [word for word in words if "-" in word]:
        parts = word.split("-")
        words |= keywords(
            " ".join(
                "-".join(parts[i:j])
                for i in range(len(parts))
                for j in range(i + 2, len(parts) + 1)
            )
        )
    return words


# ---------------------------------------------------------------- the strongest test

# Framing words that carry what is asked (`What does heapq.nlargest return?`, "when the timeout
# occurs"): the answering sentence says them too, unlike the rest of the framing words.
CARRIED = frozenset(keywords("return returns allow allows provide provides occur occurs affect"))
# A question comparing two things ("the difference between", "instead of random"), and the
# words by which an English sentence contrasts: such a question is answered by a sentence that
# contrasts.
_COMPARES = re.compile(
    r"\b(?:differ\w*|versus|vs|instead|rather|compared?|prefer\w*|between)\b", re.IGNORECASE
)
# Words that set one thing against another. A sentence naming the things compared together
# ("match() and search() return None", "valid for `pop` and `apply`") says what they share
# unless it says one of these too ("only at the beginning of the string, whereas search()"):
# a plain negation ("no", "not") is not one.
_AGAINST = (
    r"but|while|whereas|unlike|instead|rather|however|than|differ\w*|contrast|opposed|versus|vs"
    r"|except"
)
_CONTRASTS = re.compile(
    rf"\b(?:not|no|only|prefer\w*|neither|otherwise|{_AGAINST})\b|n['\u2019]t\b|;",
    re.IGNORECASE,
)
_SETS_AGAINST = re.compile(rf"\b(?:{_AGAINST}|depend\w*|compar\w*)\b|;", re.IGNORECASE)


def _shares(statement: str, wanted: Wanted) -> bool:
    """`statement` says what things the question compares share: it names two of them in one
    list or one subject joined by "and" or "or", or by commas between three or more ("match()
    and search() return None", "valid for `apply`, `drop`, `pop`"), and says no word that sets
    one against the other."""
    groups = _compared(wanted)
    if len(groups) < 2 or _SETS_AGAINST.search(statement):
        return False
    for joined in _JOINED.finditer(statement):
        found = [_ITEM_TRIM.sub("", item).lower() for item in _ITEM.findall(joined.group())]
        # a list: joined by "and" or "or", or of three items or more ("After pop, apply ..."
        # is two clauses)
        if not _AND_OR.search(joined.group()) and len(found) < 3:
            continue
        if sum(1 for group in groups if group & set(found)) >= 2:
            return True
    return False


def _sets_apart(statement: str, defined: str, wanted: Wanted) -> bool:
    """Of two things the question compares, `statement` sets one against the other: a contrast
    word stands between a mention of one and a mention of the other ("match() checks ... only
    at the beginning of the string, while search() ..."), the sentence opens setting what
    follows against ("Unlike drain(), purge() ...", not a "While" that tells a time) and names
    both, or it sits under the definition of one and says the other ("Like pop, but do not
    remove ..." under `apply`; the strongest test asks a contrast word of it besides, a further
    source does not: "A recursive lock must be released by the thread that acquired it" under
    `multiprocessing.RLock`). A contrast about one alone ("Otherwise, a new RLock object is
    created", "a call to Lock.acquire(), RLock.acquire() ... while the main thread is blocked")
    does not. With fewer than two things found to compare, nothing to check."""
    groups = _compared(wanted)
    if len(groups) < 2:
        return True
    tokens = [
        (match.start(), _ITEM_TRIM.sub("", match.group()).lower())
        for match in _ITEM.finditer(statement)
    ]

    def mentions(group: set[str]) -> list[int]:
        return [start for start, token in tokens if token in group]

    contrasts = [match.start() for match in _CONTRASTS.finditer(statement)]
    # or it opens setting what follows against ("Unlike pop, apply ...", "Compared to --bare")
    opens = _OPENS_AGAINST.match(statement.lstrip()) is not None
    above = {token.lower() for token in _WORD.findall(defined)}
    for mine, theirs in (groups[:2], groups[1::-1]):
        first, then = mentions(mine), mentions(theirs)
        if mine & above and then:
            return True  # under one's definition, the other said
        if first and then and (opens or any(min(first) < c < max(then) for c in contrasts)):
            return True
    return False


def _compared(wanted: Wanted) -> list[set[str]]:
    """The things a question compares, each as the words that tell it from the others (lower
    case): the names it writes as code (`re.match`, `re.search`: match, search), else the words
    of either side of "between ... and ...", "... differ from ..." ("git stash apply differ
    from git stash pop": apply, pop)."""
    if len(wanted.things) >= 2:
        return [{found[-1].lower()} for name in wanted.things if (found := _NAME.findall(name))]
    sides = _COMPARED.search(wanted.question)
    if sides is None:
        return []
    one, other = (side for side in sides.groups() if side is not None)
    words = [
        {token.lower() for token in _WORD.findall(side) if keywords(token)} for side in (one, other)
    ]
    told = [
        {word for word in mine if not keywords(word) <= keywords(" ".join(theirs))}
        for mine, theirs in (words, words[::-1])
    ]
    return told if all(told) else []


# what opens a sentence setting what follows against: "Unlike pop, ...", "Compared to --bare"
# (not "While a drain() call is running, ...": a time)
_OPENS_AGAINST = re.compile(
    r"(?:unlike|compared|in\s+contrast|as\s+opposed|contrary|whereas|differently\s+from)\b",
    re.IGNORECASE,
)
# either side of a comparison the question makes, up to where it goes on ("in a LogFormat
# string", "when adding floats")
_SIDE_END = r"(?=[?,;]|\s+(?:in|when|for|while|with|if)\s|$)"
_COMPARED = re.compile(
    rf"\bbetween\s+(.+?)\s+and\s+(.+?){_SIDE_END}"
    rf"|\b(?:(?:does|do|is|are)\s+(.+?)|(\S+))\s+differs?\s+from\s+(.+?){_SIDE_END}",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# one item of a list as prose writes it: a word or a name, as code or not (`pop`, match(), --bare)
# (ending on a letter or digit: the full stop after "... push and pop." is not the name's)
_ITEM = re.compile(r"`?-*[A-Za-z_](?:[\w.-]*\w)?(?:\(\))?`?")
_ITEM_TRIM = re.compile(r"^[`-]+|(?:\(\))?`?$|^.*\.(?=[A-Za-z_])")
# (starting where a token starts: a long token is not tried from each of its characters)
_JOINED = re.compile(
    rf"(?<![\w.`-]){_ITEM.pattern}(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)"
    rf"(?:the\s+|an?\s+)?{_ITEM.pattern})+"
)
_AND_OR = re.compile(r"\s(?:and|or)\s")


# "How many attempts", "how long": the answer is a quantity, not the word "many".
_QUANTITY_ASKED = re.compile(
    r"\bhow\s+(many|much|long|old|often|large|big|far|soon)\b", re.IGNORECASE
)
_QUANTITY = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty"
    r"|thirty|forty|fifty|sixty|hundred|thousand|million|once|twice|single|double)\b",
    re.IGNORECASE,
)


# what "how long" asks of: a duration the answer states ("How long does the cookie last?":
# "31449600 (approximately 1 year, in seconds)")
_LASTS = "last live stay remain persist"
# (as the verb "how long" asks with, ending its clause: not "How long does a live migration
# take?")
_LASTING = {
    verb: re.compile(
        r"\bhow\s+long\s+(?:does|do|did|will|would|can|could|should|may|might)\b[^?]*?"
        rf"\b{verb}\b\s*(?:[?,;]|$|\b(?:by|in|on|for|after|before|when|if|once|with|without"
        r"|until|at)\b)",
        re.IGNORECASE,
    )
    for verb in _LASTS.split()
}


@lru_cache(maxsize=QUESTIONS_CACHED)
def quantity_asked(question: str) -> frozenset[str]:
    """The words of "how many / how long" a question asks with: its answer is a quantity (and
    of "how long", the verb of a duration: "last", "live", "stay")."""
    asked = _QUANTITY_ASKED.findall(question)
    lasts = [verb for verb, lasting in _LASTING.items() if lasting.search(question)]
    return frozenset(keywords(" ".join(asked + lasts)))


# Light verbs carry no content of their own ("the calls made by", "when given a dictionary").
LIGHT = frozenset(
    keywords("make makes made making give gives given giving get gets got take takes taken")
)
INFORMS = 2  # content words a sentence holds that neither the question nor its heading holds
_VALUE = re.compile(r"=\s*(['\"])(.*?)\1")
_USED_FOR = re.compile(r"\bused\s+(?:for|to|as)\b", re.IGNORECASE)
_USE_SAID = re.compile(r"\bused\s+(?:for|to|as|with|in)\b", re.IGNORECASE)


_OPENS, _CLOSES = "['\"\u2018\u201c]", "['\"\u2019\u201d]"  # quotes, straight or curly
_QUOTED_TERM = re.compile(f"{_OPENS}(.+){_CLOSES}")


def _opens_quoted(statement: str, value: str) -> bool:
    """`statement` opens with `value` in quotes (`'store_true' and 'store_false' - ...`)."""
    return re.match(f"{_OPENS}{re.escape(value)}{_CLOSES}", statement) is not None


def written_values(question: str) -> list[str]:
    """The values `question` sets a name to (`nargs='+'`, `action='store_true'`), quoted as it
    quotes them (`'+'`), then as the other quotes would (`"+"`): a page may write either."""
    swap = {"'": '"', '"': "'"}
    return [
        f"{mark}{value}{mark}"
        for quote, value in _VALUE.findall(question)
        if value
        for mark in (quote, swap[quote])
    ]


def says_answer(excerpt: Excerpt, wanted: Wanted) -> bool:
    """The policy's strongest test: one sentence of the quote, on its own, answers the question
    (or, for a question asking two things joined by ", and", one sentence for each, in order).

    - It is prose (not a table row) and keeps a reversal the question makes ("without").
    - It holds every word the question asks about: its lead words in the sentence itself; the
      names it writes as code there or in the definition the sentence sits under (the heading
      or signature above); its other words, and what only qualifies a name, there or in the
      page's title; and the framing words that carry what is asked ("return", "occur").
    - Of what the question names as code, it is about one: it sits under its definition, or
      opens with it (neither listing names nor led by another name).
    - A question that asks about nothing but one name ("What does shlex.quote do?") is answered
      by the sentence that opens its definition, not by a remark about it further on.
    - A question comparing ("the difference between", "instead of") is answered by a sentence
      that contrasts.
    - A value it writes (`nargs='+'`) is in the sentence, or is the term its list entry opens
      with ("'+'. Just like '*', ...").
    - It says something the question and its heading do not: at least INFORMS words of its
      own, a leading label ("Changed in version 3.5:") aside; a "no" to a yes-or-no question
      says it by its negation.
    - A version the question pins to a name ("Django 3.2") is written there or in the heading.
    - A default asked by a clause ("when LOGIN_URL is not set", "when PASSWORD_HASHERS is left
      alone", "out of the box") is said by "default" (or a `Default:` value), the clause's own
      words aside; the name left alone need not be said by a sentence saying the rest itself.
    - "How long does it last" is said by a duration, not the word "last".
    - "Default" is said by what a thing starts with ("is created with level WARNING"); an
      aside the question makes (", its default,") is not asked; a value it sets ("set to 0")
      is in the sentence.
    """
    if excerpt.field is not None:
        return _field_answers(excerpt, excerpt.field, wanted)
    if _answering(excerpt, wanted):
        return True
    # A question asking two things ("What does time.monotonic return, and is it affected by
    # system clock updates?") is answered part by part, each by a sentence, in the order it
    # asks them (one sentence may answer both).
    parts = asked_parts(wanted)
    if len(parts) == 1:
        return False
    start = 0
    for part in parts:
        numbers = [number for number in _answering(excerpt, part) if number >= start]
        if not numbers:
            return False
        start = numbers[0]
    return True


_AND = re.compile(r"[,;]\s+and\s+")
# a clause that asks (not a list's last item: "-a, -b, and -c"): a wh-word or an auxiliary verb
_ASKS = re.compile(
    r"^(?:(?:for|in|to|with|at|on|by|from)\s+)?(?:what|which|how|when|where|why|who|whom|whose|"
    r"is|are|was|were|does|do|did|can|could|will|would|should|has|have|may|must)\b",
    re.IGNORECASE,
)


def asked_parts(wanted: Wanted) -> list[Wanted]:
    """The questions `wanted` asks, each with its own words: two where it joins two clauses
    with ", and" and each asks a lead word or a name of its own; else itself."""
    clauses = _AND.split(wanted.question)
    if len(clauses) != 2 or not _ASKS.match(clauses[1]):
        return [wanted]
    parts = [_part(wanted, clause) for clause in clauses]
    return parts if all(part.lead or part.things for part in parts) else [wanted]


def _words_kept(wanted: Wanted, keep: Callable[[str], bool]) -> Wanted:
    """`wanted` with only the words `keep` keeps in its word lists (its names as they are)."""

    def kept(items: list[str]) -> list[str]:
        return [item for item in items if keep(item)]

    return replace(
        wanted,
        terms=kept(wanted.terms),
        lead=kept(wanted.lead),
        topic=kept(wanted.topic),
        asked=kept(wanted.asked),
        content=kept(wanted.content),
    )


def _part(wanted: Wanted, clause: str) -> Wanted:
    """What `wanted` asks in `clause`: its words and names that the clause holds. A clause
    naming nothing ("is it affected by ...") is about what the other names: it keeps the
    question's names; and a version the question pins stays pinned (`whole`)."""
    words = keywords(clause)
    names = any(holds_name(code, clause) for code in wanted.codes)

    def written(items: list[str]) -> list[str]:
        return [item for item in items if holds_name(item, clause)] if names else items

    return replace(
        _words_kept(wanted, words.__contains__),
        named=written(wanted.named),
        written=written(wanted.written),
        codes=written(wanted.codes),
        qualifiers=written(wanted.qualifiers),
        question=clause,
        whole=wanted.question,
    )


def _answering(excerpt: Excerpt, wanted: Wanted) -> list[int]:
    """The numbers of the quote's sentences that, each on its own, answer what `wanted` asks."""
    sentences = running_sentences(excerpt.quote)
    return [
        number
        for number, sentence in enumerate(sentences)
        if _sentence_answers(
            sentence,
            excerpt,
            wanted,
            # the definition's opening, or the sentence after it that points back to it
            # ("Usually the command creates commits. This flag applies the changes ...")
            first=excerpt.opens and (number == 0 or (number == 1 and _goes_on(sentence, wanted))),
            before=sentences[number - 1] if number else "",
        )
    ]


# A sentence that points back ("It", "This option", "The size of these chunks", "Such a
# value") is about what the sentence before it names: it is quoted with that one.
_POINTS_AT = (
    r"^(?:(?:if|when|once|unless|while|because|since|as)\s+)?"
    r"(?:it|its|they|their|this|these|such)\b"
)
_POINTS_BACK = re.compile(
    _POINTS_AT + r"|^(?:\S+\s+){0,4}(?:this|these|such)\s+[a-z]+", re.IGNORECASE
)
# only at its opening ("If it ...", "This setting ..."; not "Unlike these limits, ...")
_POINTS_AT_OPENING = re.compile(_POINTS_AT, re.IGNORECASE)


# a conditional clause of one word, its subject and verb left out ("When not possible,",
# "If omitted,", "If so,")
_ELLIPTIC = re.compile(r"^(?:when|if|where|unless|once)\s+(?:not\s+)?[a-z]+\s*,", re.IGNORECASE)


_DOUBLED = re.compile(r"([bdgmnprt])\1$")


def _unsaid(missing: set[str], said: set[str]) -> set[str]:
    """The words of `missing` that `said` does not hold in another inflection: "setting" (stem
    `sett`) is said by "set", "stopped" (`stopp`) by "stop"."""
    return {
        word
        for word in missing
        if not _DOUBLED.search(word) or _DOUBLED.sub(r"\1", word) not in said
    }


def _points_back(sentence: str) -> bool:
    """`sentence` opens by pointing back to what the sentence before it named."""
    return _POINTS_BACK.match(_LEADING_LABEL.sub("", sentence, count=1)) is not None


_SETTING = re.compile(r"\b([A-Za-z_]\w*[_.][\w.]*|[a-z]+[A-Z]\w*)\s+=\s+(?=[\w'\"])")


def _symbols(question: str) -> list[str]:
    """What `question` writes in symbols alone (`**`, `'<'`, `$`), quotes and sentence
    punctuation aside, and the `=` of a setting written with its value (`ports = 465`)."""
    question = _SETTING.sub(r"\1=", question)
    tokens = (token.strip("?!,;:.()").strip("'\"`") for token in question.split())
    return [token for token in tokens if token and not re.search(r"[\w]", token)]


# a note labelled with the version it came in ("Changed in version 3.5:", "New in Django 3.1:",
# "Deprecated since version 3.4:")
_VERSION_NOTE = re.compile(
    r"(?:[A-Za-z]+:\s+)?(?:changed|new|added|deprecated|removed)\s+(?:in|since)\s+"
    r"(?:version\s+|(?-i:[A-Z])[\w-]*\s+)?\d[\w.]*(?:,[^:]{0,60})?:",
    re.IGNORECASE,
)
_ASKS_CHANGE = re.compile(
    r"\b(?:version\w*|since|chang\w*|deprecat\w*|default\w*)\b|\d\.\d", re.IGNORECASE
)
# a sentence that opens by sending the reader elsewhere
_POINTER = re.compile(
    r"(?:(?:also\s+)?see|refer\s+to|consult)\s+(?:also\b|the\b|(?-i:[A-Z`'\"\u201c]))"
    r"|for\s+(?:(?:more|further|additional|full|complete)\s+)?(?:details|information|examples)\b",
    re.IGNORECASE,
)
_LEADING_LABEL = re.compile(r"^[^\s:]+(?:\s+[^\s:]+){0,3}:\s+(?=\S)")  # up to four words


# A number the question writes in digits in its prose (`to 0`, `= 465`), not a call's arguments
# (`itemgetter(1, 2)`) nor a version pinned to a name (`Django 3.2`)
_CALL = re.compile(r"[\w.]\([^()]*\)")
_DIGITS = re.compile(r"(?<![\w.~])\d+(?:\.\d+)*(?![\w.])")


# an aside a question makes ("What does MaxConnectionsPerChild set to 0, its default, mean?")
_QUESTION_ASIDE = re.compile(r",\s+(?:its|the)\s+default\s*,|\((?:its|the)\s+default\)")
_SET_TO = re.compile(r"\b(?:set|sets|setting)\s+(?=to\s+\d)")  # a value it sets: "set to 0"
_VALUE_IS = r"(?:\b(?:is|are|be|of|to|at)|=)\s+{}(?![\d.])"  # "is 0", "= 0", "set to 0"


def _numbers_asked(question: str) -> list[str]:
    return _DIGITS.findall(_CALL.sub(" ", _VERSIONED.sub(" ", question)))


def _names_another(text: str, names: set[str]) -> bool:
    """`text` writes a name (as code, or with an inner capital) none of whose words is one of
    `names`: something else a sentence after it may point to."""
    for token in text.split():
        token = token.strip("?!,;:.()[]'\"`")
        if (inner_capital(token) or _code_tokens(token)) and not keywords(token) & names:
            return True
    return False


def _goes_on(sentence: str, wanted: Wanted) -> bool:
    """`sentence` points back to the entry's opening and says a word the question asks besides
    its names ("This flag applies the changes necessary to cherry-pick ...", not "This is not
    what most scripts expect")."""
    named = wanted.name_words
    return _points_back(sentence) and bool(keywords(sentence) & set(wanted.content) - named)


def _quantity_aside(sentence: str, wanted: Wanted) -> bool:
    asides = re.findall(r"\(([^()]*)\)", _LEADING_LABEL.sub("", sentence, count=1))
    named = wanted.name_words
    return any(
        _QUANTITY.search(aside) and keywords(aside) & set(wanted.content) - named
        for aside in asides
    )


def _says_number(number: str, sentence: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(number)}(?!\.?\d)", sentence) is not None


def _sentence_answers(
    sentence: str, excerpt: Excerpt, wanted: Wanted, *, first: bool, before: str = ""
) -> bool:
    if _row(sentence, excerpt) or not keeps_reversal(wanted, sentence):
        return False
    unlabelled = _LEADING_LABEL.sub("", sentence, count=1)  # "Changed in version 3.5:" aside
    # a sentence sending the reader elsewhere ("See the section ...", "For more details on the
    # available flags, ..., see the Rewrite Flags document") says nothing itself
    if _POINTER.match(unlabelled.lstrip()):
        return False
    # a version note ("Changed in version 3.5: Support for recursive globs ...") says what
    # changed then: it answers a question about a change, a version or a default, no other
    if _VERSION_NOTE.match(sentence.lstrip()) and not _ASKS_CHANGE.search(wanted.question):
        return False
    pinned = wanted.whole or wanted.question  # a part is held to the whole's versions
    if _versions_of_another(pinned, sentence):
        return False
    # a version the question pins to a name ("Django 3.2") is the sentence's, or the heading's
    # above it (not the title's: a doc set's titles carry its own version, "Django 3.2.25";
    # nor a table's row before it)
    heading = excerpt.above.replace(excerpt.signature, " ") if excerpt.signature else excerpt.above
    if not _versions_said(pinned, f"{sentence} {heading}"):
        return False
    # What the sentence says: a leading label ("Changed in version 3.5.1:") and its asides
    # (what parentheses hold: "as e.g. returned by HMAC.hexdigest()") aside.
    statement = _aside(unlabelled)
    own = keywords(statement)
    # what the heading or signature above defines: a usage line's optional parts (`show
    # [-u|--include-untracked]`) are options it lists, not what the text under it defines
    defined = _aside(excerpt.above)
    above = keywords(defined)
    named = wanted.name_words
    # A sentence opening pointing back ("If it is set to 0, ...") after one naming what the
    # heading or signature above defines ("The MaxRequests directive limits ...", under
    # "MaxRequests Directive"), and nothing else it could point to ("see also the IdleTimeout
    # directive"), is about that: the name the two share is its own. Only the name: a number
    # the question sets is in it ("This setting defaults to 100" is not what 0 does).
    if before and _POINTS_AT_OPENING.match(unlabelled):
        if not all(_says_number(number, sentence) for number in _numbers_asked(wanted.question)):
            return False
        borrowed = keywords(before) & above & (set(wanted.lead) | named)
        if borrowed and not _names_another(before, borrowed):
            own |= borrowed
    # A condition without its subject ("When not possible, refuse to merge ...", "If omitted,
    # ...") is the sentence before's, said again: the words the question asks that it says are
    # this one's too (whether it reverses them is its own: `keeps_reversal`).
    elif before and _ELLIPTIC.match(unlabelled):
        own |= keywords(before) & set(wanted.content)
    qualifying = {word for name in wanted.qualifiers for word in keywords(name)}
    things = wanted.things
    unnamed = _left_unnamed(statement, own, wanted)  # the words of names it need not say
    if unnamed:
        things = [name for name in things if not keywords(name) <= unnamed]
        named = named - unnamed
    # It sits under the definition of what the question names: the heading or signature above
    # holds the name, and what qualifies it is that definition's, the page's or the paragraph's
    # (a `glob` module's heading is not the definition of `Path.glob`).
    # or, a class (`Fraction`), the sentence itself ("Finds the closest Fraction ..." under
    # `limit_denominator()`): a plain word ("from the queue") is no qualifier
    where = f"{excerpt.above} {excerpt.title} {excerpt.lead_in}"
    qualified = all(
        holds_name(name, where)
        or (
            name != name.lower()
            and holds_name(name, statement)
            and keywords(name) <= keywords(f"{excerpt.title} {excerpt.above}")
        )
        for name in wanted.qualifiers
    )
    under = [name for name in things if holds_name(name, defined) and qualified]
    # A term's label (`side_effect: A function to be called ...`, a parameter list's entry)
    # names what the sentence defines: it is that name's, and the opening of its definition.
    term = _label_term(sentence) if excerpt.signature.strip() else ""
    labelled = [
        name
        for name in things
        if term and (term == name or term.endswith(f".{name}")) and qualified
    ]
    if labelled:
        own |= keywords(term)
        under += [name for name in labelled if name not in under]
        first = True
    quantity = quantity_asked(wanted.question)
    # (an aside may state it with a word the question asks: "... beyond renames (works only for
    # a single file)", not "(since 2.1)")
    if quantity and not _QUANTITY.search(statement) and not _quantity_aside(sentence, wanted):
        return False
    light = quantity | LIGHT
    # a reversal asked ("cannot be resolved") is the sentence's to keep (`keeps_reversal`), in
    # any of its words ("When not possible")
    light |= keywords(" ".join(_REVERSAL.findall(wanted.question)))
    # an aside the question makes (", its default,", "(the default)") is not what it asks
    light |= keywords(" ".join(_QUESTION_ASIDE.findall(wanted.question)))
    # a value it sets ("set to 0") is the sentence's to say, as the value something is ("If
    # MaxConnectionsPerChild is 0, ..."; not "sets the limit on the number of requests", nor
    # "If MaxRequests is 10, ...; 0 is also accepted"), and says "set"
    numbers = _numbers_asked(wanted.question)
    if _SET_TO.search(wanted.question) and numbers:
        if not all(re.search(_VALUE_IS.format(re.escape(n)), sentence) for n in numbers):
            return False
        light |= keywords(" ".join(_SET_TO.findall(wanted.question)))
    # a default asked by a clause ("when PASSWORD_HASHERS is left alone") is said as one
    light |= _unset_words(wanted.question) if _UNSET_SAID.search(statement) else set()
    # "default" is said by what a thing starts with ("the root logger is created with level
    # WARNING", "initially 0")
    light |= keywords("default") if _STARTS_WITH.search(statement) else set()
    light |= unnamed
    # "How does X differ from Y": the contrast says it, not the word "differ"
    light |= keywords(" ".join(_COMPARES.findall(wanted.question)))
    # the lead words that are not names: the sentence's own words hold them, or the signature
    # it sits under (`hash.hexdigest()` for "the hexdigest method"), never a heading alone
    signed = own | keywords(excerpt.signature)
    missing = _unsaid(set(wanted.lead) - named - light - signed, signed)
    if named - qualifying - own - (above if under else set()):
        return False
    # each name it asks about, under its definition or written as code in the sentence ("a
    # match" is a word, `re.match()` the name)
    calls = {part for token in _code_tokens(sentence) for part in _parts(token)}
    if any(name not in under and name not in calls for name in things):
        return False
    # a symbol it writes ("the ** pattern", "'<' or '>'") is in the sentence
    if any(symbol not in sentence for symbol in _symbols(wanted.question)):
        return False
    # the page's title and the site's host name what every sentence of the page is about
    # (`git-merge(1)` on git-scm.com: git and merge), and a heading defining a name the question
    # writes says that name's words (`LimitRequestBody`: limit, request, body)
    context = own | above | name_parts(defined, wanted.question)
    context |= shown_words(f"{excerpt.title} {excerpt.site}")
    # What the brief's sub-questions share ("bisect run script", "exit code") is the ground
    # they stand on: the paragraph around may say it (its heading, the paragraph before, its
    # sentences before this one); the passage further off may not (a `return` statement's
    # section that mentions a try statement is not about its clauses).
    # What qualifies a name is not ground: the sentence, the definition or the page says it.
    ground = set(wanted.shared) - qualifying
    ground &= shown_words(f"{excerpt.context} {excerpt.lead_in}")
    rest = (set(wanted.content) | qualifying) - light - context - ground
    # in another inflection ("set" for "setting"): a lead word by the sentence itself only,
    # never by a heading or the title
    lead = set(wanted.lead)
    missing |= _unsaid(rest - lead, context) | _unsaid(rest & lead, signed)
    # Under the definition of what it names, one other word may be said otherwise ("exits with
    # a non-zero exit code" for "fails"); elsewhere none. Never its most specific lead word: of
    # "the indent parameter of json.dump", the definition's opening sentence does not say it;
    # but the kind of thing a "Which element ..." asks for is named by the answer ("item").
    if len(missing) > (1 if under else 0) or missing & set(wanted.lead[:1]) - _kind(wanted):
        return False
    if set(wanted.asked) & CARRIED - own:
        return False
    # "What is typing.Protocol used for?" asks its use: "are primarily used with static type
    # checkers", not "used by versions before 2.0"
    purpose = _USED_FOR.search(wanted.question) is not None
    if purpose and not _USE_SAID.search(statement):
        return False
    # (or in the term a list entry opens with, a sentence of its own: "'+'. Just like '*', ...";
    # another value's entry, "'*'. ...", is not the question's)
    values = [value for _, value in _VALUE.findall(wanted.question) if value]
    lone = before.strip().rstrip(".:") if before and " " not in before.strip() else ""
    entry = _QUOTED_TERM.fullmatch(lone)
    if entry and entry.group(1) not in values:
        return False
    termed = f"{lone} {sentence}" if entry else sentence
    if any(value.lower() not in termed.lower() for value in values):
        return False
    # the value is the entry's own term, or the sentence opens with it, quoted
    valued_entry = any(
        (entry and entry.group(1) == value) or _opens_quoted(statement, value) for value in values
    )
    if things:
        # or it opens with the name: its first words hold it, neither in a list of names nor
        # after another ("BZ2File performance is improved by removing internal RLock")
        opening = " ".join(statement.split()[:OPENING_WORDS])
        written = _written_names(" ".join(sentence.split()[:OPENING_WORDS]), set(wanted.codes))
        listed = len(written) >= LISTED_NAMES or _led_by_another(written, set(wanted.codes))
        # An entry shared by several options (`--ff:: --no-ff:: --ff-only::`) says each one's
        # in a sentence of its own: one that opens with another option ("With --ff, ...") is
        # that option's, though it sits under the question's too.
        about_option = any(_OPTION_TOKEN.fullmatch(name) for name in wanted.things)
        opener = written[0].partition("=")[0] if written else ""
        if about_option and _OPTION_TOKEN.fullmatch(opener) and opener not in wanted.codes:
            return False
        # written as code there (`purge()`, `queue.purge`): "Purge removes ..." is the word
        early = {part for token in written for part in _parts(token)}
        opens_with = not listed and any(
            name in early and names_itself(name, opening) for name in things
        )
        if not under and not opens_with:
            return False
        # nothing asked but the name (or nothing else the sentence says itself): the
        # definition's own opening sentence, not a remark further on
        rest = set(wanted.content) - named - qualifying - set(wanted.subject) - light
        rest |= set(wanted.asked) & CARRIED  # "What does gc.collect return?": what it returns
        rest |= {"used"} if purpose else set()  # its use
        # (a value it writes, `nargs='+'`, is asked besides the name: the entry of that value)
        if not rest - missing and not valued_entry and len(things) == 1 and not (under and first):
            return False
    if _COMPARES.search(wanted.question) and (
        not _CONTRASTS.search(statement)
        or _shares(statement, wanted)
        or not _sets_apart(statement, defined, wanted)
    ):
        return False
    # What it tells may be the term its label defines ("ort: This is the default strategy"),
    # not another leading label's words ("Changed in version 3.5: Added the chunksize argument"
    # tells only that it was added).
    told = _aside(sentence) if _term_label(sentence) else statement
    new = keywords(told) - keywords(wanted.question) - above
    # A figure or a value it states ("defaults to 90 days", "is None") is what it tells.
    stated = figures(statement) - figures(wanted.question)
    named_one = bool(stated or _values(statement, wanted) or _term_label(sentence))
    # or the term its labelled list defines (`ort::` above "This is the default strategy")
    valued = named_one or bool(
        _TERMS_ONLY.fullmatch(excerpt.signature.strip())
        and keywords(excerpt.signature) - keywords(wanted.question)
    )
    # "Which mode does reset use?", with no name to pin it down: the answer names one, itself
    # (under `ort::`, "This is the default merge strategy" does not say which one)
    if not things and _WHICH.match(wanted.question) and not named_one:
        return False
    # "What is the default visibility timeout?" asks for a value: "The shorter default means
    # ..." says something of it, not what it is
    if _DEFAULT_ASKED.match(wanted.question) and not named_one:
        return False
    # A question asking yes or no ("is it affected by system clock updates?") is answered "no"
    # by a sentence saying every word it asks, negated ("is not affected ..."). A "yes" needs
    # what any answer needs: one word of its own may be anything ("precedes a long-term
    # support release" for "Is it a long-term support release").
    if _POLAR.match(wanted.question) and _REVERSAL.search(statement):
        return True
    return len(new | stated) >= INFORMS or (bool(new | stated) and valued)


# A question asking yes or no: it opens with an auxiliary verb.
_POLAR = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|can|could|will|would|should|has|have|may|must)\b"
    r"(?!\s+(?:there|you)\b)",  # not "Is there a way ...", "Can you explain ..."
    re.IGNORECASE,
)


ROW_CELLS = 3  # cells " | " joins that make a line a table's row on its own


def _row(sentence: str, excerpt: Excerpt) -> bool:
    """A table's row, its cells joined by " | " (`action | Specify how ... | 'store', ...`):
    three cells or more, or two under a heading and paragraph before that hold a cell's " | "
    too (a row), their argument lists aside. Not prose writing a union (`Optional[X] is
    equivalent to X | None`, `isolation_level (str | None)`) after prose or a signature."""
    cells = _aside(sentence).count(" | ") + 1
    return cells >= ROW_CELLS or (cells > 1 and " | " in _aside(excerpt.context))


def _kind(wanted: Wanted) -> set[str]:
    """The kind of thing a question asks to name ("Which element ...", "What values ..."):
    the word after its "which" or "what"."""
    match = _WHICH.match(wanted.question)
    rest = wanted.question[match.end() - 1 :].split() if match else []
    return keywords(rest[0]) if rest else set()


_VERSIONED = re.compile(r"([A-Za-z][\w-]*)\s+(\d+(?:\.\d+)+)(?![\w.]*\d)")


def _versions_of_another(question: str, sentence: str) -> bool:
    """The sentence writes a version the question pins to a name ("Django 3.2") after another
    name ("Upstream support for Python 3.2 ends"): it is about that other thing's version."""
    pinned = {version: name.lower() for name, version in _VERSIONED.findall(question)}
    return any(
        version in pinned and name.lower() != pinned[version]
        for name, version in _VERSIONED.findall(sentence)
    )


def _versions_said(question: str, text: str) -> bool:
    """Every version the question pins to a name ("Django 3.2") is written in `text`, as that
    version (not 3.2.25's first part)."""
    return all(
        re.search(rf"(?<![\w.]){re.escape(version)}(?![\w]|\.\d)", text) is not None
        for _, version in _VERSIONED.findall(question)
    )


def _term_label(sentence: str) -> bool:
    """The sentence opens with the term it defines, as reference lists write one (`ort::`,
    `--mixed:`), not a capitalised word ("Note:")."""
    label = _LEADING_LABEL.match(sentence)
    token = label.group().strip().rstrip(":") if label else ""
    return bool(token) and " " not in token and token != token.capitalize()


def _label_term(sentence: str) -> str:
    """The term the sentence's label defines (`side_effect` of "side_effect: A function to be
    called ..."), or nothing."""
    label = _LEADING_LABEL.match(sentence)
    term = label.group().strip().rstrip(":") if label and _term_label(sentence) else ""
    return "" if term.isupper() else term  # "WARNING:" is a note


_OPTION = re.compile(r"^--?[A-Za-z]")  # `--mixed`, `-bd`
# "Which mode ...", "What value of ...": a question asking to name a thing (not "What does ...").
_DEFAULT_ASKED = re.compile(r"^\s*what\s+(?:is|are|was|were)\s+the\s+default\b", re.IGNORECASE)
_WHICH = re.compile(
    r"^\s*(?:which|what)\s+(?!(?:does|do|is|are|was|were|happens?|will|would|can|could|should"
    r"|did|has|have|if|when)\b)[a-z]",
    re.IGNORECASE,
)


def _values(statement: str, wanted: Wanted) -> set[str]:
    """The words `statement` writes as a value, capitalised or as code past its first word
    ("The default value of AllowOverride is None"), that neither the question nor the brief
    does."""
    tokens = [token.strip("?!,;:.()'\"`") for token in statement.split()[1:]]
    asked = keywords(wanted.question) | set(wanted.subject)
    return {
        token
        for token in tokens
        if token[:1].isupper() or _CODE_CHARACTERS.search(token) or _OPTION.match(token)
        if keywords(token) and not keywords(token) & asked
    }
