"""Every `research` command explains itself: `--version`, and a `--help` page per subcommand
with a description and examples to copy."""

from __future__ import annotations

import argparse
from importlib import metadata

import pytest

from starter.cli import build_parser, main


def subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, str]:
    """Every subcommand's `--help` page, by its full name ("corpus index")."""
    pages: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix}{name}"
                pages[full] = sub.format_help()
                pages.update(subcommands(sub, f"{full} "))
    return pages


PAGES = subcommands(build_parser())


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])

    assert exited.value.code == 0
    assert capsys.readouterr().out == f"research {metadata.version('research-agent')}\n"


def test_every_command_is_listed() -> None:
    expected = {"runs", "status", "report", "export", "audit", "replay", "start", "corpus index"}
    assert expected <= set(PAGES)


# The signal kinds (guidance, seed, finish) are described, with examples, on `signal --help`.
COMMANDS = sorted(name for name in PAGES if not name.startswith("signal "))


@pytest.mark.parametrize("name", COMMANDS)
def test_a_help_page_has_a_description_and_examples(name: str) -> None:
    page = PAGES[name]

    usage, description = page.split("\n\n")[:2]
    assert usage.startswith(f"usage: research {name}")
    assert len(description.split()) >= 8, description  # a sentence, not a label
    examples = page.split("examples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith("  ") for line in examples)
    assert any(line.strip().startswith(f"research {name}") for line in examples), examples
