"""The golden sets under examples/golden are usable as they stand: each loads, every page it labels
is a document of its corpus, and every answer phrase is in the text of its question's first page
(as `research eval` reads pages: extracted, lower-cased, whitespace normalised). A set whose
corpus is not installed here (the Python documentation is a Debian package) is skipped."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from activities.pages.extract import extract
from baselines.golden import GoldenSet, corpus_folder, load_golden
from runtime.settings import PROJECT_ROOT

SETS = sorted((PROJECT_ROOT / "examples" / "golden").glob("*.json"))


def _document(golden: GoldenSet, folder: Path, page: str) -> Path:
    if golden.host is not None and "://" not in page:
        return folder / page
    parts = urlsplit(page)
    return folder / parts.hostname / parts.path.lstrip("/") if parts.hostname else folder / page


@pytest.mark.parametrize("path", SETS, ids=[path.name for path in SETS])
def test_a_golden_set_labels_documents_of_its_corpus_and_phrases_on_its_pages(path: Path) -> None:
    golden = load_golden(path)
    folder = corpus_folder(golden, path, None)
    assert folder is not None, "every set names its corpus"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not installed here")
    for entry in golden.briefs:
        for question in entry.questions:
            documents = [_document(golden, folder, page) for page in question.pages]
            missing = [str(document) for document in documents if not document.is_file()]
            assert not missing, f"{question.text}: no such page {missing}"
            if question.phrase:
                first = extract(documents[0].read_bytes(), "text/html", max_chars=10**7)
                text = " ".join(first.text.lower().split())
                assert " ".join(question.phrase.lower().split()) in text, question.text


def test_there_are_golden_sets_to_check() -> None:
    assert len(SETS) >= 4


def _other_docs() -> list[tuple[str, str, str]]:
    """The Makefile's OTHER_DOCS: (package, folder, set) per set `make eval` runs if installed."""
    text = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("OTHER_DOCS :="))
    specs = line.split(":=", 1)[1].split()
    return [(spec.split(":")[0], spec.split(":")[1], spec.split(":", 2)[2]) for spec in specs]


UNTUNED = ["git-doc.json", "apache2-doc.json", "django-doc.json", "exim4-doc.json"]


def test_make_eval_runs_every_set_on_documentation_nobody_tuned_on() -> None:
    wired = {Path(golden).name: (package, folder) for package, folder, golden in _other_docs()}
    assert sorted(wired) == sorted(UNTUNED)
    for name, (_package, folder) in wired.items():
        golden = load_golden(PROJECT_ROOT / "examples" / "golden" / name)
        assert golden.corpus_dir == folder, f"{name}: make eval checks {folder} for its package"


@pytest.mark.parametrize("name", UNTUNED)
def test_a_set_on_untuned_documentation_has_ten_briefs_of_two_labelled_required_questions(
    name: str,
) -> None:
    golden = load_golden(PROJECT_ROOT / "examples" / "golden" / name)
    assert len(golden.briefs) >= 10
    for entry in golden.briefs:
        required = [q for q in entry.questions if q.required]
        assert len(required) >= 2, entry.question
        assert all(q.phrase for q in required), f"{entry.question}: a phrase per question"
        documents = {page for q in entry.questions for page in q.pages}
        assert len(documents) >= 2, f"{entry.question}: the gate wants two sources"
