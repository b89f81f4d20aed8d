"""The law of a release derived from its code by controlled replay (issue 34, evidence drawn from
the code itself).

For ``mechanism(data, n, rng)`` run once (``n = 1``) with a :class:`~dpaudit.greybox.replay.
ReplayGenerator`:

1. a recorded run with real draws lists the noise calls (``k`` scalars in all);
2. all draws replaced by zero give the noise-free output ``m``;
3. a unit impulse in draw ``i`` (all others zero) gives column ``i`` of the map ``A`` from the
   standardised noise ``z`` to the output (all ``k`` impulses in one call of ``k`` runs when every
   draw has a leading run axis, checked by batched random replays; else one call per impulse);
4. the recorded run and ``REPLAYS`` random replays (at scales 1 and 10, so a clip or threshold
   applied after the noise shows) must give ``m + A z`` within ``RTOL``; otherwise the output is
   not affine in the draws and no law is derived ("not derivable", said in one sentence).

Then the release is ``m(data) + A z`` with ``z`` i.i.d. standard Gaussian (law ``N(m, A A^T)``,
:class:`~dpaudit.formal.exact_laws.LinearGaussian`) or standard Laplace. On a pair with the same
``A`` the exact epsilon follows: Gaussian, the shift ``mu = ||(A A^T)^{+1/2} (m0 - m1)||`` (Dong,
Roth & Su 2022, Cor. 3.3) through Balle & Wang (2018, Thm 8); Laplace, when ``A`` (its non-zero
columns) has full column rank, the release is an injective linear image of ``z + s`` with
``A s = m0 - m1``, so its epsilon is the product-Laplace epsilon of the shift ``s`` at scale 1
(injective post-processing preserves every hockey-stick divergence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.formal.exact_laws import ExactValue, LinearGaussian, ProductLaplace
from dpaudit.greybox.replay import Draw, ReplayGenerator

__all__ = ["DerivedLaw", "NotDerivable", "derive_law", "derive_pair", "PairLaw", "MAX_DRAWS",
           "DERIVED"]

#: ``exact_source`` of an epsilon computed from a law derived from the code.
DERIVED = "derived from the code"
#: Most scalar draws for which the unit-impulse map is built (one replay per draw).
MAX_DRAWS = 4096
#: Random replays that verify the output is affine in the draws (besides the recorded run).
REPLAYS = 3
#: Relative tolerance of the affinity check (floating-point summation order differs).
RTOL = 1e-7

Mechanism = Callable[[Any, int, np.random.Generator], Any]


@dataclass(frozen=True)
class NotDerivable:
    """Why no law is derived from the code, in one sentence (``reason``)."""

    reason: str


@dataclass(frozen=True)
class DerivedLaw:
    """The release on one input: ``mean + A z`` with ``z`` i.i.d. standard ``family``
    (``"gaussian"`` / ``"laplace"``); ``draws``: the recorded noise calls; ``replays``: how many
    mechanism calls the derivation took."""

    mean: np.ndarray
    A: np.ndarray
    family: str
    draws: tuple[Draw, ...] = field(repr=False)
    replays: int = 0

    @property
    def covariance(self) -> np.ndarray:
        """The noise covariance (Gaussian: ``A A^T``; Laplace: ``2 A A^T``)."""
        return (1.0 if self.family == "gaussian" else 2.0) * self.A @ self.A.T


def _flat(out: Any) -> np.ndarray:
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[0] != 1:
        raise ValueError(f"mechanism(data, 1, rng) must return one run (leading axis 1), got "
                         f"shape {arr.shape}")
    return arr.reshape(-1)


def _run(mechanism: Mechanism, data: Any, seed: int, supply: Any = None
         ) -> tuple[np.ndarray, ReplayGenerator]:
    g = ReplayGenerator(seed, supply)
    out = _flat(mechanism(data, 1, g))
    return out, g


def _signature(draws: list[Draw]) -> list[tuple[Any, ...]]:
    return [(d.method, d.shape, d.site) for d in draws]


def _zeros(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
    return np.zeros(shape)


def _impulse(i: int) -> Callable[[int, tuple[int, ...], str], np.ndarray]:
    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        z = np.zeros(int(np.prod(shape, dtype=np.int64)))
        if offset <= i < offset + z.size:
            z[i - offset] = 1.0
        return z.reshape(shape)
    return supply


def _fixed(z: np.ndarray) -> Callable[[int, tuple[int, ...], str], np.ndarray]:
    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        if offset + n > z.size:
            return np.zeros(shape)  # more draws than recorded: the signature check rejects it
        return z[offset:offset + n].reshape(shape)
    return supply


def _batched(mechanism: Mechanism, data: Any, seed: int, Z: np.ndarray, draws: list[Draw]
             ) -> np.ndarray | None:
    """Outputs of ``len(Z)`` runs in one call, run ``r`` with standardised draws ``Z[r]``, when
    every draw of a single run has a leading run axis (shape ``(1, ...)``, batched ``(n, ...)``);
    None when the batched call's noise calls do not line up that way."""
    n = Z.shape[0]
    if n < 2 or any(not d.shape or d.shape[0] != 1 for d in draws):
        return None
    calls = [0]

    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        j = calls[0]
        calls[0] += 1
        if j >= len(draws) or shape != (n,) + draws[j].shape[1:]:
            raise _Misaligned
        d = draws[j]
        return Z[:, d.offset:d.offset + d.size].reshape(shape)

    g = ReplayGenerator(seed, supply)
    try:
        out = np.asarray(mechanism(data, n, g), dtype=np.float64)
    except Exception:  # misaligned calls, or the code refuses n runs: one call per impulse
        return None
    if calls[0] != len(draws) or g.foreign or out.ndim == 0 or out.shape[0] != n:
        return None
    return out.reshape(n, -1)


