"""The stated range of every grid parameter of the JKT12 claims.

Jain, Kothari & Thakurta, COLT 2012 (``jkt12-colt.txt``) and arXiv (``jkt12-arxiv.txt``). The
privacy theorems print no range for eps, T, d or the loss constants: they hold "for any" admissible
instance, so each range is read from the algorithm's definitions (noted) and the quote is the
theorem's privacy sentence (verbatim, whitespace collapsed; checked by
``tests/test_parameter_ranges.py``). ``extremes`` are the grid values that stand for each end; where
the grid does not reach a stated end the note says why (a scale the calibration is invariant to, or
a gap left open and named).
"""

from __future__ import annotations

from typing import Any

from dpaudit.claims import ParameterRange

__all__ = ["JKT12_RANGES"]

#: The theorem's privacy sentence per (algorithm, source); "" where the body does not print it.
_QUOTE = {
    ("pocp", "colt"): "", ("pocp", "arxiv"): "POCP algorithm (see Algorithm 1) is",
    "pigd": "PIGD (see Algorithm 2) is", "pgiga": "PGIGA (see Algorithm 3) is",
    "pqftl": "PQFTL (Algorithm 4) is", "pol": "(POL) algorithm (see Algorithm 6) is",
    "privatesum": "following are true for the output of Algorithm 5",
    "pocp-doubling": "Algorithm 7 is",
}
_NOQUOTE = "COLT prints Theorem 1 only through its proof (App. A.2); read from the arXiv statement"

_SCALE = ("a scale the printed calibration is proportional to (noise and sensitivity both scale with "
          "it), so the privacy loss does not depend on it: audited at 1")
_DELTA_GAP = ("the upper end of (0, 1/2) at 0.25 and 0.49 (standard grid only; claimed 2 delta = 0.98): "
              "Lemma 1's c > 0 needs delta < 2 e^-2 = 0.271 (arXiv), so 0.49 audits the printed "
              "calibration with c < 0; the claim is refuted at conventional delta already")
_D_NOTE = ("the Gaussian calibration does not depend on d; d > 1 checks that the sensitivity is a "
           "Euclidean norm (the largest d audited is the one the exact pair needs)")


def _r(name: str, stated: str, quote: str, extremes: tuple[Any, ...] = (), note: str = "",
       role: str = "parameter", breakpoints: tuple[Any, ...] = ()) -> ParameterRange:
    return ParameterRange(name, stated, quote, extremes, breakpoints, role,
                          note or ("" if quote else _NOQUOTE))


