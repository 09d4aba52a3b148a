"""Golden sets for `research eval` (pure): labelled briefs, and how a finished run scores on them.

A golden set is JSON: the corpus it is about (`corpus_dir`: one folder per host, or with `host`
the folder of that one host; relative to the file), and briefs whose sub-questions carry the pages
that answer them (`pages`: URLs, or paths on `host`) and, where known, a `phrase` of the answer.
A run scores on what its report cites: a question is recalled when cited evidence for it sits on
one of its pages; precision is the share of cited evidence on a page labelled for its question.
A completed run is wrong when a required question with a phrase has no cited quote holding it
(`phrase_misses`): it cites a sentence, but not one that says the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from activities.ledger.evidence import CitedEvidence as Cited
from workflows.models import Brief


class GoldenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    required: bool = True
    pages: list[str] = Field(min_length=1)
    phrase: str | None = None


class GoldenBrief(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str
    questions: list[GoldenQuestion] = Field(min_length=1)
    allowed_hosts: list[str] | None = None  # default: the set's host
    limits: dict[str, Any] = Field(default_factory=dict)


class GoldenSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    corpus: str = ""
    notes: str = ""  # how the labels were made
    host: str | None = None
    corpus_dir: str | None = None
    briefs: list[GoldenBrief] = Field(min_length=1)

    def brief(self, entry: GoldenBrief) -> Brief:
        return Brief.model_validate(
            {
                "question": entry.question,
                "questions": [
                    {"id": q.id, "text": q.text, "required": q.required} for q in entry.questions
                ],
                "allowed_hosts": entry.allowed_hosts or [self.host],
                "limits": entry.limits,
            }
        )

    def labels(self, entry: GoldenBrief) -> dict[str, set[str]]:
        """Each question's labelled pages as URLs."""
        return {q.id: {self.url(page) for page in q.pages} for q in entry.questions}

    def url(self, page: str) -> str:
        return page if page.startswith(("https://", "http://")) else f"https://{self.host}/{page}"


def load_golden(path: Path) -> GoldenSet:
    """The golden set in `path`; ValueError with one sentence when it cannot be used."""
    try:
        golden = GoldenSet.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as error:
        raise ValueError(f"golden set {path} cannot be read: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ValueError(
            f"golden set {path} is not JSON: {error.msg} at line {error.lineno}"
        ) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"golden set {path}: {where}: {first['msg']}") from None
    for entry in golden.briefs:
        if not entry.allowed_hosts and golden.host is None:
            raise ValueError(f"golden set {path}: brief {entry.question!r} names no allowed host")
        try:
            golden.brief(entry)
        except ValidationError as error:
            raise ValueError(f"golden set {path}: brief {entry.question!r}: {error}") from None
    return golden


def corpus_folder(golden: GoldenSet, path: Path, override: Path | None) -> Path | None:
    """The folder to index for the set: --corpus, else its corpus_dir (relative to the file)."""
    if override is not None:
        return override
    if golden.corpus_dir is None:
        return None
    return (path.parent / golden.corpus_dir).resolve()


@dataclass(frozen=True)
class Score:
    questions: int
    recalled: int  # questions with cited evidence on one of their pages
    cited: int
    on_label: int  # cited evidence on a page labelled for its question
    phrases: int  # questions that have a phrase label
    phrase_hits: int  # ... whose cited quotes contain it
    sources: int  # distinct cited sources (by content)
    phrase_misses: int = 0  # required questions with a phrase that no cited quote of theirs holds

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def score(golden: GoldenSet, entry: GoldenBrief, cited: list[Cited]) -> Score:
    labels = golden.labels(entry)
    on_label = [c for c in cited if c.url in labels.get(c.question_id, set())]
    phrased = {q.id: plain(q.phrase) for q in entry.questions if q.phrase}
    hits = {c.question_id for c in cited if phrased.get(c.question_id, "\0") in plain(c.quote)}
    required = {q.id for q in entry.questions if q.required and q.id in phrased}
    return Score(
        questions=len(entry.questions),
        recalled=len({c.question_id for c in on_label}),
        cited=len(cited),
        on_label=len(on_label),
        phrases=len(phrased),
        phrase_hits=len(hits),
        sources=len({c.content_hash for c in cited}),
        phrase_misses=len(required - hits),
    )


_READ_AS = str.maketrans({"`": "", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def plain(text: str) -> str:
    """Lower case, runs of white space as one space, inline-code backticks dropped and curly
    quotes straight: a quote and a phrase compare as read (AsciiDoc's "with `git clean`" reads
    "with git clean")."""
    return " ".join(text.translate(_READ_AS).lower().split())