class _Misaligned(Exception):
    """A batched replay's noise calls do not line up with a single run's."""


def derive_law(mechanism: Mechanism, data: Any, *, seed: int = 0) -> DerivedLaw | NotDerivable:
    """The law of ``mechanism`` on ``data`` derived by replay (module docstring), or why not."""
    try:
        return _derive(mechanism, data, seed)
    except Exception as exc:  # the user's code failed under replay: say so, derive nothing
        return NotDerivable(f"the release failed under replay ({type(exc).__name__}: "
                            f"{str(exc)[:120]}), so no law is derived from its code")


def _derive(mechanism: Mechanism, data: Any, seed: int) -> DerivedLaw | NotDerivable:
    real, g = _run(mechanism, data, seed)
    if g.foreign:
        return NotDerivable(f"the release draws rng.{g.foreign[0]}, which dpaudit does not "
                            "substitute, so its output is not a function of Gaussian or Laplace "
                            "draws alone")
    if not g.draws:
        other, _ = _run(mechanism, data, seed + 1)
        if not np.array_equal(real, other):
            return NotDerivable("the release draws its randomness from a source other than the "
                                "rng dpaudit passes (a global or its own generator), so dpaudit "
                                "cannot see into it")
        return NotDerivable("the release draws no noise from the rng dpaudit passes")
    families = {d.family for d in g.draws}
    if len(families) > 1:
        return NotDerivable("the release mixes Gaussian and Laplace draws, a law dpaudit does not "
                            "derive")
    family = families.pop()
    k = sum(d.size for d in g.draws)
    if k > MAX_DRAWS:
        return NotDerivable(f"the release makes {k} scalar noise draws, more than the "
                            f"{MAX_DRAWS} the replay maps one by one")
    signature = _signature(g.draws)
    z_real = np.concatenate([d.z.reshape(-1) for d in g.draws])
    mean, g0 = _run(mechanism, data, seed, _zeros)
    calls = 2
    if _signature(g0.draws) != signature:
        return NotDerivable("the noise calls the release makes depend on the values drawn, so "
                            "its output is not an affine map of a fixed set of draws")
    rng = np.random.default_rng(seed + 7)
    checks = [z_real] + [(10.0 if r % 2 else 1.0) *
                         (rng.standard_normal(k) if family == "gaussian" else rng.laplace(size=k))
                         for r in range(REPLAYS)]
    # All impulses in one batched call when the runs axis lines up (checked below on the random
    # replays, batched and single), else one call per impulse.
    A = None
    batch = _batched(mechanism, data, seed, np.eye(k), g.draws)
    if batch is not None and batch.shape[1] == mean.size:
        A_b = (batch - mean).T
        check = _batched(mechanism, data, seed, np.stack(checks[1:]), g.draws)
        calls += 2
        if check is not None and np.allclose(check, mean + np.stack(checks[1:]) @ A_b.T,
                                             rtol=RTOL, atol=RTOL * max(1.0, float(
                                                 np.abs(check).max()))):
            A = A_b
    if A is None:
        cols = []
        for i in range(k):
            out, gi = _run(mechanism, data, seed, _impulse(i))
            calls += 1
            if _signature(gi.draws) != signature:
                return NotDerivable("the noise calls the release makes depend on the values "
                                    "drawn, so its output is not an affine map of a fixed set "
                                    "of draws")
            cols.append(out - mean)
        A = np.stack(cols, axis=1)
    for j, z in enumerate(checks):
        out = real if j == 0 else _run(mechanism, data, seed, _fixed(z))[0]
        calls += j > 0
        predicted = mean + A @ z
        scale = max(1.0, float(np.abs(mean).max()), float(np.abs(A).sum(axis=1).max()
                                                           * np.abs(z).max()))
        if not np.allclose(out, predicted, rtol=RTOL, atol=RTOL * scale):
            return NotDerivable("the release is not affine in its noise draws (replaying them "
                                "gives an output off the linear map, as a clip, projection or "
                                "threshold after the noise does), so no law is derived")
    return DerivedLaw(mean, A, family, tuple(g.draws), calls)


