"""The law of a release derived from its code by controlled replay.

``mechanism(data, n, rng)`` is run once with a :class:`~dpaudit.greybox.replay.ReplayGenerator`:
a recorded run lists the noise calls (a guarded access or a draw the replay does not substitute
stops here, "not derivable"); all draws at zero give the noise-free output ``m``; unit impulses
give the columns of the map ``A`` from the standardised noise to the output (batched when the
release's runs line up, :mod:`dpaudit.greybox.run_layouts`); and ``REPLAYS`` random replays at two
scales must give ``m + A z`` within ``RTOL`` (:func:`rtol_for` for float32 noise), else the output
is not affine in the draws and no law is derived. The law is a hypothesis until the code's own
runs confirm it (:mod:`dpaudit.greybox.verification`). On a pair with one ``A`` the exact epsilon
follows: Gaussian, ``mu = ||(A A^T)^{+1/2} (m0 - m1)||`` (Dong, Roth & Su 2022, Cor. 3.3) through
Balle & Wang (2018, Thm 8); Laplace with ``A`` of full column rank, the product-Laplace epsilon of
the shift ``s`` with ``A s = m0 - m1``.

The four steps and why the exact epsilon follows: docs/greybox-notes.md#derivation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.evidence import EvidenceOrigin
from dpaudit.evidence_records import NoiseFamily
from dpaudit.formal.exact_laws import ExactValue, LinearGaussian, ProductLaplace
from dpaudit.greybox.replay import (GUARD_SENTENCE, Draw, Mechanism, ReplayGenerator,
                                    describe_foreign)
from dpaudit.greybox.run_layouts import Misaligned, as_runs, layouts_for, replay_runs
from dpaudit.greybox.sources import run_release

__all__ = ["DerivedLaw", "NotDerivable", "derive_law", "derive_pair", "PairLaw", "MAX_DRAWS",
           "DERIVED", "Progress"]

#: ``exact_source`` of an epsilon computed from a law derived from the code.
DERIVED = EvidenceOrigin.DERIVED.value
#: Most scalar draws for which the unit-impulse map is built.
MAX_DRAWS = 4096
#: Random replays that verify the output is affine in the draws (besides the recorded run).
REPLAYS = 3
#: Relative tolerance of the affinity check (floating-point summation order differs).
RTOL = 1e-7
#: Multiple of a low-precision dtype's machine epsilon allowed to the affinity check: float32
#: code rounds every operation at 6e-8 relative, and a map read from impulses cancels in
#: ``out - mean`` (measured on a 16-step float32 noisy-gradient trajectory: runs agree with the
#: map to 8e-8 of their magnitude over 5000 runs, the two inputs' maps to 3.2e-7; 256 ulps is
#: 3.1e-5, a hundredfold margin).
LOW_PRECISION_ULPS = 256


def rtol_for(precision: float) -> float:
    """The affinity tolerance for draws of machine epsilon ``precision`` (0: float64)."""
    return max(RTOL, LOW_PRECISION_ULPS * float(precision))
#: Impulses between two progress reports of the one-call-per-impulse fallback.
PROGRESS_EVERY = 64

#: ``progress(done, total, what)``: how far a long derivation is.
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class NotDerivable:
    """Why no law is derived from the code, in one sentence (``reason``); ``guarded``: the code
    reached the bits behind the rng, so no declared accountant describes it either."""

    reason: str
    guarded: bool = False


@dataclass(frozen=True)
class DerivedLaw:
    """The release on one input: ``mean + A z`` with ``z`` i.i.d. standard ``family``
    (``"gaussian"`` / ``"laplace"``); ``draws``: the recorded noise calls; ``replays``: how many
    mechanism calls the derivation took; ``layout``: how the release's ``n``-run calls line up
    with its single run (:mod:`dpaudit.greybox.run_layouts`; None: one run per call)."""

    mean: np.ndarray
    A: np.ndarray
    family: str
    draws: tuple[Draw, ...] = field(repr=False)
    replays: int = 0
    layout: str | None = None
    #: The relative tolerance of comparisons with the map (:func:`rtol_for` of the draws).
    rtol: float = RTOL

    @property
    def covariance(self) -> np.ndarray:
        """The noise covariance (Gaussian: ``A A^T``; Laplace: ``2 A A^T``)."""
        return (1.0 if self.family == NoiseFamily.GAUSSIAN else 2.0) * self.A @ self.A.T

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """The outputs the law gives standardised draws ``Z`` (one run per row)."""
        return self.mean + Z @ self.A.T

    def tolerance(self, Z: np.ndarray) -> np.ndarray:
        """Per run, the absolute slack of a comparison with :meth:`predict` (floating-point
        summation order): :attr:`rtol` times the largest magnitude the sum can reach."""
        row = float(np.abs(self.A).sum(axis=1).max()) if self.A.size else 0.0
        zmax = np.abs(Z).max(axis=1) if Z.shape[1] else np.zeros(Z.shape[0])
        return self.rtol * np.maximum(max(1.0, float(np.abs(self.mean).max(initial=0.0))),
                                      row * zmax)


def _run(mechanism: Mechanism, data: Any, seed: int, supply: Any = None
         ) -> tuple[np.ndarray, ReplayGenerator, bool]:
    """One run's output, its generator, and whether it consumed bits outside its noise calls
    (only meaningful when the draws are supplied)."""
    g = ReplayGenerator(seed, supply)
    before = g.bits_state()
    try:
        raw = run_release(mechanism, data, 1, g)
    except Exception as exc:
        if g.state_reads:
            raise _FailedAfterStateRead(f"{type(exc).__name__}: {str(exc)[:80]}") from exc
        raise
    out = as_runs(raw, 1)[0]
    return out, g, supply is not None and g.bits_state() != before


def _signature(draws: list[Draw]) -> list[tuple[Any, ...]]:
    return [(d.method, d.shape, d.site, d.source) for d in draws]


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


def guarded_reason(what: str) -> NotDerivable:
    """The sentence for a release that reached the bits behind its rng (``what``)."""
    return NotDerivable(f"the release reaches the bits behind the rng ({what}); {GUARD_SENTENCE}",
                        guarded=True)


class _FailedAfterStateRead(Exception):
    """The release failed under replay after reading the rng's state (a token a plain
    generator refuses: the state was meant for another generator)."""


_SECOND_GENERATOR = ("bit_generator.capsule", "bit_generator.lock", "bit_generator.ctypes",
                     "bit_generator.cffi")


def _foreign_reason(g: ReplayGenerator) -> NotDerivable:
    if g.guarded:
        what = g.guarded[0]
        if what in _SECOND_GENERATOR:
            what = f"a second Generator or RandomState on its bits, through rng.{what}"
        elif what.startswith("bit_generator"):
            what = f"rng.{what}"
        return guarded_reason(what)
    if g.foreign[0] == "integers" and g._record.seed_candidates:
        return NotDerivable("the release draws rng.integers and passes the value to no draw "
                            "source dpaudit intercepts (a jax PRNGKey, python's random.seed, a "
                            "torch.Generator or numpy generator made before the audit, or its "
                            "output), so the randomness it drives is not seen and its output "
                            "is not a function of Gaussian or Laplace draws alone")
    return NotDerivable(f"the release draws {describe_foreign(g.foreign[0])}, which dpaudit "
                        "does not substitute, so its output is not a function of Gaussian or "
                        "Laplace draws alone")


_CONSUMED = guarded_reason("its bits were consumed outside the noise calls")


def _batched_map(mechanism: Mechanism, data: Any, seed: int, k: int, mean: np.ndarray,
                 draws: list[Draw], checks: np.ndarray, rtol: float = RTOL
                 ) -> tuple[np.ndarray, str, int] | None:
    """``(A, layout, calls)`` from one call of ``k`` impulse runs in the first layout whose
    batched random replays ``checks`` agree with the map; None when no layout lines up."""
    calls = 0
    for layout in layouts_for(draws):
        try:
            batch = replay_runs(mechanism, data, seed, np.eye(k), draws, layout)
            calls += 1
            if batch.shape[1] != mean.size:
                continue
            A = (batch - mean).T
            law = DerivedLaw(mean, A, NoiseFamily.GAUSSIAN, (), rtol=rtol)
            out = replay_runs(mechanism, data, seed + 1, checks, draws, layout)
            calls += 1
        except Exception:  # misaligned calls, or the code refuses n runs: try the next layout
            continue
        if out.shape == (len(checks), mean.size) and np.all(
                np.abs(out - law.predict(checks)) <= law.tolerance(checks)[:, None]
                + rtol * np.abs(out)):
            return A, layout, calls
    return None


def derive_law(mechanism: Mechanism, data: Any, *, seed: int = 0,
               progress: Progress | None = None) -> DerivedLaw | NotDerivable:
    """The law of ``mechanism`` on ``data`` derived by replay, or why not.

    The steps: docs/greybox-notes.md#derivation. ``progress(done, total, what)`` hears of a long
    one-call-per-impulse derivation.
    """
    try:
        return _derive(mechanism, data, seed, progress)
    except _FailedAfterStateRead as exc:
        return guarded_reason(f"its state was read, then the release failed under replay: {exc}")
    except Exception as exc:  # the user's code failed under replay: say so, derive nothing
        return NotDerivable(f"the release failed under replay ({type(exc).__name__}: "
                            f"{str(exc)[:120]}), so no law is derived from its code")


def _derive(mechanism: Mechanism, data: Any, seed: int, progress: Progress | None
            ) -> DerivedLaw | NotDerivable:
    real, g, _ = _run(mechanism, data, seed)
    if g.foreign:
        return _foreign_reason(g)
    if not g.draws:
        other, _, _ = _run(mechanism, data, seed + 1)
        if not np.array_equal(real, other):
            return NotDerivable("the release draws its randomness from a source dpaudit does not "
                                "intercept (not the rng it passes, numpy's global functions, a "
                                "RandomState or default_rng made in the release, or torch's "
                                "CPU generators; such as a generator made before the audit, "
                                "python's random module, or jax keys), so dpaudit cannot see "
                                "into it")
        return NotDerivable("the release draws no noise from the rng dpaudit passes or any "
                            "source it intercepts")
    families = {d.family for d in g.draws}
    if len(families) > 1:
        return NotDerivable("the release mixes Gaussian and Laplace draws, a law dpaudit does not "
                            "derive")
    family = families.pop()
    k = g.scalars
    if k > MAX_DRAWS:
        return NotDerivable(f"the release makes {k} scalar noise draws, more than the "
                            f"{MAX_DRAWS} the replay maps")
    signature = _signature(g.draws)
    rtol = rtol_for(g._record.precision)
    z_real = np.zeros(k)
    for d in g.draws:  # by offset: a re-draw from a copied state repeats its block
        z_real[d.offset:d.offset + d.size] = d.z.reshape(-1)
    mean, g0, consumed = _run(mechanism, data, seed, _zeros)
    calls = 2
    if g0.foreign:
        return _foreign_reason(g0)
    if consumed:
        return _CONSUMED
    if _signature(g0.draws) != signature:
        return NotDerivable("the noise calls the release makes depend on the values drawn, so "
                            "its output is not an affine map of a fixed set of draws")
    if g.seeded:
        # A seed drawn from the rng drives an intercepted source: with every draw substituted the
        # output must not depend on it (else the value reaches the output another way).
        other, g2, _ = _run(mechanism, data, seed + 1, _zeros)
        calls += 1
        if g2.foreign or _signature(g2.draws) != signature or other.shape != mean.shape or \
                not np.allclose(other, mean, rtol=rtol, atol=rtol * max(1.0, float(
                    np.abs(mean).max(initial=0.0)))):
            return NotDerivable(f"the value of rng.integers the release passes as a seed to "
                                f"{g.seeded[0][0]} also reaches its output another way (the "
                                "noise-free output changes with it), so its output is not a "
                                "function of the noise draws alone")
    rng = np.random.default_rng(seed + 7)
    checks = [z_real] + [(10.0 if r % 2 else 1.0) *
                         (rng.standard_normal(k) if family == NoiseFamily.GAUSSIAN
                          else rng.laplace(size=k))
                         for r in range(REPLAYS)]
    batched = _batched_map(mechanism, data, seed, k, mean, g.draws, np.stack(checks[1:]), rtol)
    layout = None
    if batched is not None:
        A, layout, used = batched
        calls += used
    else:
        calls += 2 * len(layouts_for(g.draws))
        cols = []
        for i in range(k):
            if progress is not None and i % PROGRESS_EVERY == 0:
                progress(i, k, f"deriving the law from the code: impulse {i} of {k}")
            out, gi, consumed = _run(mechanism, data, seed, _impulse(i))
            calls += 1
            if gi.foreign:
                return _foreign_reason(gi)
            if consumed:
                return _CONSUMED
            if _signature(gi.draws) != signature:
                return NotDerivable("the noise calls the release makes depend on the values "
                                    "drawn, so its output is not an affine map of a fixed set "
                                    "of draws")
            cols.append(out - mean)
        A = np.stack(cols, axis=1)
    law = DerivedLaw(mean, A, family, tuple(g.draws), calls, layout, rtol)
    for j, z in enumerate(checks):
        if j == 0:
            out = real
        else:
            out, gj, consumed = _run(mechanism, data, seed, _fixed(z))
            calls += 1
            if gj.foreign or consumed:
                return _foreign_reason(gj) if gj.foreign else _CONSUMED
        Zj = z[None, :]
        if out.shape != mean.shape or not np.all(
                np.abs(out - law.predict(Zj)[0]) <= law.tolerance(Zj)[0] + rtol * np.abs(out)):
            return NotDerivable("the release is not affine in its noise draws (replaying them "
                                "gives an output off the linear map, as a clip, projection or "
                                "threshold after the noise does), so no law is derived")
    return DerivedLaw(mean, A, family, tuple(g.draws), calls, layout, rtol)


@dataclass(frozen=True)
class PairLaw:
    """The derived laws of both inputs of a pair, with one noise map: ``epsilon(delta)`` is the
    exact epsilon of the release on the pair."""

    law0: DerivedLaw
    law1: DerivedLaw

    @property
    def family(self) -> str:
        return self.law0.family

    @property
    def shapes_differ(self) -> bool:
        """The two inputs' outputs have different shapes (every run of each, by its law)."""
        return self.law0.mean.shape != self.law1.mean.shape

    def epsilon(self, delta: float) -> ExactValue:
        if self.shapes_differ:
            # Every run of data0 has one shape, every run of data1 another: the event "the
            # output has data0's shape" has probability 1 and 0, so delta(eps) = 1 at every eps.
            return ExactValue(math.inf, "exact", math.inf, "law derived from the code: the "
                              f"output has shape {self.law0.mean.shape} on data0 and "
                              f"{self.law1.mean.shape} on data1, so its shape reveals which ran")
        m = (self.law0.mean, self.law1.mean)
        if self.family == NoiseFamily.GAUSSIAN:
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


