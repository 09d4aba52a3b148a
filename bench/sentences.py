"""Which sentence splitter the rules read with: the toolkit's regex, pysbd and syntok, measured.

    .venv/bin/python -m bench.sentences [HTML_ROOT ...]

Accuracy on a labelled sample written for this (documentation prose: "e.g.", "i.e.", "etc.",
version numbers, dotted names, ":" and ";", inline code, lists, quotes and brackets): how many
texts each splitter cuts exactly as labelled, and the precision and recall of its sentence ends.
Speed on real documentation: the text `activities.pages.extract` makes of every page under each
HTML_ROOT (default: tests/corpus and Debian's python3.11-doc, when installed), split whole, in
sentences per second (the best of three runs). Figures only; pysbd and syntok are dev
dependencies, and a splitter that is not installed is left out with a line saying so.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from activities.pages.extract import extract
from workflows.text import sentence_texts

DEFAULT_ROOTS = [Path("tests/corpus"), Path("/usr/share/doc/python3.11/html")]
MAX_PAGES = 120  # per root: enough text for a stable rate, in about a minute
MAX_CHARS = 2_000_000

Splitter = Callable[[str], list[str]]

# (text, its sentences as a careful reader cuts them)
SAMPLE: list[tuple[str, list[str]]] = [
    ("Use a timeout, e.g. 30 seconds. The call then fails.",
     ["Use a timeout, e.g. 30 seconds.", "The call then fails."]),
    ("Some values (i.e. those that are hashable) are cached. Others are not.",
     ["Some values (i.e. those that are hashable) are cached.", "Others are not."]),
    ("Python 3.11.2 fixed it. Upgrade to 3.11.2 or later.",
     ["Python 3.11.2 fixed it.", "Upgrade to 3.11.2 or later."]),
    ("Changed in version 3.8: the default is now 5. It was 3 before.",
     ["Changed in version 3.8: the default is now 5.", "It was 3 before."]),
    ("The options are: maxsize; typed. Both are optional.",
     ["The options are: maxsize; typed.", "Both are optional."]),
    ("Call os.path.join() to join paths. It returns a string.",
     ["Call os.path.join() to join paths.", "It returns a string."]),
    ("Set `x.y = 3. 5` only in tests. Never in production.",
     ["Set `x.y = 3. 5` only in tests.", "Never in production."]),
    ("Is it thread-safe? Yes! Each call takes the lock.",
     ["Is it thread-safe?", "Yes!", "Each call takes the lock."]),
    ('He wrote "it stops." Then it restarted.',
     ['He wrote "it stops."', "Then it restarted."]),
    ("(See the tutorial.) The reference follows.",
     ["(See the tutorial.)", "The reference follows."]),
    ("Retries, timeouts, etc. are configurable. The defaults are safe.",
     ["Retries, timeouts, etc. are configurable.", "The defaults are safe."]),
    ("It supports lists, dicts, etc. The rest raise TypeError.",
     ["It supports lists, dicts, etc.", "The rest raise TypeError."]),
    ("The limit is 1.5 MB. Larger bodies are refused.",
     ["The limit is 1.5 MB.", "Larger bodies are refused."]),
    ("Waits 30 ms. Then it retries.", ["Waits 30 ms.", "Then it retries."]),
    ("The steps are:\n- read the page\n- record the quote",
     ["The steps are:", "- read the page", "- record the quote"]),
    ("Install it:\n1. download\n2. unpack", ["Install it:", "1. download", "2. unpack"]),
    ("A wrapped line\ncontinues the sentence. A new one.",
     ["A wrapped line\ncontinues the sentence.", "A new one."]),
    ("Heading\n\nThe paragraph under it.", ["Heading", "The paragraph under it."]),
    ("See Fig. 3 for details. It shows the flow.",
     ["See Fig. 3 for details.", "It shows the flow."]),
    ("Compare A vs. B first. Then decide.", ["Compare A vs. B first.", "Then decide."]),
    ("The value is None. asyncio.wait_for() raises TimeoutError.",
     ["The value is None.", "asyncio.wait_for() raises TimeoutError."]),
    ("Use v1.4. It is stable.", ["Use v1.4.", "It is stable."]),
    ("Smith et al. describe it. Their result holds.",
     ["Smith et al. describe it.", "Their result holds."]),
    ("The range is 1-10; values outside raise ValueError. Zero is allowed.",
     ["The range is 1-10; values outside raise ValueError.", "Zero is allowed."]),
    ("Note: this is slow. Use the C version.", ["Note: this is slow.", "Use the C version."]),
    ("At most 5 retries (cf. max_retries). After that the task fails.",
     ["At most 5 retries (cf. max_retries).", "After that the task fails."]),
    ("It returns 0.5... or so. Check it.", ["It returns 0.5... or so.", "Check it."]),
    ("See https://docs.python.org/3/library/re.html. It lists the flags.",
     ["See https://docs.python.org/3/library/re.html.", "It lists the flags."]),
    ("The default is 10. 20 is the maximum.", ["The default is 10.", "20 is the maximum."]),
    ("Mr. Jones maintains it. Ask him.", ["Mr. Jones maintains it.", "Ask him."]),
    ('Commits whose message begins with "fixup! ..." move up. The rest stay.',
     ['Commits whose message begins with "fixup! ..." move up.', "The rest stay."]),
]  # fmt: skip


def regex_splitter() -> Splitter:
    return sentence_texts


def pysbd_splitter() -> Splitter | None:
    try:
        import pysbd
    except ImportError:
        return None
    segmenter = pysbd.Segmenter(language="en", clean=False)
    return lambda text: [piece.strip() for piece in segmenter.segment(text) if piece.strip()]


def syntok_splitter() -> Splitter | None:
    try:
        from syntok import segmenter
    except ImportError:
        return None

    def split(text: str) -> list[str]:
        found = []
        for paragraph in segmenter.analyze(text):
            for sentence in paragraph:
                start = sentence[0].offset
                end = sentence[-1].offset + len(sentence[-1].value)
                found.append(text[start:end].strip())
        return [piece for piece in found if piece]

    return split


def _ends(pieces: list[str]) -> set[int]:
    """Where each sentence but the last ends, in the text's words (spacing aside)."""
    ends, count = set(), 0
    for piece in pieces[:-1]:
        count += len(piece.split())
        ends.add(count)
    return ends


