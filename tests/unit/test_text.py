"""The one text toolkit: its sentence splitter, word tokeniser and stemmer, and that no other
module splits sentences its own way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from workflows.text import clauses, sentence_texts, stem, words

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["workflows", "activities", "runtime", "composition", "baselines", "starter", "bench"]
HOME = ROOT / "workflows" / "text.py"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use e.g. 30 seconds. It fails.", ["Use e.g. 30 seconds.", "It fails."]),
        ("Some (i.e. hashable) ones. Others.", ["Some (i.e. hashable) ones.", "Others."]),
        ("Python 3.11.2 fixed it. Upgrade.", ["Python 3.11.2 fixed it.", "Upgrade."]),
        ("The options are: a; b. Then c.", ["The options are: a; b.", "Then c."]),
        ("Set `a. b` here. Done.", ["Set `a. b` here.", "Done."]),
        ("Is it? Yes! Go.", ["Is it?", "Yes!", "Go."]),
        (
            'It begins with "fixup! ...", then moves. Done.',
            ['It begins with "fixup! ...", then moves.', "Done."],
        ),
        ('He wrote "stop." Then left.', ['He wrote "stop."', "Then left."]),
        ("Steps:\n- read\n- record", ["Steps:", "- read", "- record"]),
        ("Steps:\n1. read\n2. record", ["Steps:", "1. read", "2. record"]),
        ("A wrapped\nline. Next.", ["A wrapped\nline.", "Next."]),
        ("Heading\n\nBody.", ["Heading", "Body."]),
        ("Lists, dicts, etc. The rest.", ["Lists, dicts, etc.", "The rest."]),
        ("Lists, dicts, etc. and more.", ["Lists, dicts, etc. and more."]),
    ],
)
def test_sentences_end_where_a_reader_ends_them(text: str, expected: list[str]) -> None:
    assert sentence_texts(text) == expected


def test_clauses_end_at_semicolons_and_lines_too() -> None:
    text = "Before 2.0 it used 60 s; now 30 s.\nDefault: 5"
    assert [text[a:b] for a, b in clauses(text)] == [
        "Before 2.0 it used 60 s;",
        "now 30 s.",
        "Default: 5",
    ]


def test_words_keep_identifiers_and_hyphenated_words_whole() -> None:
    assert words("max_retries: dead-letter client's 3.11") == [
        "max_retries",
        "dead-letter",
        "client",
        "s",
        "3",
        "11",
    ]


@pytest.mark.parametrize(
    "forms",
    [
        "use used uses using",
        "set sets setting settings",
        "run runs running",
        "retry retries retried retrying",
        "move moves moved moving",
        "cache cached caching",
        "policy policies",
        "guarantee guaranteed guarantees",
    ],
)
def test_inflections_of_one_word_meet(forms: str) -> None:
    assert len({stem(word) for word in forms.split()}) == 1, {w: stem(w) for w in forms.split()}


@pytest.mark.parametrize(
    ("first", "second"),
    [("execution", "executed"), ("configuration", "configured"), ("us", "use"), ("set", "sea")],
)
def test_different_words_stay_apart(first: str, second: str) -> None:
    assert stem(first) != stem(second)


# A class holding a full stop, question or exclamation mark: where a sentence ends.
_MARKS = r"\[[^\]]*[.!?][^\]]*\]"
# Patterns that cut text at sentence ends: such a class looked behind for, or followed by space.
_CUTS = re.compile(rf"\(\?<={_MARKS}|{_MARKS}\)?(?:\(\?=\\s|\\s)")


def sentence_splits(source: str) -> list[int]:
    """Lines of `source` that split text at sentence ends by a regular expression of their own:
    `re.split` at a sentence mark, or a pattern cutting at one (looking behind for it, or for
    space after it)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        pattern = node.args[0]
        if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
            continue
        name = ast.unparse(node.func)
        if not name.startswith("re."):
            continue
        splits = name == "re.split" and re.search(_MARKS, pattern.value)
        if splits or _CUTS.search(pattern.value):
            found.append(node.lineno)
    return found


def test_the_check_finds_a_second_splitter() -> None:
    assert sentence_splits('import re\nre.split(r"(?<=[.!?])\\s+", text)\n') == [2]
    assert sentence_splits('import re\nEND = re.compile(r"(?<=[.!?:;])\\s+")\n') == [2]
    assert sentence_splits('import re\nEND = re.compile(r"[.;!?](?=\\s|$)|\\n")\n') == [2]
    assert sentence_splits('import re\nre.split(r"\\n\\s*\\n", text)\n') == []
    assert sentence_splits('import re\nN = re.compile(r"(?<![\\w.])\\d+|(?<==)\\s*")\n') == []


def test_only_the_toolkit_splits_sentences() -> None:
    files = [ROOT / "worker.py"] + [p for name in PACKAGES for p in (ROOT / name).rglob("*.py")]
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in files
        if path != HOME
        for lines in [sentence_splits(path.read_text(encoding="utf-8"))]
        if lines
    }
    assert offenders == {}, f"split sentences with workflows.text, not your own: {offenders}"
