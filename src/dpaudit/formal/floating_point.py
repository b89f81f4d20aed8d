"""Floating-point audit: outputs a float Laplace sampler reaches from one input and never from the
neighbouring one (Mironov 2012), found exactly, without sampling.

I. Mironov, *On Significance of the Least Significant Bits for Differential Privacy*, CCS 2012,
Sections 3-4: the textbook Laplace mechanism ``f(D) + Lap(b)`` in IEEE-754 doubles is not
epsilon-DP for any epsilon, because the set of doubles it can output depends on ``f(D)``. A float
sampler is modelled as a non-decreasing map of the integer ``k`` behind the uniform double
``u = k 2^-53`` (``"numpy"``: ``Generator.laplace``, reproduced bit for bit; ``"textbook"``: the
inverse CDF of Dwork & Roth 2014), so each output's exact probability on ``f0`` and on ``f1`` is a
count of ``k`` found by bisection. An output with probability zero on ``f1`` is an event refuting
``(epsilon, delta)``-DP for every epsilon and every ``delta`` below its probability on ``f0``:
exact evidence about the mechanism as implemented. ``noise="discrete"``
(:mod:`dpaudit.mechanisms.discrete`) avoids it.

The model of both samplers and why the probabilities are exact:
docs/formal-notes.md#floating-point-supports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Literal

import numpy as np

from dpaudit._validation import check_epsilon, check_int, check_positive

__all__ = ["FloatSampler", "SAMPLERS", "numpy_laplace", "textbook_laplace", "output_probability",
           "FloatingPointEvidence", "audit_float_laplace"]

FloatSampler = Literal["numpy", "textbook"]
_K_MIN, _K_END = 1, 1 << 53          # k ranges over [1, 2^53)
_TWO_M53 = 2.0 ** -53


_libm_log = np.frompyfunc(math.log, 1, 1)


def _log(x: np.ndarray) -> np.ndarray:
    """The C library's ``log`` elementwise (what numpy's C samplers call); ``np.log`` uses its
    own SIMD routine, which differs in the last bit for about 0.1% of arguments."""
    return np.asarray(_libm_log(x), dtype=np.float64)


def numpy_laplace(f: float, scale: float, k: np.ndarray) -> np.ndarray:
    """numpy's ``Generator.laplace(f, scale)`` for the uniform double ``u = k 2^-53``."""
    u = np.asarray(k, dtype=np.int64).astype(np.float64) * _TWO_M53
    upper = u >= 0.5
    arg = np.where(upper, 2.0 - u - u, u + u)
    logs = _log(arg)
    return np.where(upper, f - scale * logs, f + scale * logs)


def textbook_laplace(f: float, scale: float, k: np.ndarray) -> np.ndarray:
    """Inverse-CDF Laplace ``f - b sgn(u') ln(1 - 2|u'|)``, ``u' = k 2^-53 - 1/2``."""
    u = np.asarray(k, dtype=np.int64).astype(np.float64) * _TWO_M53 - 0.5
    return f - scale * np.sign(u) * _log(1.0 - 2.0 * np.abs(u))


SAMPLERS: dict[str, Callable[[float, float, np.ndarray], np.ndarray]] = {
    "numpy": numpy_laplace, "textbook": textbook_laplace}


