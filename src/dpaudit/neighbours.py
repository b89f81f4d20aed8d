"""The neighbouring relations a privacy claim can be stated under.

A base vocabulary shared by the mechanisms (which document their own sensitivity conventions with
it), the learners and the engine; it imports nothing from dpaudit.
"""

from __future__ import annotations

import enum

__all__ = ["NeighbourRelation"]


class NeighbourRelation(str, enum.Enum):
    """How two neighbouring inputs differ."""

    REPLACE_ONE = "replace-one"
    """One element (loss function) replaced by any other from the allowed class; all five papers."""
    ADD_REMOVE = "add-remove"
    """One element added or removed."""