def derive_pair(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int = 0,
                progress: Progress | None = None) -> PairLaw | NotDerivable:
    """Both inputs' derived laws when they share one noise map (else why not)."""
    law0 = derive_law(mechanism, data0, seed=seed, progress=progress)
    if isinstance(law0, NotDerivable):
        return law0
    law1 = derive_law(mechanism, data1, seed=seed, progress=progress)
    if isinstance(law1, NotDerivable):
        return law1
    if law0.mean.shape != law1.mean.shape:
        return PairLaw(law0, law1)  # the output's shape depends on the data: epsilon infinite
    rtol = max(law0.rtol, law1.rtol)
    if law0.family != law1.family or law0.A.shape != law1.A.shape or not np.allclose(
            law0.A, law1.A, rtol=rtol, atol=rtol * max(1.0, float(np.abs(law0.A).max()))):
        return NotDerivable("the noise reaches the output differently on the two inputs (the map "
                            "from draws to output depends on the data), a law dpaudit does not "
                            "derive")
    if law0.family == NoiseFamily.LAPLACE:
        B = law0.A[:, np.abs(law0.A).max(axis=0) > 0]
        if B.size and np.linalg.matrix_rank(B) < B.shape[1]:
            return NotDerivable("the output mixes more Laplace draws than it has independent "
                                "coordinates (a non-injective image of Laplace noise), whose "
                                "law has no closed form here")
    return PairLaw(law0, law1)