def _first_k(sampler, f: float, scale: float, y: np.ndarray, strict: bool) -> np.ndarray:
    """Smallest k in [1, 2^53] with y(k) >= y (or > y when ``strict``), by bisection."""
    lo = np.full(y.shape, _K_MIN, dtype=np.int64)
    hi = np.full(y.shape, _K_END, dtype=np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        val = sampler(f, scale, np.minimum(mid, _K_END - 1))
        go_left = (val > y) if strict else (val >= y)
        go_left |= mid >= _K_END
        hi = np.where(go_left, mid, hi)
        lo = np.where(go_left, lo, mid + 1)
    return lo


def output_probability(sampler: FloatSampler, f: float, scale: float, y: Any
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``P[M(f) = y]`` in units of 2^-53 (int64), and the first k of each preimage."""
    fn = SAMPLERS[sampler]
    y = np.asarray(y, dtype=np.float64)
    first = _first_k(fn, f, scale, y, strict=False)
    end = _first_k(fn, f, scale, y, strict=True)
    _check_monotone(fn, f, scale, np.concatenate([first, end]))
    return end - first, first


def _check_monotone(fn, f: float, scale: float, ks: np.ndarray, radius: int = 4) -> None:
    """The bisection is exact only where y(k) is non-decreasing: check around every end used."""
    offsets = np.arange(-radius, radius + 1)
    grid = np.clip(ks[:, None] + offsets[None, :], _K_MIN, _K_END - 1)
    vals = fn(f, scale, grid)
    if np.any(np.diff(vals, axis=1) < 0):
        raise ArithmeticError("the floating-point sampler is not monotone in its uniform draw "
                              "near a preimage end; the exact support audit does not apply")


@dataclass(frozen=True)
class FloatingPointEvidence:
    """Exact support evidence for one pair of inputs.

    The model and why it is exact: docs/formal-notes.md#floating-point-supports.
    """

    sampler: str
    inputs: tuple[float, float]
    scale: float
    claimed_epsilon: float | None
    window_start: int
    window_size: int
    outputs_examined: int
    unreachable: int
    unreachable_mass: Fraction
    max_log_ratio_both_reachable: float
    examples: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def violated(self) -> bool:
        """True when some output of input 0 is impossible on input 1 (no epsilon holds), or a
        ratio of exact probabilities exceeds the claimed epsilon."""
        if self.unreachable:
            return True
        return (self.claimed_epsilon is not None
                and self.max_log_ratio_both_reachable > self.claimed_epsilon)

    def summary(self) -> str:
        f0, f1 = self.inputs
        if self.unreachable:
            return (f"The {self.sampler} floating-point Laplace sampler (scale {self.scale:g}) "
                    f"outputs {self.unreachable} of {self.outputs_examined} doubles examined on "
                    f"input {f0:g} that it can never output on input {f1:g}: it is not "
                    f"epsilon-DP for any epsilon, nor (epsilon, delta)-DP for delta < "
                    f"{float(self.unreachable_mass):.3g} (exact, Mironov 2012).")
        return (f"Every one of the {self.outputs_examined} doubles examined is reachable from both "
                f"inputs; the largest exact log ratio is "
                f"{self.max_log_ratio_both_reachable:.4g}.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "floating-point support (exact)",
            "reference": "Mironov, On Significance of the Least Significant Bits for Differential "
                         "Privacy, CCS 2012",
            "sampler": self.sampler,
            "inputs": list(self.inputs),
            "scale": self.scale,
            "claimed_epsilon": self.claimed_epsilon,
            "window": {"first_k": self.window_start, "size": self.window_size,
                       "uniform": "u = k 2^-53, k uniform on [1, 2^53)"},
            "outputs_examined": self.outputs_examined,
            "unreachable_from_input_1": self.unreachable,
            "unreachable_mass_on_input_0": str(self.unreachable_mass),
            "delta_lower_bound": float(self.unreachable_mass),
            "epsilon": "inf" if self.unreachable else self.max_log_ratio_both_reachable,
            "max_log_ratio_both_reachable": self.max_log_ratio_both_reachable,
            "verdict": "violated" if self.violated else "not violated",
            "examples": [dict(e) for e in self.examples],
            "summary": self.summary(),
        }


def audit_float_laplace(f0: float = 0.0, f1: float = 1.0, scale: float = 1.0, *,
                        claimed_epsilon: float | None = None, sampler: FloatSampler = "numpy",
                        window_start: int | None = None, window_size: int = 1 << 12,
                        max_examples: int = 5) -> FloatingPointEvidence:
    """Exact support audit of a float Laplace sampler on the neighbouring answers ``f0``, ``f1``.

    Parameters
    ----------
    f0, f1 : float
        The query answers on the two neighbouring inputs (finite, different).
    scale : float
        Laplace scale ``b`` > 0; the claim is usually ``epsilon = |f0 - f1| / b``.
    claimed_epsilon : float, optional
        Also flag exact probability ratios above it among outputs reachable from both.
    sampler : "numpy" or "textbook"
        Which float sampler to model (docs/formal-notes.md#floating-point-supports).
    window_start, window_size : int
        The consecutive uniform draws ``k`` whose outputs on ``f0`` are examined (default: a
        window starting at ``u = 3/4``). Each output's probabilities are computed exactly over
        all 2^53 draws, not only the window.
    max_examples : int
        Unreachable outputs quoted in the evidence (as exact hexadecimal doubles).

    Returns
    -------
    FloatingPointEvidence
        ``violated`` is True when an output of ``f0`` is impossible on ``f1``.
    """
    f0 = float(f0)
    f1 = float(f1)
    if not (math.isfinite(f0) and math.isfinite(f1)) or f0 == f1:
        raise ValueError(f"f0 and f1 must be different finite numbers, got {f0!r} and {f1!r}")
    scale = check_positive(scale, "scale")
    if claimed_epsilon is not None:
        claimed_epsilon = check_epsilon(claimed_epsilon, "claimed_epsilon")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {sorted(SAMPLERS)}, got {sampler!r}")
    window_size = check_int(window_size, "window_size", minimum=1, maximum=1 << 22)
    if window_start is None:
        window_start = 3 << 51   # u = 3/4
    window_start = check_int(window_start, "window_start", minimum=_K_MIN,
                             maximum=_K_END - window_size)
    max_examples = check_int(max_examples, "max_examples", minimum=0)

    ks = np.arange(window_start, window_start + window_size, dtype=np.int64)
    ys = np.unique(SAMPLERS[sampler](f0, scale, ks))
    p0, _ = output_probability(sampler, f0, scale, ys)
    p1, _ = output_probability(sampler, f1, scale, ys)
    if np.any(p0 <= 0):
        raise ArithmeticError("an output of the window has no preimage on its own input")
    unreachable = p1 == 0
    both = ~unreachable
    ratios = np.abs(np.log(p0[both].astype(float) / p1[both].astype(float))) if both.any() else []
    examples = tuple(
        {"output": float(y).hex(), "output_decimal": repr(float(y)),
         "probability_on_input_0": f"{int(m)} * 2^-53", "probability_on_input_1": "0"}
        for y, m in zip(ys[unreachable][:max_examples], p0[unreachable][:max_examples]))
    return FloatingPointEvidence(
        sampler=sampler, inputs=(f0, f1), scale=scale, claimed_epsilon=claimed_epsilon,
        window_start=int(window_start), window_size=int(window_size),
        outputs_examined=int(ys.size), unreachable=int(unreachable.sum()),
        unreachable_mass=Fraction(int(p0[unreachable].sum()), 1 << 53),
        max_log_ratio_both_reachable=float(np.max(ratios)) if len(ratios) else 0.0,
        examples=examples)
