"""Baselines the product is measured against: the offline policy, the fixed pipeline, their
excerpts, the golden sets, run comparison and the evaluation harness. Product code never imports
them; the composition root (`worker.py`) injects a policy into `decide` (`activities.model.policy`).
"""

from baselines.policies import LOCAL_POLICIES, local_policy

__all__ = ["LOCAL_POLICIES", "local_policy"]
