"""Which sentence is worth citing as a further source (`answers`): real sentences from the Python
3.11 documentation that the offline policy once cited for a question they do not answer (a
passing mention, the same words about something else) and ones that do answer it."""

from __future__ import annotations

import pytest

from baselines.excerpts import (
    Excerpt,
    Passage,
    Wanted,
    answers,
    best_excerpt,
    strong_needed,
    wanted_words,
)
from workflows.contracts import DecideInput
from workflows.models import Brief, Budget
from workflows.scope import RunScope


def _wanted(brief_question: str, question: str, other: str) -> Wanted:
    brief = Brief.model_validate(
        {
            "question": brief_question,
            "questions": [{"id": "Q1", "text": question}, {"id": "Q2", "text": other}],
            "allowed_hosts": ["docs.python.org"],
        }
    )
    budget = Budget(steps_left=10, searches_left=3, pages_left=5, tokens_left=10_000)
    request = DecideInput(
        scope=RunScope.turn_of("r", "", 1, 0, ""), brief=brief, transcript=[], budget=budget
    )
    return wanted_words(brief.questions[0], request)


def _strong(wanted: Wanted, text: str, section: str, title: str) -> Excerpt | None:
    """The excerpt of `text` the policy takes at once for a first source, if any."""
    passages = {"S1.P2": Passage("S1", text, section, title)}
    return best_excerpt(wanted, passages, set(), {"S1"}, strong_needed(wanted.lead))


def _says(wanted: Wanted, text: str, section: str = "", title: str = "") -> bool:
    """Some excerpt of `text` (under `section`, on a page titled `title`) is worth citing as a
    further source, as the policy picks one."""
    passages = {"S1.P2": Passage("S1", text, section, title)}
    return best_excerpt(wanted, passages, set(), {"S1"}, 1, about=answers) is not None


FUNCTOOLS = ("How does functools cache function results?", "What happens when maxsize is None?")
HEAPQ = ("How does heapq implement priority queues?", "Which element does heapq.heappop return?")

