"""Source families (`workflows.families`): a mirror or another rendering of the same text is one
source for the gate's rule 3; two pages of one manual are two."""

from __future__ import annotations

from tests.unit.test_gate import brief, evidence, report
from workflows.families import SAME_TEXT, families, overlap, sketch, words
from workflows.gate import check
from workflows.models import SourceRef

STASH = (
    "Use git stash when you want to record the current state of the working directory and the "
    "index, but want to go back to a clean working directory. The command saves your local "
    "modifications away and reverts the working directory to match the HEAD commit. The "
    "modifications stashed away by this command can be listed with git stash list, inspected "
    "with git stash show, and restored (potentially on top of a different commit) with git "
    "stash apply. Calling git stash without any arguments is equivalent to git stash push."
)
# The same manual page as its AsciiDoc source: markup, a title block and list markers differ.
STASH_SOURCE = (
    "git-stash(1)\n=============\n\nNAME\n----\ngit-stash - Stash the changes away\n\n"
    + STASH.replace("git stash list", "`git stash list`").replace("HEAD commit", "`HEAD` commit")
    + "\n+\nSee linkgit:git-commit[1]."
)
COMMIT = (
    "Create a new commit containing the current contents of the index and the given log message "
    "describing the changes. The new commit is a direct child of HEAD, usually the tip of the "
    "current branch, and the branch is updated to point to it, unless no branch is associated "
    "with the working tree. The content to be committed can be specified in several ways: by "
    "using git add to incrementally add changes to the index before using the commit command."
)


def ref(source_id: str, text: str, content_hash: str = "") -> SourceRef:
    return SourceRef(
        id=source_id,
        url=f"https://docs.example/{source_id}",
        content_hash=content_hash or f"hash-{source_id}",
        sketch=sketch(words(text)),
    )


def test_another_rendering_of_the_same_text_is_one_family_and_another_page_is_not() -> None:
    sources = {"S1": ref("S1", STASH), "S2": ref("S2", STASH_SOURCE), "S3": ref("S3", COMMIT)}
    assert overlap(sources["S1"].sketch, sources["S2"].sketch) >= SAME_TEXT
    assert overlap(sources["S1"].sketch, sources["S3"].sketch) < 0.1
    assert families(["S1", "S2", "S3"], sources) == {"S1": "S1", "S2": "S1", "S3": "S3"}


def test_a_mirror_joins_by_its_hash_and_a_source_with_no_sketch_by_its_hash_only() -> None:
    sources = {
        "S1": ref("S1", STASH, "same"),
        "S2": SourceRef(id="S2", url="https://mirror.example/S2", content_hash="same"),
        "S3": SourceRef(id="S3", url="https://old.example/S3", content_hash="other"),
    }
    assert families(["S1", "S2", "S3"], sources) == {"S1": "S1", "S2": "S1", "S3": "S3"}
    assert families(["S9", "S1"], sources) == {"S9": "S9", "S1": "S1"}, "unknown: its own"


def test_a_chain_of_renderings_is_one_family_named_by_the_first() -> None:
    """A shares two thirds of B's text, B two thirds of C's, A a third of C's: one family."""
    x, y, z = (" ".join(f"{part}{n}" for n in range(120)) for part in "xyz")
    sources = {
        "S1": ref("S1", f"{x} {y}"),
        "S2": ref("S2", f"{x} {y} {z}"),
        "S3": ref("S3", f"{y} {z}"),
    }
    assert overlap(sources["S1"].sketch, sources["S3"].sketch) < SAME_TEXT
    assert families(["S1", "S3", "S2"], sources) == {"S1": "S1", "S3": "S1", "S2": "S1"}


def test_the_gate_counts_two_renderings_of_one_page_as_one_source() -> None:
    recorded = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S2", "supports"))
    submitted = report(["E001"], ["E002"])
    renderings = {"S1": ref("S1", STASH), "S2": ref("S2", STASH_SOURCE)}
    verdict = check(submitted, recorded, renderings, brief())
    assert verdict.independent_sources == 1
    assert any("1 independent source(s)" in gap for gap in verdict.gaps)
    pages = {"S1": ref("S1", STASH), "S2": ref("S2", COMMIT)}
    assert check(submitted, recorded, pages, brief()).independent_sources == 2
