"""The stated range of every grid parameter of the pfcoco claims.

``pfcoco-window-tree.txt`` (Web Intelligence 2020, OCR). Quotes are verbatim from the OCR text
(whitespace collapsed; its misread symbols kept: "e" is epsilon, "§" delta, "Al" A1), checked by
``tests/test_parameter_ranges.py``; notes say where a range is read from the definitions and why
the grid's values stand for each end.
"""

from __future__ import annotations

from typing import Any

from dpaudit.claims import ParameterRange

__all__ = ["PFCOCO_RANGES"]

_LEMMA1 = "the window tree mechanism achieves the window e-differe"
_LEMMA3 = "the window tree mechanism achieves the window (e, §)-differential privacy"
_THM1 = "Algorithm WDP-COCOP with OPTION I is the window e-"
_THM2 = "WDP-COCOP with OPTION II is the window (e, §)-"
_THM5 = "Algorithm 2 with Option I and Option II is"
_TREE = "the mini-example illustrated in Figure 1 for releasing the continuous summation"
_A1 = "Proposition Al: For any € € (0, 1), the Gamma Mechanism"
_A3 = "Proposition A3: For any € € (0,1), if ¢* > 21n(1.25/6), the"
_A6 = "Proposition A6: (advanced composition theorem [12]) For all €,01,02 > 0"
_TREE_T = ("horizons before, at and past the window; T = 1 (standard grid, W = 1): the one "
           "released node carries the whole budget")
_D1 = "the mechanisms' noise is isotropic, so d = 1 carries the privacy loss; d = 3 checks the law"


def _r(name: str, stated: str, quote: str, extremes: tuple[Any, ...] = (), note: str = "",
       role: str = "parameter", breakpoints: tuple[Any, ...] = ()) -> ParameterRange:
    return ParameterRange(name, stated, quote, extremes, breakpoints, role, note)


def _eps(q: str, lo: float = 0.1) -> ParameterRange:
    return _r("epsilon", "(0, inf)", q, (lo, 10.0), "no range printed")


def _boundary(q: str) -> ParameterRange:
    return _r("boundary", "strict | inclusive", q, role="reading",
              note="Def. 6 prints w(i) = 1 for i < W and inf for i > W: T - i = W is open")


def _log_power(q: str) -> ParameterRange:
    return _r("log_power", "1 | 2", q, role="reading",
              note="the OCR's 'ln^p(2/delta)' in sigma^2: p = 1 or 2")


def _window(q: str, extremes: tuple[int, int], bp: tuple[int, ...] = ()) -> ParameterRange:
    return _r("W", ">= 1", q, extremes, "the tree over a window has ceil(log2 W) + 1 levels: it "
              "jumps past every power of two (W = 6: not a power of two, which the paper assumes "
              "'for simplicity')" if bp else "powers of two, as the paper assumes", breakpoints=bp)


_LEARNER_T1 = ("horizons past the window (T > W) so that entries leave it. T = 1 is not "
               "audited: its only entry, round 1, enters the release through the window tree's "
               "first node (the gradient at the data-independent start x~_1), which is "
               "window-tree-*'s release at T = 1 (audited there); that leaf sits in one noisy node, "
               "no more than the oldest protected leaf at any audited T, so it cannot be the worst "
               "case; and the learner pair needs a round before the replaced one to centre the "
               "trajectory (pairs.learner_pair)")
_MUD = ("the noise scales with (L + mu D): small, near-largest and largest mu D / L. "
        "muD_over_L = 2 (standard grid): on the box (R = D/2) mu R = L leaves one gradient field "
        "f' = mu (x - c), so every pair has the same law (epsilon 0); the simplex (R = D / sqrt 3 "
        "> D/2) has no such loss above mu D / L = sqrt 3 and is skipped there")


