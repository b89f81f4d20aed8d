"""Exact unconditional joint test of ``P[M(D) in S] <= e^eps P[M(D') in S] + delta``.

An audit observes one event's counts ``X ~ Bin(n_p, p)`` on ``D`` and ``Y ~ Bin(n_q, q)`` on
``D'``. The product of two Clopper-Pearson intervals
(:func:`dpaudit.blackbox.confidence.epsilon_lower_bound`) spends the level twice;
:func:`joint_epsilon_lower_bound` calibrates the same statistic exactly on the two counts jointly,
an unconditional test (Barnard, Biometrika 34, 1947; Boschloo, Statistica Neerlandica 24, 1970:
the nuisance parameter is maximised over, not conditioned on), as ``../shared/AUDIT-METHOD.md``
section 3 allows. Its p-value is bounded from above over cells of the nuisance parameter (every
computational step only increases it), and the bound is at least the Clopper-Pearson product's,
valid at level ``alpha`` with nothing asymptotic. Level checks: ``tests/test_joint_test.py``,
``tests/test_joint_test_level.py`` and ``tests/test_joint_test_cells.py``.

The statistic, the proof of validity and how the p-value is bounded:
docs/blackbox-notes.md#exact-joint-test.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from dpaudit._validation import check_delta, check_int, check_probability
from dpaudit.blackbox.confidence import Bonferroni, clopper_pearson_lower, clopper_pearson_upper

__all__ = ["joint_epsilon_lower_bound", "JointTest"]

#: Tail of ``Y`` left outside a cell's window, per side (Bernstein's inequality; the mass
#: actually outside is computed exactly and counted as rejection, so this only sets the cost).
_TAIL_LOG = 28.0
#: Blocks of consecutive ``y`` per standard deviation of ``Y`` (blocks of one ``y`` at small n).
_BLOCKS_PER_SD = 6.0
#: Blocks per group (see :meth:`JointTest._bounds`) and the looseness a group may keep, as a
#: fraction of the level.
GROUP = 8
GROUP_SLACK = 1e-5
#: Fewest initial cells in ``theta = arcsin(sqrt(q))`` across the nuisance set.
_CELLS = 4
#: Berger and Boos's gamma as a fraction of alpha: the nuisance set's error probability.
GAMMA_FRACTION = 0.02
#: Finest cell width, in standard errors of ``arcsin sqrt(Y / n_q)`` (``1 / (2 sqrt(n_q))``).
_FINEST = 0.1
#: Rounding allowance added to every cell bound: relative to its binomial sum, and absolute
#: (far above the float error of a sum of at most a few thousand binomial tail values from Boost,
#: each accurate to ~1e-13 relative; it only raises the p-value). scipy.special's cephes
#: ``bdtr``/``bdtrc`` are NOT used: at n = 10^6 they are up to 3.3e-9 off in either direction
#: (against exact mpmath sums), above this allowance (``tests/test_joint_test_cells.py``).
ROUND_REL = 1e-9
ROUND_ABS = 1e-12


def _binom_cdf(k: np.ndarray, n: int, q: np.ndarray) -> np.ndarray:
    """``P[Bin(n, q) <= k]`` by Boost's incomplete beta (``scipy.stats.binom``), ~1e-13 relative."""
    return stats.binom.cdf(k, n, q)


def _binom_sf(k: np.ndarray, n: int, q: np.ndarray) -> np.ndarray:
    """``P[Bin(n, q) > k]`` by Boost's incomplete beta (``scipy.stats.binom``), ~1e-13 relative."""
    return stats.binom.sf(k, n, q)


def _bernstein_halfwidth(n: int, q: np.ndarray) -> np.ndarray:
    """``t`` with ``P[|Y - n q| >= t] <= 2 exp(-_TAIL_LOG)`` for ``Y ~ Bin(n, q)`` (Bernstein:
    ``exp(-t^2 / (2 (n q (1 - q) + t / 3)))`` per side)."""
    c = _TAIL_LOG / 3.0
    return c + np.sqrt(c * c + 2.0 * _TAIL_LOG * n * q * (1.0 - q))


