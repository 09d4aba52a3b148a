"""The deterministic policies by provider name (`RESEARCH_MODEL_PROVIDER=offline` or `fixed`)."""

from __future__ import annotations

from activities.model.policy import Policy
from baselines.fixed import decide_fixed
from baselines.offline import decide_offline

# The providers that are deterministic policies (runtime.options.LOCAL_PROVIDERS), by name.
LOCAL_POLICIES: dict[str, Policy] = {
    "offline": decide_offline,
    "fixed": decide_fixed,
}


def local_policy(provider: str) -> Policy | None:
    """The policy a local provider names; None for a model provider (openai, azure)."""
    return LOCAL_POLICIES.get(provider)