def _learner(q: str, gaussian: bool, cocol: bool) -> tuple[ParameterRange, ...]:
    out = [_eps(q),
           _r("W", ">= 1", q, (1, 16) if cocol else (1, 32), "powers of two, as the paper "
              "assumes; W = 1 (standard grid; also the quick grid of wdp-cocol-gamma, on the box): "
              "one noisy node per leaf, where the printed L + mu D falls furthest short of 2L"),
           _r("T", ">= 1", q, (8, 12) if cocol else (8, 32), _LEARNER_T1),
           _r("d", ">= 1", q, (1, 3) if cocol else (1,), _D1 if cocol else
              "the ball's learner is audited at d = 1 (isotropic noise, the pair moves one axis)"),
           _r("muD_over_L", "(0, 2] (mu D <= 2L for an L-Lipschitz mu-strongly convex loss)", q,
              (0.01, 2.0), _MUD),
           _boundary(q)]
    if cocol:
        out.append(_r("domain", "a polytope with an LLOO", q, ("box", "simplex"),
                      "the two polytopes whose linear oracles the audit implements"))
    else:
        out.append(_r("update", "exact | printed", q, role="reading",
                      note="the OCR's update rule read exactly or as printed"))
    if gaussian:
        out += [_r("delta", "(0, 1)", q, (1e-5, 0.99), "1e-5, and the near-one end (0.5, 0.99), "
                   "where sigma^2 ~ ln^p(2/delta) shrinks: the accountant is 0 there (the Gaussian "
                   "total variation is below delta); the quick grid has the near-one end at one "
                   "configuration"), _log_power(q)]
    return tuple(out)


PFCOCO_RANGES: dict[str, tuple[ParameterRange, ...]] = {
    "pfcoco/window-tree-gamma": (
        _eps(_LEMMA1), _window(_LEMMA1, (1, 64), (4, 6)),
        _r("T", ">= 1", _LEMMA1, (1, 200), _TREE_T),
        _r("d", ">= 1", _LEMMA1, (1, 3), _D1), _boundary(_LEMMA1)),
    "pfcoco/window-tree-gaussian": (
        _eps(_LEMMA3), _window(_LEMMA3, (1, 64), (4, 6)),
        _r("T", ">= 1", _LEMMA3, (1, 200), _TREE_T),
        _r("d", ">= 1", _LEMMA3, (1,), "the Gaussian noise is isotropic: d = 1 carries the loss"),
        _r("delta", "(0, 1)", _LEMMA3, (1e-8, 0.99), "the near-one end (0.5, 0.99), where "
           "sigma^2 ~ ln^p(2/delta) shrinks, holds: at most 0.803 of the claim (W = 1, eps = 10, "
           "inclusive, p = 1, delta = 0.5); quick grid: 0.5 and 0.99 at W = 1, eps = 10 only"),
        _boundary(_LEMMA3), _log_power(_LEMMA3)),
    "pfcoco/wdp-cocop-gamma": _learner(_THM1, False, False),
    "pfcoco/wdp-cocop-gaussian": _learner(_THM2, True, False),
    "pfcoco/wdp-cocol-gamma": _learner(_THM5, False, True),
    "pfcoco/wdp-cocol-gaussian": _learner(_THM5, True, True),
    "pfcoco/standard-tree": (
        _eps(_TREE), _r("T", ">= 2 (log2 T > 0)", _TREE, (2, 256), "ceil(log2 T) + 1 levels jump "
                        "past every power of two", breakpoints=(2, 3, 8)),
        _r("d", ">= 1", _TREE, (1, 3), _D1)),
    "pfcoco/prop-a1": (_r("epsilon", "(0, 1)", _A1, (0.01, 0.99)),
                       _r("d", ">= 1", _A1, (1, 3), "the Gamma mechanism's norm law depends on d")),
    "pfcoco/prop-a3": (_r("epsilon", "(0, 1)", _A3, (0.01, 0.99)),
                       _r("delta", "(0, 1)", _A3, (1e-8, 0.99),
                          "c^2 > 2 ln(1.25/delta) is taken at its boundary; 0.99: the near-one "
                          "end, where c shrinks (holds)")),
    "pfcoco/prop-a6": (_r("epsilon", "(0, inf) (per mechanism)", _A6, (0.01, 1.0)),
                       _r("delta_1", "[0, 1)", _A6, (0.0, 1e-6), "pure and approximate pieces"),
                       _r("delta_2", "(0, 1)", _A6, (1e-8, 0.99),
                          "0.5 and 0.99 (standard grid): the near-one end, where sqrt(2k "
                          "ln(1/delta_2)) shrinks (holds: at most 0.25 of the claim)"),
                       _r("k", ">= 1", _A6, (1, 100), "the number of composed mechanisms")),
}
