"""Build B of the Worker Versioning test: the product with one decision rule changed.

`python -m tests.system.build_b worker` is `python worker.py` serving this build's workflow, and
`python -m tests.system.build_b replay TARGET` is `research replay TARGET` against it. Its one
change: a run ends `step_limit` after STEPS_ON_B steps, whatever its brief allows. Everything
else (name, activities, settings) is the product's, so only Worker Versioning keeps a run that
started on the product's build (A) from meeting this rule.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import VersioningBehavior

with workflow.unsafe.imports_passed_through():
    from workflows.continuation import Continuation
    from workflows.dispatch import Outcome
    from workflows.models import Brief, RunResult, RunStatus, StopReason
    from workflows.research import ResearchWorkflow

STEPS_ON_B = 3


@workflow.defn(
    name="ResearchWorkflow",
    failure_exception_types=[ValidationError],
    versioning_behavior=VersioningBehavior.PINNED,
)
class ResearchWorkflowB(ResearchWorkflow):
    @workflow.run
    async def run(
        self, brief: Brief | Any = None, carried: Continuation | None = None
    ) -> RunResult:
        return await super().run(brief, carried)

    async def _turn(self) -> Outcome | None:
        if self._state.counters.steps >= STEPS_ON_B:  # the changed rule
            return Outcome(status=RunStatus.INCOMPLETE, stop_reason=StopReason.STEP_LIMIT)
        return await super()._turn()


def main(argv: list[str]) -> int:
    # Run as __main__, this file's class would be __main__.ResearchWorkflowB, a module the
    # workflow sandbox cannot import: take it from the module of this file's own name.
    import starter.cli
    import starter.replay
    import worker
    from tests.system.build_b import ResearchWorkflowB as built

    for module in (worker, starter.replay):  # this process is build B: its worker and replayer
        vars(module)["ResearchWorkflow"] = built
    if argv[:1] == ["worker"]:
        return worker.main()
    return starter.cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
