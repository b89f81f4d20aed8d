"""What an audit of a claim may spend and how it is seeded: :class:`Budget`, :data:`BUDGETS` and
the :class:`AuditContext` every audit function receives.

Imported by the claim driver, the registry and every claim declaration; it imports nothing of the
engine, so that the driver and the registry do not depend on each other.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit._validation import check_int, check_probability

__all__ = ["Budget", "BUDGETS", "AuditContext", "coarse"]


@dataclass(frozen=True)
class Budget:
    """How much work an audit may spend.

    ``samples``: samples per neighbouring input for each empirical lower bound;
    ``sensitivity_examples``: Hypothesis examples per sensitivity lemma;
    ``grid``: ``"coarse"`` (extremes and the paper's settings only) or ``"full"``;
    ``max_T``: the largest horizon audited empirically.
    """

    name: str
    samples: int
    sensitivity_examples: int
    grid: str
    max_T: int


BUDGETS: dict[str, Budget] = {
    "quick": Budget("quick", samples=20_000, sensitivity_examples=60, grid="coarse", max_T=64),
    "standard": Budget("standard", samples=200_000, sensitivity_examples=300, grid="full", max_T=256),
    "thorough": Budget("thorough", samples=2_000_000, sensitivity_examples=2_000, grid="full",
                       max_T=1024),
}


@dataclass
class AuditContext:
    """What an audit function receives: budget, seed, confidence level, progress callback and
    where the empirical tests run (``executor``).

    ``progress(done, total, label)`` may be called any number of times; ``rng(*key)`` returns an
    independent generator derived from the seed and a key, so that every grid point is reproducible
    on its own regardless of the order points are audited in.
    """

    budget: Budget
    seed: int = 0
    alpha: float = 0.05
    progress: Callable[[int, int, str], None] = field(default=lambda done, total, label: None)
    #: Where the claim's empirical tests send their chunks of runs: None (this process), an
    #: executor name or an open :class:`~dpaudit.execution.executors.Executor`. It never
    #: changes a result.
    executor: Any = None

    def __post_init__(self) -> None:
        self.seed = check_int(self.seed, "seed", minimum=0)
        self.alpha = check_probability(self.alpha, "alpha")

    def rng(self, *key: int | str) -> np.random.Generator:
        words = [self.seed] + [k if isinstance(k, int) else _stable_hash(k) for k in key]
        return np.random.default_rng(np.random.SeedSequence(words))

    def seed_for(self, *key: int | str) -> int:
        """An integer seed in ``[0, 2**62)`` derived from the context's seed and ``key``: the one
        way every claim audit seeds an engine run or a Hypothesis search of one of its points."""
        return int(self.rng(*key).integers(0, 2 ** 62))


def _stable_hash(s: str) -> int:
    return zlib.crc32(s.encode())


def coarse(budget: Budget) -> bool:
    """Whether ``budget`` asks for the coarse grid (the stated range's extremes and the paper's
    settings only), as the quick budget does."""
    return budget.grid == "coarse"
