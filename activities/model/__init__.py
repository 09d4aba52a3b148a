"""The model room: the `decide` activity (`decide`), the `verify` activity (`verify`), their
prompts, provider errors and replay."""

from activities.model.decide import ModelActivities, ModelClient, to_decision
from activities.model.verify import VerifierActivities

__all__ = ["ModelActivities", "ModelClient", "VerifierActivities", "to_decision"]
