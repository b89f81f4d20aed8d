"""The stated range of every grid parameter of the st13 claims.

Smith & Thakurta, NeurIPS 2013 (``st13.txt``). Theorems 3 and 5 state pure eps-DP for every
instance ("Algorithm 1 is eps-differentially private"); the ranges of the loss constants come from
the algorithms' definitions (notes). Quotes verbatim (whitespace collapsed), checked by
``tests/test_parameter_ranges.py``.
"""

from __future__ import annotations

from typing import Any

from dpaudit.claims import ParameterRange

__all__ = ["ST13_RANGES"]

_THM3 = "Theorem 3 (Privacy guarantee). Algorithm 1 is ε-differentially private."
_THM5 = ("Theorem 5 (Privacy guarantee). The bandit version of Private Follow The Approximate "
         "Leader")
_T_NOTE = ("the tree's ceil(log2 T) + 1 levels jump past every power of two; 2^k + 1 horizons sit "
           "just past a jump")
_T1 = ("; T = 1 is not audited: line 1 outputs the starting point (any vector of C) before the "
       "first loss and the loop over t in {1, ..., T - 1} is empty, so a one-round release does not "
       "depend on the data (epsilon 0)")
_SCALE = "a scale the calibration is proportional to: audited at 1"


def _r(name: str, stated: str, quote: str, extremes: tuple[Any, ...] = (), note: str = "",
       role: str = "parameter") -> ParameterRange:
    return ParameterRange(name, stated, quote, extremes, (), role, note)


def _tree_bound(q: str) -> ParameterRange:
    return _r("tree_bound", "reading of the printed bound on the tree's inputs", q, role="reading",
              note="which bound the printed mu is (the loss's Lipschitz constant alone, or with "
                   "the regulariser)")


def _bandit(convex: bool) -> tuple[ParameterRange, ...]:
    out = [_r("epsilon", "(0, inf)", _THM5, (0.3, 4.0), "no range printed"),
           _r("T", ">= 1", _THM5, (9, 256), _T_NOTE + _T1 + " (Algorithm 3 also draws the "
              "first query point w1 + beta u1 without the data)"),
           _r("d", ">= 1 (p)", _THM5, (1, 2), "the bandit's sphere sampling needs p >= 1"),
           _r("B", "(0, inf)", _THM5, (1.0,), "|f_t| <= B is " + _SCALE),
           _r("R", "(r, inf)", _THM5, (1.0, 2.0), "outer radius: C = rho B^p with R = rho and "
              "R > rho")]
    if convex:
        out.append(_tree_bound(_THM5))
    else:
        out += [_r("adversary", "oblivious | adaptive", _THM5, ("adaptive", "oblivious"),
                   "Theorem 6's two choices of beta (p/T^(1/3) or p/T^(1/4))"),
                _r("H", "(0, inf)", _THM5, (0.04, 1.0), "strong convexity, small and unit")]
    return tuple(out)


ST13_RANGES: dict[str, tuple[ParameterRange, ...]] = {
    "st13/tree-aggregation": (
        _r("epsilon", "(0, inf)", _THM3, (0.1, 4.0), "no range printed"),
        _r("T", ">= 1", _THM3, (1, 256), _T_NOTE),
        _r("d", ">= 1 (p)", _THM3, (1, 3), "the l2 noise's norm law depends on p"),
        _r("mu", "(0, inf)", _THM3, (1.0,), "the L2 bound on z_t is " + _SCALE)),
    "st13/pftal": (
        _r("epsilon", "(0, inf)", _THM3, (0.1, 4.0), "no range printed"),
        _r("T", ">= 1", _THM3, (3, 256), _T_NOTE + _T1),
        _r("d", ">= 1 (p)", _THM3, (1, 3)),
        _r("rho", "(0, inf): C = rho B^p", _THM3, (0.05, 0.9), "the domain's radius (H rho <= L)"),
        _r("H", "(0, 1] (H <= L / R, derived; L = R = 1 audited)", _THM3, (0.05, 0.9),
           "an L-Lipschitz H-strongly convex loss on a ball of radius R needs H <= L/R. H = 1 "
           "(= L/R) is not audited: there every loss's gradient is H (w - c) + g with |g| <= L - "
           "H R = 0, one gradient field, so the two streams of every pair have the same law "
           "(epsilon 0)"),
        _r("L", "(0, inf)", _THM3, (1.0,), "the Lipschitz constant is " + _SCALE),
        _r("R", "(0, inf)", _THM3, (1.0,), "the outer radius; rho varies instead"),
        _tree_bound(_THM3)),
    "st13/pftal-convex": (
        _r("epsilon", "(0, inf)", _THM3, (0.3, 4.0), "no range printed"),
        _r("T", ">= 1", _THM3, (3, 256), _T_NOTE + _T1 + " (App. C runs Algorithm 1 on h_t)"),
        _r("d", ">= 1 (p)", _THM3, (1, 2)),
        _r("R", "(0, inf)", _THM3, (0.05, 1.0), "the domain's radius"),
        _r("L", "(0, inf)", _THM3, (1.0,), "the Lipschitz constant is " + _SCALE),
        _r("H", "Theorem 11: sqrt(p log^2.5 T / (eps T))", _THM3, role="label",
           note="derived from (p, T, eps) by Theorem 11's formula, not a free parameter"),
        _r("H_source", "label", "", role="label", note="names the formula H comes from"),
        _tree_bound(_THM3)),
    "st13/bandit-ftal": _bandit(False),
    "st13/bandit-ftal-convex": _bandit(True),
}
