"""Write the Celery runs as recordings `research eval --recorded` replays (starter.recorded):
`python -m tests.transcripts.recordings ../shared/real-model/celery` -> `celery/bN/` here:
`calls.json` from the export's model calls, `recorded.json` with the brief, the corpus (the Debian
package's HTML folder as one host), the verifier, the end, every step and every verdict, and
`judged.json` from the refusals table of the runs' README, by the words that name each."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "celery"
CORPUS_DIR = "/usr/share/doc/python-celery-doc/html"  # apt-get install python-celery-doc
HOST = "docs.celeryq.example"

# The README's table of refusals: run -> (step, words of the refusal, verdict, why).
JUDGED: dict[str, list[tuple[int, str, str, str]]] = {
    "b1": [
        (10, "the default behavior", "FALSE", '"Default: Disabled ... (the default behavior)"'),
        (10, '"by default"', "FALSE", '"Not by default." against the quoted default behaviour'),
    ],
    "b2": [(9, "at most 3 times", "FALSE", '"Maximum number of retries ... set to 3"')],
    "b3": [
        (11, "workers.html", "FAIR", "the URL came from no search"),
        (15, "for amazon sqs", "FALSE", 'the cited row "Amazon SQS | Stable | No | No"'),
    ],
    "b4": [
        (10, "3.0", "FAIR", "the version came from the page title, not the quote"),
        (13, "twice or more", "FALSE", 'the quote says "will be executed twice (or more)"'),
        (13, "one page", "FALSE", '"Q2 rests on one page" against timedelta(days=1)'),
    ],
    "b5": [
        (4, "one still lets", "FALSE", '"one" is the multiplier the quote names'),
        (5, "one means", "FALSE", "the quote's own words less one comma"),
        (13, "Q3", "FAIR", "the docs do not answer Q3"),
        (15, "Q3", "FAIR", "the docs do not answer Q3"),
        (16, "Q3", "FAIR", "the docs do not answer Q3"),
    ],
    "b6": [
        (3, "10 may", "FALSE", '"-c 10 ... may reserve at most 20 tasks": no date'),
        (11, "10 may", "FALSE", '"-c 10 ... may reserve at most 20 tasks": no date'),
    ],
    "b7": [
        (9, "does not mention what the question asks about", "FALSE",
         "the quote answers whether a task can end up executed more than once"),
        (13, "guarantee exactly-once execution", "FAIR", "no quote speaks of a guarantee"),
    ],
}  # fmt: skip

_VERDICT_KEYS = ("claim", "verdict", "said", "subject", "question_id", "sentence", "evidence_id",
                 "reason", "model")  # fmt: skip


def recording(run: Path) -> dict[str, Any]:
    export = run / "export"
    record = json.loads((export / "run.json").read_text())
    steps = json.loads((export / "steps.json").read_text())
    verdicts = json.loads((export / "verdicts.json").read_text())
    first = json.loads((export / "model_calls.json").read_text())[0]
    return {
        "brief": record["brief"],
        "corpus_dir": CORPUS_DIR,
        "host": HOST,
        # the verifier defaulted to the research model (b5 never reached it, and had one too)
        "verifier": f"{first['provider']} {first['model']}",
        "status": record["status"],
        "stop_reason": record["stop_reason"],
        "steps": [[row["step"], row["tool"], row["ok"], row["error"] or ""] for row in steps],
        "verdicts": [
            {"step": row["step"], "number": row["claim_no"]}
            | {key: row[key] for key in _VERDICT_KEYS if row.get(key) is not None}
            for row in verdicts
        ],
    }


def calls(run: Path) -> list[list[dict[str, Any]]]:
    rows = json.loads((run / "export" / "model_calls.json").read_text())
    return [
        [
            {"name": call["name"], "arguments": json.loads(call["arguments"])}
            for call in row["tool_calls"]
        ]
        for row in sorted(rows, key=lambda row: row["turn"])
    ]


def write(run: Path) -> Path:
    target = HERE / run.name
    target.mkdir(parents=True, exist_ok=True)
    for name, data in (
        ("calls.json", calls(run)),
        ("recorded.json", recording(run)),
        ("judged.json", [
            {"step": step, "says": says, "verdict": verdict, "why": why}
            for step, says, verdict, why in JUDGED.get(run.name, [])
        ]),
    ):  # fmt: skip
        (target / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return target


def main(argv: list[str]) -> int:
    for folder in argv:
        for run in sorted(Path(folder).glob("b*/export")):
            print(write(run.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
