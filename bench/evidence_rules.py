"""How the evidence rules of `workflows.substance` treat real documentation nobody here wrote.

    .venv/bin/python -m bench.evidence_rules [HTML_ROOT]

HTML_ROOT defaults to the Python 3.11 documentation of Debian's `python3.11-doc` package
(/usr/share/doc/python3.11/html). For each sub-question of a few two-part briefs it takes the
paragraph that answers it (found by a phrase) and asks the rules whether an honest model could
record it, with a claim taken from it: every such answer should be accepted. It then files every
other paragraph of the same page that is long enough to inform under the same question, as a
careless or hostile model might, and counts how many the relevance rule refuses. Figures only.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from activities.pages.extract import extract
from workflows.substance import distinctive_words, evidence_problem, figures, keywords

DEFAULT_ROOT = Path("/usr/share/doc/python3.11/html")


@dataclass(frozen=True)
class Case:
    question: str
    page: str  # relative to the root
    phrase: str  # in the answering paragraph
    claim: str


BRIEFS: list[tuple[str, list[Case]]] = [
    ("How does functools cache results?", [
        Case("What is the default maxsize of lru_cache?", "library/functools.html",
             "maxsize is set to none", "With maxsize None the LRU feature is disabled."),
        Case("What does cache_info report?", "library/functools.html",
             "cache_info()", "cache_info reports hits, misses, maxsize and currsize."),
    ]),
    ("How does asyncio handle timeouts and cancellation?", [
        Case("What happens when asyncio.wait_for times out?", "library/asyncio-task.html",
             "if a timeout occurs, it cancels the task", "On timeout the task is cancelled."),
        Case("How does asyncio.shield protect a task?", "library/asyncio-task.html",
             "protect an awaitable object from being cancelled",
             "shield protects an awaitable from cancellation."),
    ]),
    ("How does the json module handle special values?", [
        Case("How does json.dumps treat NaN and Infinity?", "library/json.html",
             "if allow_nan is false",
             "Out of range floats raise ValueError when allow_nan is false."),
        Case("What does the indent parameter of json.dumps do?", "library/json.html",
             "if indent is a non-negative integer or string",
             "indent pretty-prints arrays and objects at that level."),
    ]),
    ("How does Python's subprocess module run commands?", [
        Case("What does the check argument of subprocess.run do?", "library/subprocess.html",
             "if check is true, and the process exits with a non-zero exit code",
             "check raises CalledProcessError on a non-zero exit code."),
        Case("What does the timeout argument of subprocess.run do?", "library/subprocess.html",
             "the timeout argument is passed to popen.communicate()",
             "On timeout the child is killed and TimeoutExpired raised."),
    ]),
    ("How is the sys module configured?", [
        Case("What does sys.getrecursionlimit return?", "library/sys.html",
             "return the current value of the recursion limit",
             "It returns the current recursion limit."),
        Case("What is sys.maxsize?", "library/sys.html",
             "an integer giving the maximum value a variable of type py_ssize_t can take",
             "sys.maxsize is the largest Py_ssize_t value."),
    ]),
]  # fmt: skip


def main(root: Path) -> None:
    honest = refused_honest = careless = refused_careless = 0
    for main_question, cases in BRIEFS:
        texts = [case.question for case in cases]
        for case in cases:
            terms = distinctive_words(case.question, main_question, texts)
            body = (root / case.page).read_bytes()
            page = extract(body, "text/html; charset=utf-8", max_chars=400_000)
            texts_ = [page.text[p.start : p.end] for p in page.passages]
            paragraphs = [  # (text, what it sits under: its section and the paragraph before)
                (text, f"{p.section} {texts_[n - 1] if n else ''}")
                for n, (text, p) in enumerate(zip(texts_, page.passages, strict=True))
            ]
            answer = next((pair for pair in paragraphs if case.phrase in pair[0].lower()), None)
            if answer is None:
                print(f"?  {case.question}: no paragraph holds {case.phrase!r}")
                continue
            problem = evidence_problem(answer[0], answer[1], case.claim, terms, case.question)
            honest += 1
            refused_honest += problem is not None
            print(f"{'REFUSED' if problem else 'ok':8} {case.question} [{', '.join(terms)}]")
            if problem:
                print(f"         {problem}")
            others = [
                pair
                for pair in paragraphs
                if pair is not answer and len(keywords(pair[0]) | figures(pair[0])) >= 4
            ]
            careless += len(others)
            refused_careless += sum(
                evidence_problem(text, section, "", terms, case.question) is not None
                for text, section in others
            )
    print()
    print(f"answering paragraphs accepted: {honest - refused_honest} of {honest}")
    print(
        f"other informative paragraphs of the same pages refused as unrelated: "
        f"{refused_careless} of {careless} ({100 * refused_careless / max(careless, 1):.0f} %)"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_ROOT)
