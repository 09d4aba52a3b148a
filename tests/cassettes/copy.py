"""Copy recorded real-model runs into cassettes:
`python -m tests.cassettes.copy ../shared/real-model/run1-harborq ...` (each folder's
`responses/resp-N.json`, in N order) -> `tests/cassettes/<folder name>/calls.json`, and what the
run was and how the host answered it then (`run.json`, `steps.json`) -> `recorded.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.cassettes import HERE

# The corpus every cassette ran on, relative to its folder (as a golden set names its corpus_dir).
CORPUS_DIR = "../../../examples/corpus"


def copy(run: Path) -> Path:
    responses = sorted(
        (run / "responses").glob("resp-*.json"), key=lambda path: int(path.stem.split("-")[1])
    )
    turns = [
        [
            {"name": call["name"], "arguments": call["arguments"]}
            for call in json.loads(path.read_text()).get("tool_calls", [])
        ]
        for path in responses
    ]
    target = HERE / run.name / "calls.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(turns, indent=1, ensure_ascii=False) + "\n")
    recorded = target.parent / "recorded.json"
    recorded.write_text(json.dumps(recording(run), indent=1, ensure_ascii=False) + "\n")
    return target


def recording(run: Path) -> dict[str, Any]:
    """The run's brief, corpus, end and every step as the host answered it when it was recorded:
    what the eval's recorded arm replays and compares with (`starter.recorded`)."""
    record = json.loads((run / "run.json").read_text())
    steps = json.loads((run / "steps.json").read_text())
    return {
        "brief": record["brief"],
        "corpus_dir": CORPUS_DIR,
        "verifier": "",  # none: the cassettes ran without one
        "status": record["status"],
        "stop_reason": record["stop_reason"],
        "steps": [[row["step"], row["tool"], row["ok"], row["error"] or ""] for row in steps],
    }


def main(argv: list[str]) -> int:
    for folder in argv:
        print(f"{copy(Path(folder))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
