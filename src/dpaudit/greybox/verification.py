"""A law derived from the code is a hypothesis until the code's own runs confirm it.

:func:`~dpaudit.greybox.derivation.derive_law` reads ``output = m + A z`` from a handful of
replays, blind to a branch of small probability on the noise. This module runs the release on many
runs with i.i.d. standardised draws supplied through the replay and checks every output against
the map within :meth:`~dpaudit.greybox.derivation.DerivedLaw.tolerance`. A run off the map rejects
the law (certifying nothing); a clean pass on ``n`` runs bounds the probability of departing by
``p = 1 - a^(1/n)`` at confidence ``1 - a`` (Clopper-Pearson, 0 events in ``n``), which moves any
hockey-stick divergence by at most ``p (1 + e^eps)``: a violation read from the law counts only
when it survives that residual (:meth:`LawVerification.robust_epsilon`). Runs come in chunks of
growing size with their own seeds (``CHUNK``, ``PER_CALL_RUNS``), so code that behaves differently
for one run and for many shows.

The statement a clean pass makes and why the residual bounds the error:
docs/greybox-notes.md#verification.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from dpaudit.evidence_records import NoiseFamily

from dpaudit.greybox.derivation import DerivedLaw, PairLaw, Progress
from dpaudit.greybox.replay import Mechanism, ReplayGenerator
from dpaudit.greybox.run_layouts import Misaligned, as_runs, replay_runs
from dpaudit.greybox.sources import run_release

__all__ = ["Departure", "InputVerification", "LawVerification", "verify_input", "verify_pair",
           "verification_runs", "runs_to_confirm", "MAX_CONFIRM_SCALARS", "CHUNK", "MAX_SCALARS", "PER_CALL_RUNS", "MAX_CALLS",
           "VERIFIED_STATEMENT"]

#: The statement of the check that the law derived from the code describes every run.
VERIFIED_STATEMENT = ("the law derived from the code describes every run of the code (each "
                      "output equals the derived map applied to that run's draws)")
#: Most runs in one batched verification call.
CHUNK = 10_000
#: Most standardised scalars replayed per input (runs x draws per run): bounds cost and memory.
MAX_SCALARS = 50_000_000
#: Most replayed draws per input when a violation read from the law needs more runs to survive
#: the residual (the quick budget's; larger budgets scale it with their samples).
MAX_CONFIRM_SCALARS = 150_000_000
#: Most runs verified one call per run (a release whose runs do not batch).
PER_CALL_RUNS = 2_000
#: Most noise calls replayed per input when the release draws each run's noise in calls of its
#: own (a loop over runs): each is a Python call of the replaying generator.
MAX_CALLS = 200_000


@dataclass(frozen=True)
class Departure:
    """A run whose output is off the derived map: ``run`` (0-based), the first ``coordinate``
    off, its ``output`` and the map's ``predicted`` value there."""

    run: int
    coordinate: int
    output: float
    predicted: float


@dataclass(frozen=True)
class InputVerification:
    """The verification of one input: ``runs`` checked, ``departures`` among them, the
    ``first`` departure, ``failure`` (why a run could not be checked at all, else ``""``),
    ``target`` (runs asked for) and ``capped`` (fewer runs than asked, and why)."""

    label: str
    runs: int
    departures: int
    first: Departure | None
    failure: str
    target: int
    capped: str = ""

    @property
    def rejected(self) -> bool:
        return self.departures > 0 or bool(self.failure)

    def sentence(self) -> str:
        """The departure in words (empty when none)."""
        if self.failure:
            return f"on {self.label} {self.failure}"
        if not self.departures or self.first is None:
            return ""
        f = self.first
        return (f"the code departs from its own replay on {self.departures:,} of {self.runs:,} "
                f"runs of {self.label}: run {f.run} gives {f.output:.6g} at output coordinate "
                f"{f.coordinate}, the map {f.predicted:.6g}")