class JointTest:
    """The exact joint test for one observed pair of counts.

    The test and its validity: docs/blackbox-notes.md#exact-joint-test.

    ``pvalue_upper(eps)`` returns an upper bound on the p-value of ``H0(eps)`` that is exact
    enough to decide at ``alpha``; :meth:`lower_bound` inverts it. What does not depend on
    ``eps`` is computed once per test and reused by every p-value: the rejection boundary ``f``
    at the block starts of one grid of ``y`` shared by all cells, and each cell's block masses
    of ``Y`` (the cells refined for one ``eps`` stay refined for the next).
    """

    def __init__(self, count_p: int, nobs_p: int, count_q: int, nobs_q: int, delta: float,
                 alpha: float) -> None:
        self.n_p = check_int(nobs_p, "nobs_p", minimum=1)
        self.n_q = check_int(nobs_q, "nobs_q", minimum=1)
        self.x = check_int(count_p, "count_p", minimum=0, maximum=self.n_p)
        self.y = check_int(count_q, "count_q", minimum=0, maximum=self.n_q)
        self.delta = check_delta(delta)
        self.alpha = check_probability(alpha, "alpha")
        #: Berger-Boos: the nuisance q is restricted to a (1 - gamma) Clopper-Pearson set.
        self.gamma = self.alpha * GAMMA_FRACTION
        self.a = Bonferroni(self.alpha - self.gamma).per_interval_alpha
        self.t_obs = self.statistic(self.x, self.y)
        g = self.gamma / 2
        self.q_range = (float(clopper_pearson_lower(self.y, self.n_q, g)),
                        float(clopper_pearson_upper(self.y, self.n_q, g)))
        self.theta = (math.asin(math.sqrt(self.q_range[0])), math.asin(math.sqrt(self.q_range[1])))
        self._cache: dict[int, int] = {}
        self._grid: tuple[np.ndarray, np.ndarray, int] | None = None
        self._leaves: dict[str, np.ndarray] | None = None

    def statistic(self, x: int, y: int) -> float:
        """``T(x, y) = ln((L_a(x) - delta) / U_a(y))``, ``-inf`` when ``L_a(x) <= delta``."""
        lo = float(clopper_pearson_lower(x, self.n_p, self.a))
        hi = float(clopper_pearson_upper(y, self.n_q, self.a))
        return math.log((lo - self.delta) / hi) if lo > self.delta else -math.inf

    # -- the rejection region {x >= f(y)} of T >= t_obs ----------------------------------------
    def _lower(self, x: np.ndarray) -> np.ndarray:
        """``L_a(x)`` for integer ``x`` in ``[1, n_p]`` (the statistic's own function)."""
        xf = x.astype(np.float64)
        return special.betaincinv(xf, self.n_p - xf + 1.0, self.a)

    def _f_of(self, ys: np.ndarray) -> np.ndarray:
        """``f(y)``: smallest ``x`` in ``[1, n_p]`` with ``L_a(x) >= delta + e^t U_a(y)``, or
        ``n_p + 1`` when there is none. A start from the binomial quantile
        (``L_a(x) >= c`` iff ``P_c[X >= x] <= a``) is corrected with ``L_a`` itself, so ``f``
        agrees exactly with the statistic as computed."""
        uniq, inv = np.unique(np.asarray(ys, dtype=np.int64), return_inverse=True)
        known = np.array([int(v) in self._cache for v in uniq], dtype=bool)
        out = np.empty(uniq.size, dtype=np.int64)
        out[known] = [self._cache[int(v)] for v in uniq[known]]
        if not np.all(known):
            out[~known] = self._compute_f(uniq[~known])
            for v, fv in zip(uniq[~known], out[~known]):
                self._cache[int(v)] = int(fv)
        return out[inv].reshape(np.shape(ys))

    def _compute_f(self, uniq: np.ndarray) -> np.ndarray:
        # The region {T >= t_obs} must contain the observed point itself, whose T was rounded
        # through exp(log(.)): a relative slack of 1e-9 (which only enlarges the region, so only
        # raises the p-value) absorbs the rounding.
        target = self.delta + math.exp(self.t_obs) * (1.0 - 1e-9) * np.asarray(
            clopper_pearson_upper(uniq, self.n_q, self.a), dtype=np.float64).reshape(-1)
        f = np.full(uniq.size, self.n_p + 1, dtype=np.int64)
        live = target < 1.0
        if np.any(live):
            t = target[live]
            g = np.asarray(stats.binom.isf(self.a, self.n_p, t), dtype=np.float64)
            g = np.clip(np.nan_to_num(g, nan=self.n_p) + 1, 1, self.n_p + 1).astype(np.int64)
            for _ in range(64):  # move up while L_a(g) < target, down while L_a(g - 1) >= target
                up = (g <= self.n_p) & (self._lower(np.minimum(g, self.n_p)) < t)
                down = (g >= 2) & (self._lower(np.maximum(g - 1, 1)) >= t)
                down &= ~up
                if not (np.any(up) or np.any(down)):
                    break
                g = g + up - down
            else:  # pragma: no cover - the quantile start is within a few steps
                raise RuntimeError("joint test: the rejection boundary did not converge")
            f[live] = g
        return f

    # -- block grid of y and cells of the nuisance parameter -------------------------------------
    def _block_grid(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Block starts ``E`` of one grid of ``y`` covering every cell's window (last entry one
        past the grid), ``f`` at each block start, and the blocks per cell window."""
        if self._grid is None:
            n = self.n_q
            qs = np.array([self.q_range[0], self.q_range[1],
                           min(max(0.5, self.q_range[0]), self.q_range[1])])
            half = _bernstein_halfwidth(n, qs)
            y0 = max(0, math.floor(n * qs[0] - half[0]))
            y1 = min(n, math.ceil(n * qs[1] + half[1]))
            sd_min = math.sqrt(n * min(qs[0] * (1 - qs[0]), qs[1] * (1 - qs[1])))
            w = max(1, int(sd_min / _BLOCKS_PER_SD))
            edges = np.arange(y0, y1 + w + 1, w, dtype=np.int64)
            edges = np.minimum(edges, n + 1)
            edges = edges[: int(np.searchsorted(edges, n + 1)) + 1]
            f = self._f_of(edges[:-1])
            per_cell = min(int(math.ceil(2.0 * float(half.max()) / w)) + 3, edges.size - 1)
            per_cell = -(-per_cell // GROUP) * GROUP  # whole groups (padding has no mass)
            self._grid = (edges, f, per_cell)
        return self._grid

    def _cell_rows(self, q0: np.ndarray) -> dict[str, np.ndarray]:
        """Per cell (lower end ``q0``): the block indices of its window, ``P_{q0}[Y in block]``
        and the mass of ``Y`` outside the window (counted as rejection)."""
        edges, _, per = self._block_grid()
        n = self.n_q
        nb = edges.size - 1
        w = int(edges[1] - edges[0]) if nb > 1 else 1
        lo = np.floor(n * q0 - _bernstein_halfwidth(n, q0))
        start = np.clip(((lo - edges[0]) // w).astype(np.int64), 0, max(nb - per, 0))
        idx = start[:, None] + np.arange(per + 1)[None, :]
        e = edges[np.minimum(idx, nb)]  # (cells, per + 1) edges, clipped at the grid's end
        k = e - 1
        cdf = np.where(k < 0, 0.0, np.where(k >= n, 1.0,
                                            _binom_cdf(np.clip(k, 0, n), n, q0[:, None])))
        above = np.where(k[:, -1] >= n, 0.0,
                         _binom_sf(np.clip(k[:, -1], 0, n), n, q0))
        mass = np.clip(np.diff(cdf, axis=1), 0.0, 1.0)
        return {"block": np.minimum(idx[:, :-1], nb - 1), "mass": mass,
                "outside": cdf[:, 0] + above}

    def cell_bounds(self, q0: np.ndarray, q1: np.ndarray, eps: float) -> np.ndarray:
        """Upper bounds on ``sup_{q in [q0, q1]} P_{p(q), q}[T(X, Y) >= t_obs]`` per cell, with
        ``p(q) = min(1, e^eps q + delta)``: ``P_{p(q1), q0}`` summed over blocks of ``y``, each
        block at its own smallest ``f``, plus the mass outside the window, plus the rounding
        allowance."""
        q0 = np.atleast_1d(np.asarray(q0, dtype=np.float64))
        q1 = np.atleast_1d(np.asarray(q1, dtype=np.float64))
        return self._bounds(self._cell_rows(q0), q1, eps)

    def _bounds(self, rows: dict[str, np.ndarray], q1: np.ndarray, eps: float) -> np.ndarray:
        """The cell bounds of :meth:`cell_bounds` for cells whose rows are computed. The blocks
        come in groups of ``GROUP``; ``P[X >= f]`` is first computed at each group's first
        block only, which bounds the whole group from above (``f`` is non-decreasing) and the
        next group's first value bounds it from below; a group is summed block by block only
        where those two bounds differ by more than ``GROUP_SLACK`` of the level (elsewhere the
        group's upper bound is used, a coarser block, so still an upper bound)."""
        _, f, per = self._block_grid()
        p1 = np.minimum(1.0, math.exp(eps) * q1 + self.delta)
        block, mass = rows["block"], rows["mass"]
        cells, groups = block.shape[0], per // GROUP
        fb = f[block[:, ::GROUP]]  # (cells, groups): f at each group's first block
        pp = np.broadcast_to(p1[:, None], fb.shape)
        # P[X >= f] = sf(f - 1) (0 for f > n_p; f >= 1 always)
        upper = np.where(fb > self.n_p, 0.0, _binom_sf(np.clip(fb - 1, 0, self.n_p),
                                                         self.n_p, pp))
        lower = np.concatenate([upper[:, 1:], np.zeros((cells, 1))], axis=1)
        gmass = mass.reshape(cells, groups, GROUP).sum(axis=2)
        total = gmass * upper
        fine = (upper - lower) * gmass > GROUP_SLACK * (self.alpha - self.gamma)
        if np.any(fine):
            r, g = np.nonzero(fine)
            cols = g[:, None] * GROUP + np.arange(GROUP)[None, :]
            fbk = f[block[r[:, None], cols]]
            sf = np.where(fbk > self.n_p, 0.0, _binom_sf(np.clip(fbk - 1, 0, self.n_p),
                                                           self.n_p, p1[r][:, None]))
            total[r, g] = np.sum(mass[r[:, None], cols] * sf, axis=1)
        s = np.sum(total, axis=1)
        return s * (1.0 + ROUND_REL) + rows["outside"] + ROUND_ABS

    def _add_cells(self, a0: np.ndarray, a1: np.ndarray) -> dict[str, np.ndarray]:
        q0, q1 = np.sin(a0) ** 2, np.sin(a1) ** 2
        # the cells must cover [q_lo, q_hi] exactly (the arcsin round trip may move an end)
        q0 = np.where(a0 <= self.theta[0], self.q_range[0], q0)
        q1 = np.where(a1 >= self.theta[1], self.q_range[1], q1)
        rows = self._cell_rows(q0)
        rows.update(a0=a0, a1=a1, q1=q1)
        return rows

    def pvalue_upper(self, eps: float, refine: bool = True) -> float:
        """An upper bound on ``pi(eps)``, refined until it decides ``pi(eps) <= alpha``; when it
        cannot (a cell at the finest width stays above the level) a value above ``alpha``.
        ``refine=False`` returns the current cells' bound without splitting any (the search's
        first probe, where the test is not expected to reject)."""
        if not math.isfinite(self.t_obs):
            return 1.0
        finest = _FINEST / (2.0 * math.sqrt(self.n_q))
        if self._leaves is None:
            # as many cells as make two splits into 4 land just at the finest width
            cells = max(_CELLS, math.ceil((self.theta[1] - self.theta[0]) / (16 * finest)))
            th = np.linspace(self.theta[0], self.theta[1], cells + 1)
            self._leaves = self._add_cells(th[:-1], th[1:])
        level = self.alpha - self.gamma
        leaves = self._leaves
        b = self._bounds(leaves, leaves["q1"], eps)
        while True:
            over = b > level
            if not np.any(over):
                self._leaves = leaves
                return float(b.max()) + self.gamma
            width = leaves["a1"][over] - leaves["a0"][over]
            if not refine or np.any(width <= finest):
                self._leaves = leaves
                return float(b[over].max()) + self.gamma
            # split every cell above the level into 4 (its children bound it more tightly)
            frac = np.linspace(0.0, 1.0, 5)
            s = leaves["a0"][over][:, None] + width[:, None] * frac[None, :]
            s[:, -1] = leaves["a1"][over]
            kids = self._add_cells(s[:, :-1].ravel(), s[:, 1:].ravel())
            kb = self._bounds(kids, kids["q1"], eps)
            leaves = {k: np.concatenate([v[~over], kids[k]]) for k, v in leaves.items()}
            b = np.concatenate([b[~over], kb])

    def _guess(self) -> float:
        """The normal-approximation root of the p-value (a first point for the search)."""
        ph = self.x / self.n_p
        qh = max(self.y, 0.5) / self.n_q
        if ph <= self.delta:
            return 0.0
        sd = math.sqrt(ph * (1 - ph) / self.n_p / (ph - self.delta) ** 2
                       + (1 - qh) / (self.n_q * qh))
        z = float(stats.norm.isf(self.alpha - self.gamma))
        return math.log((ph - self.delta) / qh) - z * sd

    def lower_bound(self, evaluations: int = 12, tolerance: float = 1e-3) -> float:
        """``max(T, sup{eps : pvalue_upper(eps) <= alpha})``, clamped at 0.

        The crossing of ``pvalue_upper(eps) = alpha`` is bracketed and found by a safeguarded
        regula falsi on ``ln pvalue_upper - ln alpha`` (Illinois variant; a bisection step
        whenever it stalls, as on the step function of small counts) until the bracket, or the
        interpolated crossing's distance from the last rejecting point, is within ``tolerance``
        of the initial bracket's distance from ``T``, or after ``evaluations`` p-values. The value returned is
        always a point where the computed p-value was at most ``alpha`` (or ``T`` itself),
        which is all the validity argument needs."""
        base = max(0.0, self.t_obs) if math.isfinite(self.t_obs) else 0.0
        if self.t_obs <= 0 or not math.isfinite(self.t_obs):
            return base
        log_alpha = math.log(self.alpha)

        def h(eps: float, refine: bool) -> float:
            return math.log(max(self.pvalue_upper(eps, refine), 1e-300)) - log_alpha

        lo, h_lo = base, None
        # an eps where the test should not reject: the plug-in log ratio at median-unbiased counts
        med = float(clopper_pearson_lower(self.x, self.n_p, 0.5))
        up = float(clopper_pearson_upper(self.y, self.n_q, 0.5))
        hi = math.log((med - self.delta) / up) if med > self.delta else lo
        hi = max(hi, lo + 1e-6)
        step = max(hi - lo, 1e-3)
        for _ in range(40):
            h_hi = h(hi, False)
            if h_hi > 0:
                break
            lo, h_lo, hi, step = hi, h_hi, hi + step, 2 * step
        else:
            return lo
        prev: tuple[float, float] | None = None  # the previous upper end, while lo is unverified
        side, stalls = 0, 0
        tol = tolerance * max(hi - base, 1e-12)
        for _ in range(evaluations):
            span = hi - lo
            if span <= tol:
                break
            if h_lo is not None:
                if stalls >= 2:  # regula falsi stalled on one side: bisect
                    mid, stalls = lo + 0.5 * span, 0
                else:
                    mid = lo + span * (-h_lo) / (h_hi - h_lo) if h_hi > h_lo else lo + 0.5 * span
                    if mid - lo <= tol:  # the interpolated root is within tolerance of lo
                        break
                    mid -= 0.5 * tol  # aimed just below the root, to land on a rejection
            elif prev is None:  # first point: the normal approximation
                mid = self._guess()
            else:  # both points above: the secant through them, aimed a little below alpha
                slope = (prev[1] - h_hi) / (prev[0] - hi) if prev[0] != hi else 0.0
                mid = hi - (h_hi + 0.03) / slope if slope > 0 else lo + 0.5 * span
            mid = min(max(mid, lo + 0.02 * span), hi - 0.02 * span)
            hm = h(mid, True)
            if hm <= 0:
                lo, h_lo = mid, hm
                stalls = stalls + 1 if side == -1 else 0
                if side == -1:
                    h_hi *= 0.5  # Illinois: the end retained twice has its value halved
                side = -1
            else:
                prev = (hi, h_hi)
                hi, h_hi = mid, hm
                stalls = stalls + 1 if side == 1 else 0
                if side == 1 and h_lo is not None:
                    h_lo *= 0.5
                side = 1
        return lo


def joint_epsilon_lower_bound(count_p: int, nobs_p: int, count_q: int, nobs_q: int,
                              delta: float = 0.0, alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` lower confidence bound on epsilon from one event's two counts,
    by the exact joint test of this module; never below
    :func:`~dpaudit.blackbox.confidence.epsilon_lower_bound` at the same ``alpha`` (it calibrates
    that bound's statistic exactly, the proof: docs/blackbox-notes.md#exact-joint-test).

    Parameters are those of :func:`~dpaudit.blackbox.confidence.epsilon_lower_bound`; the event
    must have been chosen independently of these counts, and the two counts must come from
    independent runs.
    """
    return JointTest(count_p, nobs_p, count_q, nobs_q, delta, alpha).lower_bound()
