"""Copy the tool calls of recorded real-model runs into cassettes:
`python -m tests.cassettes.copy ../shared/real-model/run1-harborq ...` (each folder's
`responses/resp-N.json`, in N order) -> `tests/cassettes/<folder name>/calls.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cassettes import HERE


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
    return target


def main(argv: list[str]) -> int:
    for folder in argv:
        print(f"{copy(Path(folder))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