@dataclass(frozen=True)
class LawVerification:
    """The verification of a pair's derived law on its two inputs.

    It has the interface of a declared-law test (``rejected``, ``detail()``, ``power``,
    ``to_dict()``, ``runs``, ``inputs``) so the claim driver runs it in the claim's family; what
    it states: docs/greybox-notes.md#verification.
    """

    alpha: float
    per_input: tuple[InputVerification, ...]
    pair: PairLaw | None = field(default=None, repr=False)
    law: str = "derived law"
    #: Runs per input a violation read from the law would need to survive the residual, when
    #: that is beyond the budget's reach (else None).
    confirm_runs: int | None = None

    @property
    def inputs(self) -> int:
        return len(self.per_input)

    @property
    def runs(self) -> int:
        """Runs verified on the least-verified input."""
        return min((v.runs for v in self.per_input), default=0)

    @property
    def rejected(self) -> bool:
        return any(v.rejected for v in self.per_input)

    @property
    def residual(self) -> float:
        """``p``: the largest probability of a departure a clean pass leaves open on each input
        (confidence ``1 - alpha``, split over the inputs); 1 when rejected or nothing ran."""
        if self.rejected or self.runs <= 0:
            return 1.0
        a = self.alpha / max(1, self.inputs)
        return float(-math.expm1(math.log(a) / self.runs))

    def delta_residual(self, epsilon: float) -> float:
        """``p (1 + e^epsilon)``: how far the law's delta at ``epsilon`` may be from the code's."""
        return min(1.0, self.residual * (1.0 + math.exp(min(epsilon, 700.0))))

    def robust_epsilon(self, delta: float, *, iterations: int = 30) -> float | None:
        """A lower bound on the code's epsilon at ``delta`` that survives the residual: the
        largest ``e`` with ``eps_law(delta + p (1 + e^e)) >= e``, i.e. with the law's delta at
        ``e`` above ``delta + p (1 + e^e)``, so that the code's delta at ``e`` exceeds ``delta``
        (bisection below the law's own ``eps_law(delta)``; the condition is monotone in ``e``).
        None without a pair law or after a rejection."""
        if self.pair is None or self.rejected:
            return None
        pair = self.pair

        def holds(e: float) -> bool:
            d = delta + self.residual * (1.0 + math.exp(min(e, 700.0)))
            return d < 1.0 and float(pair.epsilon(d).value) >= e

        lo, hi = 0.0, float(pair.epsilon(delta).value)
        if not math.isfinite(hi):
            hi = 1e3
        if holds(hi):
            return hi
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if holds(mid) else (lo, mid)
        return lo

    def detail(self) -> str:
        """The first departure in one sentence (empty when none)."""
        return next((v.sentence() for v in self.per_input if v.rejected), "")

    @property
    def power(self) -> str:
        caps = [f"{v.label}: {v.capped}" for v in self.per_input if v.capped]
        text = (f"matched on all {self.runs:,} runs of each input: a departure of probability "
                f"above {self.residual:.3g} would have shown with probability at least "
                f"{1 - self.alpha:g}" if not self.rejected else
                "rejected: " + self.detail())
        return text + (" (" + "; ".join(caps) + ")" if caps and not self.rejected else "")

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.law, "rejected": self.rejected, "alpha": self.alpha,
                "runs_per_input": self.runs, "inputs": self.inputs, "power": self.power,
                "detail": self.detail(), "residual_probability": self.residual,
                "confirm_runs": self.confirm_runs,
                "per_input": [{"input": v.label, "runs": v.runs, "target": v.target,
                               "departures": v.departures, "failure": v.failure,
                               "capped": v.capped,
                               "first": None if v.first is None else vars(v.first)}
                              for v in self.per_input]}


def verification_runs(epsilon: float, delta: float, alpha: float, floor: int,
                      ceiling: int) -> int:
    """Runs per input that bring the delta residual ``p (1 + e^eps)`` to a tenth of ``delta``
    (``p ~ ln(2 / alpha) / n``), clamped to ``[floor, ceiling]`` (``delta = 0``: the ceiling)."""
    if delta <= 0:
        return ceiling
    need = math.log(2.0 / alpha) * (1.0 + math.exp(min(epsilon, 50.0))) * 10.0 / delta
    return int(min(ceiling, max(floor, math.ceil(need))))


def _draws(rng: np.random.Generator, family: str, shape: tuple[int, int]) -> np.ndarray:
    return (rng.standard_normal(shape) if family == NoiseFamily.GAUSSIAN
            else rng.laplace(size=shape))


def _single(mechanism: Mechanism, data: Any, law: DerivedLaw, z: np.ndarray, seed: int
            ) -> np.ndarray:
    """One run with draws ``z`` supplied by offset; Misaligned when its calls differ."""
    sig = [(d.method, d.shape, d.site, d.source) for d in law.draws]

    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        if offset + size > z.size:
            raise Misaligned("more noise than the derived law's")
        return z[offset:offset + size].reshape(shape)

    g = ReplayGenerator(seed, supply)
    before = g.bits_state()
    out = as_runs(run_release(mechanism, data, 1, g), 1)
    if g.foreign:
        raise Misaligned(f"a foreign draw ({g.foreign[0]})")
    if g.bits_state() != before:
        raise Misaligned("bits consumed outside the noise calls")
    if [(d.method, d.shape, d.site, d.source) for d in g.draws] != sig:
        raise Misaligned("other noise calls than the derived law's")
    return out


