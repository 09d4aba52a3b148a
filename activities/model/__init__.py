"""The model room: the `decide` activity (`decide`), its prompt, provider errors and replay."""

from activities.model.decide import ModelActivities, ModelClient, to_decision

__all__ = ["ModelActivities", "ModelClient", "to_decision"]
