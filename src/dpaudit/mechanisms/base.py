"""The interface every noise primitive implements.

Modelled on dp-accounting: a mechanism is a small object that (1) samples its output for many
independent runs at once and (2) states its own privacy as a ``dp_accounting.DpEvent`` under an
explicit sensitivity assumption.

Batch convention (numpy-style): ``sample(data, n, rng)`` returns an array whose leading axis has
length ``n`` (one row per independent run), followed by the output shape of one run. Calling a
mechanism object is the same as ``sample``, so every mechanism satisfies the audit contract
``mechanism(data, n, rng)`` of :func:`dpaudit.audit`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Literal

import dp_accounting
import numpy as np

from dpaudit.neighbours import NeighbourRelation

__all__ = ["Sensitivity", "Mechanism"]

Norm = Literal["l1", "l2", "linf", "count"]


@dataclass(frozen=True)
class Sensitivity:
    """A sensitivity assumption: ``||f(D) - f(D')||_norm <= bound`` for neighbours under ``relation``.

    ``count`` is used by mechanisms over finite outputs whose sensitivity is a bound on the change of
    a score (exponential mechanism) or a count query (sparse vector).
    """

    bound: float
    norm: Norm = "l2"
    relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE
    description: str = ""

    def __post_init__(self) -> None:
        from dpaudit._validation import check_positive

        object.__setattr__(self, "bound", check_positive(self.bound, "sensitivity"))
        if self.norm not in ("l1", "l2", "linf", "count"):
            raise ValueError(f"norm must be one of 'l1', 'l2', 'linf', 'count', got {self.norm!r}")
        object.__setattr__(self, "relation", NeighbourRelation(self.relation))


class Mechanism(abc.ABC):
    """Abstract noise primitive: vectorised sampling plus a statement of its privacy."""

    #: Short human-readable name used in reports.
    name: str = "mechanism"

    @property
    @abc.abstractmethod
    def sensitivity(self) -> Sensitivity:
        """The sensitivity assumption under which :meth:`dp_event` holds."""

    @abc.abstractmethod
    def sample(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """Outputs of ``n`` independent runs on ``data``; shape ``(n, *output_shape)``."""

    @abc.abstractmethod
    def dp_event(self) -> dp_accounting.DpEvent:
        """The mechanism's privacy as a dp-accounting event.

        The event's own parameters are normalised so that the *neighbour relation of*
        :attr:`sensitivity` is the one the accountant should be run with; see
        :mod:`dpaudit.formal.accounting` for the guards against dp-accounting's pitfalls.
        """

    def __call__(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.sample(data, n, rng)

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description used by reports."""
        s = self.sensitivity
        return {"name": self.name, "sensitivity": s.bound, "norm": s.norm,
                "relation": s.relation.value, "event": repr(self.dp_event())}