def runs_to_confirm(pair: PairLaw, epsilon: float, delta: float, alpha: float,
                    *, iterations: int = 40) -> int | None:
    """Runs per input after which a clean verification makes the law's violation of the claim
    ``(epsilon, delta)`` survive its residual: ``p (1 + e^epsilon) < delta_law(epsilon) - delta``
    with ``p ~ ln(2 / alpha) / n`` (10% margin); ``delta_law(epsilon)`` by bisection of the law's
    ``epsilon(delta)`` in ``log delta``. None when the law does not exceed the claim."""
    if float(pair.epsilon(delta).value) <= epsilon:
        return None
    lo, hi = math.log(max(delta, 1e-300)), 0.0  # eps_law(lo) > epsilon >= eps_law(hi = log 1)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(pair.epsilon(math.exp(mid)).value) > epsilon else (lo, mid)
    margin = math.exp(lo) - delta
    if margin <= 0:
        return None
    p_needed = 0.9 * margin / (1.0 + math.exp(min(epsilon, 700.0)))
    return int(math.ceil(1.1 * math.log(2.0 / alpha) / p_needed))


def verify_input(mechanism: Mechanism, data: Any, law: DerivedLaw, *, runs: int, seed: int,
                 label: str = "the input", progress: Progress | None = None,
                 max_scalars: int = MAX_SCALARS, max_calls: int = MAX_CALLS
                 ) -> InputVerification:
    """Check ``runs`` runs of ``mechanism`` on ``data`` against ``law``
    (docs/greybox-notes.md#verification)."""
    if not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    k = law.A.shape[1]
    target = runs
    capped = ""
    cap = max(1, max_scalars // max(1, k))
    if law.layout is None and runs > PER_CALL_RUNS:
        runs, capped = PER_CALL_RUNS, (f"{PER_CALL_RUNS:,} of {target:,} runs: the release's "
                                       "runs do not batch, so each costs one call")
    if runs > cap:
        runs, capped = cap, (f"{cap:,} of {target:,} runs: at most {max_scalars:,} replayed "
                             f"draws ({k} per run)")
    per_run_calls = len(law.draws) if law.layout != "vector" else 0
    if per_run_calls and runs * per_run_calls > max_calls:
        runs = max(1, max_calls // per_run_calls)
        capped = (f"{runs:,} of {target:,} runs: the release makes {per_run_calls:,} noise calls "
                  f"per run, and at most {max_calls:,} are replayed")
    rng = np.random.default_rng(seed)
    done = bad = 0
    first: Departure | None = None
    chunk_index = 0
    while done < runs:
        c = 1 if chunk_index == 0 else 7 if chunk_index == 1 else min(CHUNK, runs - done)
        c = min(c, runs - done)
        Z = _draws(rng, law.family, (c, k))
        bit_seed = seed + 7919 * (chunk_index + 1)
        try:
            if law.layout is None or c == 1:
                out = np.concatenate([_single(mechanism, data, law, Z[r], bit_seed + r)
                                      for r in range(c)])
            else:
                out = replay_runs(mechanism, data, bit_seed, Z, law.draws, law.layout)
        except Misaligned as exc:
            return InputVerification(label, done, bad, first,
                                     f"the release's noise calls on {c} run(s) do not line up "
                                     f"with the law derived from a single run ({exc})",
                                     target, capped)
        except Exception as exc:
            return InputVerification(label, done, bad, first,
                                     f"the release failed under replay on {c} run(s) "
                                     f"({type(exc).__name__}: {str(exc)[:100]})", target, capped)
        pred = law.predict(Z)
        if out.shape != pred.shape:
            return InputVerification(label, done, bad, first,
                                     f"the release returned {out.shape[1]} values per run, the "
                                     f"derived law {pred.shape[1]}", target, capped)
        ok = np.abs(out - pred) <= law.tolerance(Z)[:, None] + law.rtol * np.abs(out)
        rows = np.flatnonzero(~ok.all(axis=1))
        if rows.size:
            if first is None:
                r = int(rows[0])
                j = int(np.flatnonzero(~ok[r])[0])
                first = Departure(done + r, j, float(out[r, j]), float(pred[r, j]))
            bad += int(rows.size)
        done += c
        chunk_index += 1
        if progress is not None:
            progress(done, runs, f"verifying the derived law on {label}: {done:,} of {runs:,} "
                                 "runs")
    return InputVerification(label, done, bad, first, "", target, capped)


def verify_pair(mechanism: Mechanism, pair: PairLaw, inputs: Sequence[Any], *, runs: int,
                seed: int, alpha: float, labels: Sequence[str] = ("data0", "data1"),
                progress: Progress | None = None, max_scalars: int = MAX_SCALARS,
                max_calls: int = MAX_CALLS) -> LawVerification:
    """Verify both laws of ``pair`` on ``inputs = (data0, data1)`` at level ``alpha`` (caps:
    ``max_scalars`` replayed draws and ``max_calls`` per-run noise calls per input)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    laws = (pair.law0, pair.law1)
    checks = tuple(verify_input(mechanism, x, law, runs=runs, seed=seed + 104729 * i,
                                label=labels[i], progress=progress, max_scalars=max_scalars,
                                max_calls=max_calls)
                   for i, (x, law) in enumerate(zip(inputs, laws)))
    return LawVerification(alpha, checks, pair)
