"""AFKT23 Algorithm 4: the binary-tree experts algorithm (App. B.1), made concrete.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Appendix B.1, Algorithm 4 "Binary-tree
algorithm for zero loss experts (sketch)": phases in which the exponential mechanism selects a set
of ``B`` unused experts and a binary tree per chosen expert gives private running sums of its
losses, the phase lasting while the smallest sum stays below a threshold. The paper gives no
parameters, no privacy statement beyond "also achieves regret O(poly(log(dT))/eps)" and no proof:
every number here is **ours** (set size, phase cap ``max_phases``, the calibration of
:func:`binary_tree_parameters`, half of ``epsilon`` for the selections and half for the trees),
stated so it can be audited; there is no published claim to test, and none is registered.

The sketch as printed and every choice made concrete:
docs/paper-readings.md#afkt23-binary-tree-experts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from dpaudit._validation import check_epsilon, check_int, check_positive, check_probability
from dpaudit.learners.experts import ExpertsLearner, SwitchRecord, cumulative_losses
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.laplace import sample_laplace

__all__ = ["BinaryTreeParameters", "binary_tree_parameters", "BinaryTreeExperts"]


@dataclass(frozen=True)
class BinaryTreeParameters:
    """Our explicit parameters for Algorithm 4 (the paper gives none)."""

    epsilon: float
    d: int
    T: int
    set_size: int
    max_phases: int
    eta: float
    tree_scale: float
    threshold: float
    beta: float

    def to_dict(self) -> dict:
        return asdict(self)


def binary_tree_parameters(epsilon: float, d: int, T: int, *, set_size: int | None = None,
                           max_phases: int | None = None, beta: float = 0.1) -> BinaryTreeParameters:
    """Our default calibration (docs/paper-readings.md). ``set_size`` default ``ceil(log2(d T))``,
    ``max_phases`` default ``ceil(log2 d) + 1``."""
    epsilon = check_epsilon(epsilon)
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=1)
    beta = check_probability(beta, "beta")
    B = check_int(set_size if set_size is not None else max(1, math.ceil(math.log2(d * T))), "set_size", minimum=1)
    B = min(B, d)
    P = check_int(max_phases if max_phases is not None else math.ceil(math.log2(max(d, 2))) + 1,
                  "max_phases", minimum=1)
    h = T.bit_length()
    eta = epsilon / (2.0 * P * B)
    scale = 2.0 * B * h / epsilon
    return BinaryTreeParameters(epsilon=epsilon, d=d, T=T, set_size=B, max_phases=P, eta=eta,
                                tree_scale=scale, threshold=scale * h * math.log(2 * B * T / beta),
                                beta=beta)


class BinaryTreeExperts(ExpertsLearner):
    """Algorithm 4 with explicit parameters and a phase cap (docs/paper-readings.md)."""

    name = "AFKT23-Alg4"
    private = True

    def __init__(self, params: BinaryTreeParameters, *, clip: bool = True) -> None:
        super().__init__(clip=clip)
        if not isinstance(params, BinaryTreeParameters):
            raise TypeError("params must be a BinaryTreeParameters (use binary_tree_parameters(...))")
        check_positive(params.tree_scale, "tree_scale")
        self.params = params
        self._em = ExponentialMechanism(1.0, params.eta, form="half")

    def _select_sets(self, scores: np.ndarray, used: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``B`` draws without replacement per row among unused experts; -1 pads. ``(m, B)``."""
        m, d = used.shape
        B = self.params.set_size
        out = np.full((m, B), -1, dtype=np.int64)
        avail = ~used.copy()
        logw = -0.5 * self.params.eta * scores
        for b in range(B):
            has = avail.any(axis=1)
            if not has.any():
                break
            g = np.where(avail, logw[None, :] + rng.gumbel(size=(m, d)), -np.inf)
            pick = np.argmax(g, axis=1)
            pick = np.where(has, pick, -1)
            out[:, b] = pick
            rows = np.flatnonzero(has)
            avail[rows, pick[rows]] = False
        return out

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        p = self.params
        T, d = losses.shape
        if d != p.d:
            raise ValueError(f"losses must have d={p.d} columns, got {d}")
        C = cumulative_losses(losses)
        B = p.set_size
        levels = T.bit_length()
        out_by_round = np.empty((T, n_runs), dtype=np.int64)   # a contiguous row per round
        used = np.zeros((n_runs, d), dtype=bool)
        sets = np.full((n_runs, B), -1, dtype=np.int64)
        leaves = np.zeros(n_runs, dtype=np.int64)          # leaves added in the current phase
        clean = np.zeros((levels, n_runs, B))
        noisy = np.zeros((levels, n_runs, B))
        phases = np.zeros(n_runs, dtype=np.int64)
        need_new = np.ones(n_runs, dtype=bool)
        frozen = np.zeros(n_runs, dtype=bool)
        switch_rounds = np.zeros((n_runs, T), dtype=bool)
        x = np.zeros(n_runs, dtype=np.int64)
        all_rows = np.arange(n_runs)
        for t in range(1, T + 1):
            start = need_new & ~frozen & (phases < p.max_phases)
            cand = np.flatnonzero(start)
            if cand.size:   # ... and some expert unused (checked on the candidates only)
                start[cand] = ~used[cand].all(axis=1)
            frozen |= need_new & ~start & (phases > 0)
            if start.any():
                idx = np.flatnonzero(start)
                sets[idx] = self._select_sets(C[t - 1], used[idx], rng)
                ok = sets[idx] >= 0
                rr, cc = np.nonzero(ok)
                used[idx[rr], sets[idx][rr, cc]] = True
                phases[idx] += 1
                leaves[idx] = 0
                clean[:, idx] = 0.0
                noisy[:, idx] = 0.0
                switch_rounds[idx, t - 1] = True
            # noisy running sums c_{t,x} of the phase's losses before round t: the noisy nodes of
            # the set bits of `leaves`, lowest level first. A level whose bit is clear holds +0.0
            # (zeroed when consumed by a higher node or at a phase start), and adding +0.0 to a
            # partial sum (never -0.0: it starts at +0.0) changes no bit, so summing every level
            # in order is the masked sum, without the masks.
            csum = np.zeros((n_runs, B))
            for level in range(levels):
                csum += noisy[level]
            live = sets >= 0
            csum = np.where(live, csum, np.inf)
            best = np.argmin(csum, axis=1)
            best_set = sets[all_rows, best]
            x = np.where(best_set >= 0, best_set, x)
            out_by_round[t - 1] = x
            need_new = ~(csum[all_rows, best] <= p.threshold)  # the row minima
            # add this round's losses as a leaf of every live tree (p-sum update)
            leaf_vals = np.where(live, losses[t - 1][np.maximum(sets, 0)], 0.0)
            new = leaves + 1
            lvl = np.frexp((new & -new).astype(np.float64))[1] - 1   # exact: powers of two
            for level in range(levels):
                rows = np.flatnonzero(lvl == level)
                if rows.size == 0:
                    continue
                # every run at the same level (the common case): views instead of gathers
                sel = slice(None) if rows.size == n_runs else rows
                node = leaf_vals[sel] + clean[:level, sel].sum(axis=0)
                clean[:level, sel] = 0.0
                noisy[:level, sel] = 0.0
                clean[level, sel] = node
                noisy[level, sel] = node + sample_laplace(p.tree_scale, (rows.size, B), rng)
            leaves = new
        self.record = SwitchRecord(selections=phases * B, selection_budget=p.max_phases * B,
                                   switch_rounds=switch_rounds, phases=phases,
                                   extra={"phase_cap": p.max_phases})
        return np.ascontiguousarray(out_by_round.T)