def _ranges(alg: str, src: str) -> tuple[ParameterRange, ...]:
    q = _QUOTE.get((alg, src), _QUOTE.get(alg, ""))
    eps = _r("epsilon", "(0, inf)", q, note="no range printed (COLT's proof needs c >= 0, a "
             "reading reported separately)" if q else _NOQUOTE)
    T = _r("T", ">= 2 (log T > 0)", q, note="T = 2 is the smallest horizon the calibration's "
           "log T admits" if q else _NOQUOTE)
    out: dict[str, ParameterRange] = {}
    if alg in ("pocp", "pigd", "pgiga"):
        hi_eps = {"pocp": 1000.0, "pigd": 2000.0, "pgiga": 1000.0}[alg]
        out["epsilon"] = _r(eps.name, eps.stated, q, (0.001, hi_eps), eps.note)
        out["delta"] = _r("delta", "(0, 1/2) (claimed 2 delta < 1)", q,
                          (1e-6 if alg == "pocp" else 1e-5, 0.49), _DELTA_GAP)
        lo_T = 16 if alg == "pgiga" else 2
        hi_T = 522911 if alg == "pigd" else 100000
        out["T"] = _r("T", T.stated, q, (lo_T, hi_T), T.note if lo_T == 2 else
                      "T >= t_q = ceil(2 L_G^2/alpha^2) so that the noisy phase starts; 16 is the "
                      "smallest audited. T = 2 is not audited: t_q = ceil(2 (L_G/alpha)^2) >= 2 "
                      "(L_G >= alpha), so T - 1 < t_q and every released point is a random "
                      "burn-in point (Algorithm 3 line 3), independent of the data (epsilon 0)")
        out["d"] = _r("d", ">= 1", q, (1, {"pocp": 4, "pigd": 54, "pgiga": 3}[alg]), _D_NOTE)
    if alg in ("pigd", "pgiga"):
        out["alpha"] = _r("alpha", "(0, inf)", q, (0.01, 100.0),
                          "strong convexity: the sensitivity 2L/(alpha t) grows as alpha -> 0")
    if alg == "pigd":
        out["L"] = _r("L", "(0, inf)", q, (1.0,), "the Lipschitz constant is " + _SCALE)
        out["setting"] = _r("setting", "label", "", role="label",
                            note="names the paper's own experiment (App. G.2) a point reproduces")
    if alg == "pgiga":
        out["G"] = _r("G", "(0, inf)", q, (1.0,), "the gradient bound is " + _SCALE)
        out["smoothness_ratio"] = _r("smoothness_ratio", "L_G / alpha in [1, inf)", q, (1.0, 2.0),
                                     "L_G >= alpha for an alpha-strongly convex L_G-smooth loss; "
                                     "t_q = ceil(2 (L_G/alpha)^2) jumps from 2 to 8")
    if alg == "pocp-doubling":
        out["epsilon"] = _r("epsilon", "(0, inf)", q, (0.05, 1000.0), "no range printed")
        out["delta"] = _r("delta", "(0, 1)", q, (1e-6, 1e-3),
                          "points whose claimed delta log2 T + 2/T^(2 eps) is >= 1 are vacuous; the "
                          "audited deltas keep the claim meaningful")
        out["T"] = _r("T", ">= 2 (unknown to the algorithm)", q, (2, 100000),
                      "the doubling epochs k = floor(log2 t) jump at every power of two")
        out["d"] = _r("d", ">= 1", q, (1, 4), _D_NOTE)
    if alg in ("pqftl", "privatesum"):
        out["epsilon"] = _r("epsilon", "(0, inf)", q, (0.001, 10.0), "no range printed")
        out["delta"] = _r("delta", "(0, 1)", q, (1e-6 if alg == "privatesum" else 1e-5, 0.99),
                          "the near-one end (0.5, 0.99; standard grid only, the claim is refuted "
                          "at conventional delta already): sigma^2 ~ log(log T/delta) shrinks as "
                          "delta -> 1 and is undefined where log T <= delta (natural reading at "
                          "T = 2, delta = 0.99: left out)")
        out["T"] = _r("T", ">= 2", q, (2, 100000),
                      "the tree depth ceil(log2 T) jumps at every power of two (2, 3, 8, 64, 1000, "
                      "1024 audited)" if alg == "privatesum" else
                      "T = 2 (standard grid): the closed end, one update after the first release; "
                      "T = 3: the smallest horizon with a noisy node after the first release")
        out["R"] = _r("R", "(0, inf)", q, (1.0, 10.0) if alg == "privatesum" else (0.5, 10.0),
                      "the public norm bound; the calibration is proportional to R, R > 1 checks "
                      "that the V-tree's R^2 is used (PQFTL)")
        out["d"] = _r("d", ">= 1", q, (1, 3), _D_NOTE)
        out["log_reading"] = _r("log_reading", "tree | natural", "", role="reading",
                                note="the base of the logs in sigma (log2 for the tree depth, or ln)")
    if alg == "pqftl":
        out["alpha"] = _r("alpha", "(0, inf)", q, (1.0, 1e9),
                          "the regulariser: alpha = 1e9 pins x near 0 (projection never binds)")
        out["setting"] = _r("setting", "label", "", role="label",
                            note="names the pair or the paper's experiment (App. G.1) a point runs")
    if alg == "pol":
        out["epsilon_p"] = _r("epsilon_p", "(0, inf)", q, (0.001, 10.0), "no range printed")
        out["delta"] = _r("delta", "(0, 1)", q, (1e-5, 0.99),
                          "the near-one end (0.5, 0.99) on the standard grid only (the claim is "
                          "refuted at conventional delta already)")
        out["T"] = _r("T", ">= 2 (ln T > 0)", q, (2, 522911), "no range printed")
        out["L"] = _r("L", "(0, inf)", q, (1.0,), "the loss's Lipschitz constant is " + _SCALE)
        out["epsilon_g"] = _r("epsilon_g", "(0, inf)", q, (0.01, 1.0),
                              "the target accuracy; alpha = epsilon_g / ||x*||^2 moves the "
                              "sensitivity 2 L' ln T / T")
        out["x_star_norm"] = _r("x_star_norm", "(0, inf)", q, (1.0,), "||x*|| is " + _SCALE)
        out["d"] = _r("d", ">= 1", q, (1, 3), _D_NOTE)
    return tuple(out.values())


#: claim id -> its declared ranges.
JKT12_RANGES: dict[str, tuple[ParameterRange, ...]] = {
    f"jkt12-{src}/{alg}": _ranges(alg, src)
    for src in ("colt", "arxiv")
    for alg in ("pocp", "pigd", "pgiga", "pqftl", "privatesum", "pol")}
JKT12_RANGES["jkt12-colt/pocp-doubling"] = _ranges("pocp-doubling", "colt")
