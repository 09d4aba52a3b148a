"""Baselines the product is measured against: the offline policy, the fixed pipeline and the
golden sets. Product code never imports them; the composition root (`worker.py`)
injects a policy into `decide` (`activities.model.policy`). The CLI measures and compares runs
against them (`starter.evaluation` for `research eval`, `starter.comparison` for `rerun`).
"""

from baselines.policies import LOCAL_POLICIES, local_policy

__all__ = ["LOCAL_POLICIES", "local_policy"]