def accuracy(split: Splitter) -> tuple[int, float, float]:
    exact = hits = said = wanted = 0
    for text, expected in SAMPLE:
        got = [" ".join(piece.split()) for piece in split(text)]
        labelled = [" ".join(piece.split()) for piece in expected]
        exact += got == labelled
        mine, theirs = _ends(got), _ends(labelled)
        hits, said, wanted = hits + len(mine & theirs), said + len(mine), wanted + len(theirs)
    return exact, hits / said if said else 1.0, hits / wanted if wanted else 1.0


def corpus(roots: list[Path]) -> list[str]:
    texts: list[str] = []
    for root in roots:
        if not root.is_dir():
            print(f"{root}: not installed, left out")
            continue
        pages = sorted(root.rglob("*.html"))[:MAX_PAGES]
        for page in pages:
            texts.append(extract(page.read_bytes(), "text/html", max_chars=MAX_CHARS).text)
        print(f"{root}: {len(pages)} pages, {sum(len(t) for t in texts):,} characters so far")
    return texts


def speed(split: Splitter, texts: list[str]) -> tuple[int, float]:
    best = float("inf")
    count = 0
    for _ in range(3):
        started = time.perf_counter()
        count = sum(len(split(text)) for text in texts)
        best = min(best, time.perf_counter() - started)
    return count, count / best if best else 0.0


def main(argv: list[str]) -> None:
    roots = [Path(arg) for arg in argv] or DEFAULT_ROOTS
    texts = corpus(roots)
    splitters = {
        "regex (workflows.text)": regex_splitter(),
        "pysbd": pysbd_splitter(),
        "syntok": syntok_splitter(),
    }
    print(f"\nlabelled sample: {len(SAMPLE)} texts; corpus: {len(texts)} pages")
    print(f"{'splitter':<24} {'exact':>7} {'precision':>9} {'recall':>7} {'sentences':>10} "
          f"{'sentences/s':>12}")  # fmt: skip
    for name, split in splitters.items():
        if split is None:
            print(f"{name:<24} not installed (pip install {name}): left out")
            continue
        exact, precision, recall = accuracy(split)
        count, rate = speed(split, texts)
        print(f"{name:<24} {exact:>3}/{len(SAMPLE):<3} {precision:>9.2f} {recall:>7.2f} "
              f"{count:>10,} {rate:>12,.0f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