CASES = [
    # (brief, question, other question, sentence, section, title, worth citing)
    (*FUNCTOOLS[:1], "What does the typed argument of lru_cache do?", FUNCTOOLS[1],
     "The functools.lru_cache() decorator now accepts a typed keyword argument (that defaults "
     "to False to ensure that it caches values of different types that compare equal in "
     "separate cache slots.", "functools", "What's New In Python 3.3", True),
    (*FUNCTOOLS[:1], "What does the typed argument of lru_cache do?", FUNCTOOLS[1],
     "The memoryview object now has a PEP-3118 compliant getbufferproc() that checks the "
     "consumer's request type.", "memoryview", "What's New In Python 3.3", False),
    ("How does subprocess.run report failures and timeouts?",
     "What happens when the timeout of subprocess.run expires?",
     "What does the check argument of subprocess.run do when the process fails?",
     "reuse_address tells the kernel to reuse a local socket in TIME_WAIT state, without "
     "waiting for its natural timeout to expire.", "Opening network connections", "", False),
    ("How does the typing module describe types?", "What is a typing.Protocol used for?",
     "What does typing.Optional mean?",
     "The Vectorcall Protocol is added to the Python/C API. It is meant to formalize existing "
     "optimizations which were already done for various classes.", "Build and C API Changes",
     "What's New In Python 3.8", False),
    ("How does the csv module read and write files?",
     "Why should a csv file be opened with newline=''?",
     "What does csv.DictReader use as field names when fieldnames is omitted?",
     "Create a Python file object from the file descriptor of an already opened file fd. The "
     "arguments name, encoding, errors and newline can be NULL to use the defaults.",
     "File Objects", "", False),
    (*HEAPQ[:1], "What does heapq.nlargest return?", HEAPQ[1],
     "Used with tools that accept key functions (such as sorted(), min(), max(), "
     "heapq.nlargest(), heapq.nsmallest(), itertools.groupby()).", "functools", "", False),
    (*HEAPQ[:1], "What does heapq.nlargest return?", HEAPQ[1],
     "The nsmallest() and nlargest() functions in the heapq module now support a key keyword "
     "parameter similar to the one provided by the min()/max() functions.", "heapq", "", False),
    ("How does Python's garbage collector work?", "What does gc.collect return?",
     "What does gc.disable turn off?",
     "Because of the interpreter's internal caches, the result can vary from call to call; you "
     "may have to call _clear_type_cache() and gc.collect() to get more predictable results.",
     "sys", "", False),
    ("How does the shutil module copy and remove files?", "What does shutil.rmtree delete?",
     "What does shutil.copy2 preserve in addition to shutil.copy?",
     "In order to remove whole directory trees, shutil.rmtree() can be used.",
     "os.rmdir(path, *, dir_fd=None)", "os — Miscellaneous operating system interfaces", True),
    ("How do context managers work with contextlib?", "What does contextlib.suppress do?",
     "What does contextlib.contextmanager turn a generator into?",
     "The new contextlib.suppress context manager helps to clarify the intent of code that "
     "deliberately suppresses exceptions from a single statement.", "contextlib", "", True),
    ("How does the unittest.mock library replace objects?",
     "What does the side_effect attribute of a Mock do?",
     "Where should unittest.mock.patch patch an object?",
     "The Mock.reset_mock() method now has two optional keyword only arguments: return_value "
     "and side_effect.", "unittest.mock", "What's New In Python 3.6", False),
    # a list of calls: counted as written, before the aside drops their parentheses
    ("How do threads synchronise in the threading module?",
     "What is the difference between a Lock and an RLock?",
     "What does Thread.join with a timeout return?",
     "Manager's methods also include Lock(), RLock(), and Semaphore() to create shared locks.",
     "The multiprocessing Package", "What's New in Python 2.6", False),
    ("How do threads synchronise in the threading module?",
     "What is the difference between a Lock and an RLock?",
     "What does Thread.join with a timeout return?",
     "A recursive lock object: a close analog of threading.RLock. A recursive lock must be "
     "released by the process or thread that acquired it.",
     "class multiprocessing.RLock", "multiprocessing — Process-based parallelism", True),
    # led by another name: about that one
    ("How do threads synchronise in the threading module?",
     "What is the difference between a Lock and an RLock?",
     "What does Thread.join with a timeout return?",
     "BZ2File performance is improved by removing internal RLock. This makes BZ2File thread "
     "unsafe in the face of multiple simultaneous readers or writers.", "bz2",
     "What's New In Python 3.10", False),
    # an acronym leads, not another name
    ("How do I compare and add floating-point numbers reliably with the math module?",
     "How does math.isclose decide whether two values are close?",
     "How does math.fsum differ from the built-in sum when adding floats?",
     "PEP 485 adds the math.isclose() and cmath.isclose() functions which tell whether two "
     "values are approximately equal or close to each other. Whether or not two values are "
     "considered close is determined according to given absolute and relative tolerances.",
     "PEP 485: A function for testing approximate equality", "What's New In Python 3.5", True),
    # a version number does not lead the sentence
    ("How does the re module match patterns?",
     "What is the difference between re.match and re.search?",
     "What does the re.VERBOSE flag allow?",
     "Changed in version 3.7: match() checks for a match only at the beginning of the string, "
     "while search() checks for a match anywhere in the string.", "Module Contents",
     "re — Regular expression operations", True),
    # `re.Match`, a class, is not the function `match`
    ("How does the re module match patterns?",
     "What is the difference between re.match and re.search?",
     "What does the re.VERBOSE flag allow?",
     "If x = re.search('foo', 'foo'), x will be a re.Match object where the return values of "
     "x.group(0) and x[0] will both be of type str.", "Binary Sequence Types",
     "Built-in Types", False),
    ("How does the re module match patterns?",
     "What is the difference between re.match and re.search?",
     "What does the re.VERBOSE flag allow?",
     "The match() function only checks if the RE matches at the beginning of the string while "
     "search() will scan forward through the string for a match.", "match() versus search()",
     "Regular Expression HOWTO", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("brief", "question", "other", "text", "section", "title", "expected"), CASES
)
def test_a_further_source_says_what_is_asked(
    brief: str, question: str, other: str, text: str, section: str, title: str, expected: bool
) -> None:
    assert _says(_wanted(brief, question, other), text, section, title=title) is expected


def test_a_qualifier_may_be_the_page_s_own_name() -> None:
    """`unittest` of `unittest.mock.patch` is the page's title; without it, not said."""
    wanted = _wanted(
        "How does the unittest.mock library replace objects?",
        "Where should unittest.mock.patch patch an object?",
        "What does the side_effect attribute of a Mock do?",
    )
    text = "The patch decorator replaces an object with a mock where it is looked up."
    assert _says(wanted, text, "Where to patch", title="unittest.mock — getting started")
    assert not _says(wanted, text, "Where to patch", title="Getting started")


def test_a_qualifier_may_be_named_earlier_in_the_paragraph() -> None:
    wanted = _wanted(
        "How do I format and wrap text with textwrap?",
        "What is the difference between textwrap.wrap and textwrap.fill?",
        "What does textwrap.shorten do?",
    )
    functions = (
        "The wrap(text, width) function takes a string and returns a list containing the text "
        "split into lines of no more than the chosen width. The fill(text, width) function "
        "returns a single string, reformatted to fit into lines no longer than the chosen width."
    )
    module = "The new textwrap module contains functions for wrapping strings of text. "
    where = ("New, Improved, and Deprecated Modules", "What's New in Python 2.3")
    assert _says(wanted, module + functions, *where)
    assert not _says(wanted, functions, *where), "wrap and fill of which module?"


def test_of_two_names_compared_the_definition_of_either_is_a_strong_excerpt() -> None:
    wanted = _wanted(
        "How do I compute descriptive statistics with the statistics module?",
        "What is the difference between statistics.stdev and statistics.pstdev?",
        "What does statistics.mode return when several values are equally common?",
    )
    text = (
        "statistics.pstdev(data, mu=None)\n\nReturn the population standard deviation (the "
        "square root of the population variance)."
    )
    found = _strong(wanted, text, "Function details", "statistics")
    assert found is not None and found.quote.startswith("Return the population")


def test_the_definition_of_a_qualifier_is_not_the_definition_of_names_compared() -> None:
    wanted = _wanted(
        "How do I read and write compressed files?",
        "What is the difference between gzip.open and gzip.GzipFile?",
        "What does the compresslevel argument set?",
    )
    text = (
        "gzip\n\nThis module provides a simple interface to compress and decompress files just "
        "like the GNU programs gzip and gunzip would."
    )
    assert _strong(wanted, text, "gzip — Support for gzip files", "gzip") is None