@dataclass(frozen=True)
class PairLaw:
    """The derived laws of both inputs of a pair, with one noise map: ``epsilon(delta)`` is the
    exact epsilon of the release on the pair."""

    law0: DerivedLaw
    law1: DerivedLaw

    @property
    def family(self) -> str:
        return self.law0.family

    def epsilon(self, delta: float) -> ExactValue:
        m = (self.law0.mean, self.law1.mean)
        if self.family == "gaussian":
            v = LinearGaussian(mean=lambda i: m[i], covariance=self.law0.A @ self.law0.A.T
                               ).epsilon(0, 1, delta)
            return ExactValue(v.value, v.kind, v.upper, "law derived from the code: " + v.method)
        A = self.law0.A
        used = np.abs(A).max(axis=0) > 0
        B = A[:, used]
        shift = m[0] - m[1]
        if not shift.any():
            return ExactValue(0.0, "exact", 0.0, "law derived from the code: no shift")
        s, *_ = np.linalg.lstsq(B, shift, rcond=None)
        if not np.allclose(B @ s, shift, rtol=1e-9, atol=1e-9 * float(np.abs(shift).max())):
            return ExactValue(math.inf, "exact", math.inf, "law derived from the code: the shift "
                              "leaves the span of the Laplace noise")
        v = ProductLaplace(mean=lambda i: s if i == 0 else np.zeros_like(s), scale=1.0
                           ).epsilon(0, 1, delta)
        return ExactValue(v.value, v.kind, v.upper, "law derived from the code (injective image of "
                          f"{B.shape[1]} Laplace draws): " + v.method)


def derive_pair(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int = 0
                ) -> PairLaw | NotDerivable:
    """Both inputs' derived laws when they share one noise map (else why not)."""
    law0 = derive_law(mechanism, data0, seed=seed)
    if isinstance(law0, NotDerivable):
        return law0
    law1 = derive_law(mechanism, data1, seed=seed)
    if isinstance(law1, NotDerivable):
        return law1
    if law0.family != law1.family or law0.A.shape != law1.A.shape or not np.allclose(
            law0.A, law1.A, rtol=RTOL, atol=RTOL * max(1.0, float(np.abs(law0.A).max()))):
        return NotDerivable("the noise reaches the output differently on the two inputs (the map "
                            "from draws to output depends on the data), a law dpaudit does not "
                            "derive")
    if law0.family == "laplace":
        B = law0.A[:, np.abs(law0.A).max(axis=0) > 0]
        if B.size and np.linalg.matrix_rank(B) < B.shape[1]:
            return NotDerivable("the output mixes more Laplace draws than it has independent "
                                "coordinates (a non-injective image of Laplace noise), whose "
                                "law has no closed form here")
    return PairLaw(law0, law1)
