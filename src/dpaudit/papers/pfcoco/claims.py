"""The privacy claims of the projection-free window-DP COCO paper, exactly as printed.

Paper: ``pfcoco-window-tree.txt`` (Web Intelligence 2020; OCR of the conference version; the
proofs are in a supplement that is not part of the seed): Lemmas 1 and 3 (window tree, eqs. (11),
(13)), Theorems 1, 2 and 5 (WDP-COCOP, WDP-COCOL, eqs. (15), (16)), the mini-example's standard
tree (Sec. III-A) and Propositions A1, A3, A6. Window claims carry a
:class:`~dpaudit.claims.WindowScope` (Def. 6). The claim ids and the reading choices shared by the
claims (OCR readings of eqs. (11)-(16), ``Delta_2 = L + mu D``, the window boundary) are in
``README.md`` beside this file (Reading choices, "Shared by the claims").
"""

from __future__ import annotations

from dataclasses import replace

from dpaudit.claims import (
    NeighbourRelation,
    PrivacyClaim,
    Provenance,
    RangeReading,
    ReadingChoice,
    Release,
    SensitivityLemma,
    WindowBoundary,
    WindowScope,
)
from dpaudit.papers.pfcoco.ranges import PFCOCO_RANGES

__all__ = [
    "PAPER", "VERSION", "WINDOW_SCOPE", "SENSITIVITY_LEMMA", "NODE_COUNT_LEMMA",
    "STANDARD_TREE_COUNT_LEMMA", "WINDOW_TREE_GAMMA", "WINDOW_TREE_GAUSSIAN", "WDP_COCOP_GAMMA",
    "WDP_COCOP_GAUSSIAN", "WDP_COCOL_GAMMA", "WDP_COCOL_GAUSSIAN", "STANDARD_TREE", "PROP_A1",
    "PROP_A3", "PROP_A6", "PFCOCO_CLAIMS", "PROP_A3_EPSILON_RANGE", "ACCOUNTANT_BASIS",
    "ACCOUNTANT_SENSITIVITY_STATEMENT",
    "PRIMARY_READINGS",
]

PAPER = "pfcoco-window-tree.txt"
VERSION = "Web Intelligence 2020 (conference version, OCR)"
#: The paper as reviewers cite it (reports' paper column).
CITATION = (
    "Projection-free differentially private constrained online convex optimisation with a window "
    "tree mechanism, Web Intelligence 2020, conference version (a descriptive title: the copy "
    "audited is an OCR scan that starts at the abstract, without the title and the authors)")

#: Def. 6 with the default (strict) boundary reading.
WINDOW_SCOPE = WindowScope(window="W", boundary=WindowBoundary.STRICT)

_DEF6 = ("Def. 6: P[A(f_1..f_i..f_T) in O] <= e^(w(T-i) eps) P[A(f_1..f'_i..f_T) in O] + delta, "
         "w = 1 inside the window, w = inf outside (OCR: 'w(i) = 1 for i < W, w(i) = oo for "
         "i > W')")

_BOUNDARY_NOTE = (
    "Window boundary: the OCR of Def. 6 leaves T - i = W open; default reading T - i < W (exactly "
    "the last W losses are protected, consistent with the window tree, which keeps the last W "
    "leaves noisy); the inclusive reading T - i <= W is audited too (grid parameter 'boundary'). "
    "Expired entries (outside the window) are never counted as violations; what they leak is "
    "reported as a measured fact.")

_GAMMA_NOTE = ("Eq. (11)/(15) read as ||n||_2 ~ Gamma(d, Delta_2 (ceil(log2 W) + 1)/eps) "
               "(l2-Laplace node noise; OCR '4 Ba(' = 'd, Delta_2(').")

_GAUSS_NOTE = ("Eq. (13)/(16): sigma^2 = 8 Delta_2^2 (ceil(log2 W)+1)^2 ln^p(2/delta) / eps^2; the "
               "OCR shows a superscript on ln ('1112(2/5)', 'In*(2/9)'): p = 2 by default, p = 1 "
               "audited as the alternative (grid parameter 'log_power').")

_LAYOUT_NOTE = ("W not a power of two: the paper assumes powers of two 'for simplicity'; the "
                "window tree's 'exact' layout (exactly the last W leaves noisy) is used.")

_SENS = Provenance(PAPER, VERSION, "Theorems 1-2 (privacy guarantee paragraph), Theorem 5",
                   "they are by Lemma 1 & 3 with l2 sensitivity being (L + mu D), plus the "
                   "post-processing property", "Sec. III-C, 'Privacy Guarantee'")

#: The sensitivity statement behind Theorems 1, 2 and 5.
SENSITIVITY_LEMMA = SensitivityLemma(
    "replacing one L-Lipschitz, mu-strongly convex loss f_t by another moves the window tree's "
    "input grad f_t(x~_t) by at most L + mu D in l2 (D = diameter of C)", _SENS)

#: The node count behind Lemmas 1 and 3.
NODE_COUNT_LEMMA = SensitivityLemma(
    "while leaf i is protected, at most ceil(log2 W) + 1 noisy nodes of the window tree contain it",
    Provenance(PAPER, VERSION, "Sec. III-A (window tree mini-example), Lemmas 1 and 3",
               "The calculation of the window partial sum only involves log2 W + 1 noisy nodes",
               "Sec. III-A, last paragraph"))

#: The node count of the mini-example's standard tree.
STANDARD_TREE_COUNT_LEMMA = SensitivityLemma(
    "any particular instance change will affect at most log2 T nodes in the tree",
    Provenance(PAPER, VERSION, "Sec. III-A (standard tree mini-example)",
               "any particular instance change will affect at most 3 (log2 T) nodes in the tree",
               "Sec. III-A"))

_POSTPROCESSING = SensitivityLemma(
    "the learner touches the losses only through the window tree's inputs grad f_t(x~_t); the "
    "released points are a function of the tree's releases (post-processing)", _SENS)

_TREE_RANGE = {
    "epsilon": "(0, inf) (no range printed)",
    "W (window)": ">= 1 (the paper assumes powers of two for simplicity)",
    "T (horizon)": ">= 1",
    "d": ">= 1",
    "Delta_2 (l2 sensitivity of a leaf)": "(0, inf)",
}

_LEARNER_RANGE = {
    "epsilon": "(0, inf) (no range printed)",
    "W (window)": ">= 1",
    "T (horizon)": ">= 1",
    "d": ">= 1",
    "L (Lipschitz)": "(0, inf)",
    "mu (strong convexity)": ("(0, 2L/D] (derived: an L-Lipschitz mu-strongly convex function on "
                              "a set of diameter D exists only if mu D <= 2L)"),
}

WINDOW_TREE_GAMMA = PrivacyClaim(
    id="pfcoco/window-tree-gamma", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Lemma 1 (window tree, Gamma perturbation)",
                          "||n_i||_2 ~ Gamma(d, Delta_2 (ceil(log2 W) + 1) / eps) added to each "
                          "relevant node => window eps-DP with window size W",
                          "Sec. III-B.1, eq. (11)"),
    calibration="||n||_2 ~ Gamma(d, Delta_2 (ceil(log2 W) + 1) / eps) per noisy node (eq. (11))",
    parameter_range=_TREE_RANGE, release=Release.WINDOW, window=WINDOW_SCOPE,
    lemmas=(NODE_COUNT_LEMMA,),
    notes=" ".join([_DEF6 + ".", _BOUNDARY_NOTE, _GAMMA_NOTE, _LAYOUT_NOTE,
                    "Released: every prefix release s_1..s_T. Neighbours: one leaf replaced by "
                    "another at l2 distance <= Delta_2."]),
)

WINDOW_TREE_GAUSSIAN = PrivacyClaim(
    id="pfcoco/window-tree-gaussian", epsilon=1.0, delta=1e-5,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Lemma 3 (window tree, Gaussian perturbation)",
                          "n_i ~ N(0, sigma^2 I_d), sigma^2 = 8 Delta_2^2 (ceil(log2 W) + 1)^2 "
                          "ln^2(2/delta) / eps^2 => window (eps, delta)-DP",
                          "Sec. III-B.2, eq. (13)"),
    calibration=("sigma^2 = 8 Delta_2^2 (ceil(log2 W) + 1)^2 ln^p(2/delta) / eps^2, "
                 "p = 2 (eq. (13))"),
    parameter_range={**_TREE_RANGE, "delta": "(0, 1)"}, release=Release.WINDOW,
    window=WINDOW_SCOPE, lemmas=(NODE_COUNT_LEMMA,),
    notes=" ".join([_DEF6 + ".", _BOUNDARY_NOTE, _GAUSS_NOTE, _LAYOUT_NOTE,
                    "Released: every prefix release s_1..s_T."]),
)

_THM1 = Provenance(PAPER, VERSION, "Theorem 1 (window eps-DP of Algorithm 1, Option I)",
                   "Gamma noise ||n||_2 ~ Gamma(d, (L + mu D)(ceil(log2 W) + 1) / eps)",
                   "Sec. III-C, eq. (15)")
_THM2 = Provenance(PAPER, VERSION, "Theorem 2 (window (eps, delta)-DP of Algorithm 1, Option II)",
                   "sigma^2 = 8 (L + mu D)^2 (ceil(log2 W) + 1)^2 ln^2(2/delta) / eps^2",
                   "Sec. III-C, eq. (16)")
_THM5 = Provenance(PAPER, VERSION, "Theorem 5 (window DP of Algorithm 2, Options I and II)",
                   "Under the same condition as in Theorem 1 and 2 (with C replaced by P), "
                   "Algorithm 2 with Option I and Option II is window eps-DP and window "
                   "(eps, delta)-DP", "Sec. III-D")

_LEARNER_NOTES = ("Losses: L-Lipschitz and mu-strongly convex on C (gradients clipped to L, a "
                  "no-op in the class). Released: x~_1..x~_{T+1}. Update of Alg. 1 line 3: the "
                  "exact minimiser of eq. (9) (the printed eq. (10) lacks a 1/t; privacy is "
                  "post-processing either way). ")

WDP_COCOP_GAMMA = PrivacyClaim(
    id="pfcoco/wdp-cocop-gamma", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION, provenance=_THM1,
    calibration="Option I: ||n||_2 ~ Gamma(d, (L + mu D)(ceil(log2 W) + 1)/eps) (eq. (15))",
    parameter_range={**_LEARNER_RANGE, "C": "bounded convex set of diameter D (audited: ball)"},
    release=Release.WINDOW, window=WINDOW_SCOPE,
    lemmas=(SENSITIVITY_LEMMA, NODE_COUNT_LEMMA, _POSTPROCESSING),
    notes=_LEARNER_NOTES + " ".join([_BOUNDARY_NOTE, _GAMMA_NOTE, _LAYOUT_NOTE]),
)

WDP_COCOP_GAUSSIAN = PrivacyClaim(
    id="pfcoco/wdp-cocop-gaussian", epsilon=1.0, delta=1e-5,
    formula="(eps, delta)", citation=CITATION, provenance=_THM2,
    calibration=("Option II: sigma^2 = 8 (L + mu D)^2 (ceil(log2 W) + 1)^2 ln^p(2/delta)/eps^2, "
                 "p = 2 (eq. (16))"),
    parameter_range={**_LEARNER_RANGE, "delta": "(0, 1)",
                     "C": "bounded convex set of diameter D (audited: ball)"},
    release=Release.WINDOW, window=WINDOW_SCOPE,
    lemmas=(SENSITIVITY_LEMMA, NODE_COUNT_LEMMA, _POSTPROCESSING),
    notes=_LEARNER_NOTES + " ".join([_BOUNDARY_NOTE, _GAUSS_NOTE, _LAYOUT_NOTE]),
)

_COCOL_NOTES = ("Losses: L-Lipschitz and mu-strongly convex on the polytope P (gradients clipped "
                "to L). Released: x~_1..x~_{T+1}. Oracle argument of Alg. 2 line 7: "
                "grad J~_t(x~_t) "
                "(the printed argument is a scaled minimiser); constants alpha, C0, C1, C_W, r_t "
                "are garbled and derived (dpaudit.learners.wdp_cocol); privacy does not depend on "
                "them. LLOO: Garber-Hazan for the simplex, the l_inf-ball oracle for the box. ")

WDP_COCOL_GAMMA = PrivacyClaim(
    id="pfcoco/wdp-cocol-gamma", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION, provenance=_THM5,
    calibration="Option I of Theorem 1 (eq. (15)) with C replaced by the polytope P",
    parameter_range={**_LEARNER_RANGE, "P": "polytope with an LLOO (audited: box, simplex)"},
    release=Release.WINDOW, window=WINDOW_SCOPE,
    lemmas=(SENSITIVITY_LEMMA, NODE_COUNT_LEMMA, _POSTPROCESSING),
    notes=_COCOL_NOTES + " ".join([_BOUNDARY_NOTE, _GAMMA_NOTE, _LAYOUT_NOTE]),
)

WDP_COCOL_GAUSSIAN = PrivacyClaim(
    id="pfcoco/wdp-cocol-gaussian", epsilon=1.0, delta=1e-5,
    formula="(eps, delta)", citation=CITATION, provenance=_THM5,
    calibration="Option II of Theorem 2 (eq. (16)) with C replaced by the polytope P",
    parameter_range={**_LEARNER_RANGE, "delta": "(0, 1)",
                     "P": "polytope with an LLOO (audited: box, simplex)"},
    release=Release.WINDOW, window=WINDOW_SCOPE,
    lemmas=(SENSITIVITY_LEMMA, NODE_COUNT_LEMMA, _POSTPROCESSING),
    notes=_COCOL_NOTES + " ".join([_BOUNDARY_NOTE, _GAUSS_NOTE, _LAYOUT_NOTE]),
)

STANDARD_TREE = PrivacyClaim(
    id="pfcoco/standard-tree", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Sec. III-A, mini-example of the tree mechanism",
                          "Each node also keeps a private copy of its value by adding noise ... "
                          "each providing (eps/log2 8)-DP ((eps/log2 T) for general game length "
                          "T) ... any particular instance change will affect at most 3 (log2 T) "
                          "nodes in the tree. By composition theorem, the continuous private "
                          "running sum release would be eps-DP.", "Sec. III-A, Fig. 1"),
    calibration=("every node (eps / log2 T)-DP: l2-Laplace node noise of scale "
                 "Delta_2 log2 T / eps "
                 "(the paper's Gamma noise, Lemma 1)"),
    parameter_range={"epsilon": "(0, inf)", "T (horizon)": ">= 2 (log2 T > 0)", "d": ">= 1",
                     "Delta_2": "(0, inf)"},
    release=Release.FULL_SEQUENCE, lemmas=(STANDARD_TREE_COUNT_LEMMA,),
    notes=("The mini-example names no noise law ('properly scaled random distribution'); the "
           "paper's own Gamma (l2-Laplace) noise at per-node budget eps/log2 T is audited. "
           "Released: every prefix sum s_1..s_T (binary decomposition, noise drawn once per "
           "node)."),
)

PROP_A1 = PrivacyClaim(
    id="pfcoco/prop-a1", epsilon=0.5, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Proposition A1 (Gamma mechanism)",
                          "For any eps in (0, 1), the Gamma Mechanism with the parameter "
                          "zeta = Delta_2 f / eps is eps-differentially private",
                          "Appendix A"),
    calibration="noise density proportional to exp(-||n||_2 / zeta), zeta = Delta_2 / eps",
    parameter_range={"epsilon": "(0, 1)", "d": ">= 1", "Delta_2": "(0, inf)"},
    release=Release.FINAL, notes="One release f(x) + n; neighbours at l2 distance <= Delta_2.",
)

PROP_A3 = PrivacyClaim(
    id="pfcoco/prop-a3", epsilon=0.5, delta=1e-5,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Proposition A3 (Gaussian mechanism)",
                          "For any eps in (0, 1), if c^2 > 2 ln(1.25/delta), the Gaussian "
                          "Mechanism with parameter sigma >= c Delta_2 f / eps is (eps, delta)-DP",
                          "Appendix B"),
    calibration="sigma = c Delta_2 / eps with c^2 > 2 ln(1.25/delta) (audited at the limit)",
    parameter_range={"epsilon": "(0, 1)", "delta": "(0, 1)", "c": "c^2 > 2 ln(1.25/delta)",
                     "d": ">= 1"},
    release=Release.FINAL,
    notes=("Audited at the boundary c^2 -> 2 ln(1.25/delta) (the smallest admitted noise; the "
           "strict inequality is approached from above)."),
)

PROP_A6 = PrivacyClaim(
    id="pfcoco/prop-a6", epsilon=0.5, delta=1e-5,
    formula="(sqrt(2 k ln(1/delta_2)) eps + k eps (e^eps - 1), k delta_1 + delta_2)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Proposition A6 (advanced composition)",
                          "For all eps, delta_1, delta_2 > 0, the class of (eps, delta_1)-DP "
                          "mechanisms satisfies (eps', k delta_1 + delta_2)-DP under k-fold "
                          "adaptive composition for eps' = sqrt(2 k ln(1/delta_2)) eps + "
                          "k eps (e^eps - 1)", "Appendix C"),
    calibration="eps' = sqrt(2 k ln(1/delta_2)) eps + k eps (e^eps - 1)",
    parameter_range={"epsilon (per mechanism)": "(0, inf)", "delta_1": "(0, 1) (and 0)",
                     "delta_2": "(0, 1)", "k": ">= 1"},
    release=Release.FULL_SEQUENCE,
    notes=("The claim's epsilon is eps' and its delta k delta_1 + delta_2 at each grid point; the "
           "representative values here are placeholders (the claim is universally quantified). "
           "The worst (eps, delta_1) mechanisms under adaptive composition are the two-point "
           "dominating pairs (Kairouz, Oh & Viswanath 2015), composed exactly."),
)

#: The per-node sensitivity the learners' accountant is computed at (2L: every gradient is clipped
#: to l2 norm L before it enters the window tree), as the SMT record states it.
ACCOUNTANT_SENSITIVITY_STATEMENT = (
    "per-node sensitivity the accountant uses: the window tree's input clip_L(grad f_t(x~_t)) "
    "(every gradient clipped to l2 norm L, as implemented) moves by at most 2L in l2 when f_t is "
    "replaced by any loss")

#: Which lemma each learner claim's accountant rests on: not the paper's refuted
#: ``L + mu D`` (SENSITIVITY_LEMMA, violated: the class's gap reaches 2L - mu D) but the 2L bound
#: dpaudit proved by SMT for every d (``smt_lemmas.clipped_gap_lemma``; the record's statement is
#: ``proved_statement``). The accountant is set in ``audit._plan_learner``: ``mu_acc = max_j
#: gaussian_release_mu(W, horizon, j, 2 * L, sigma)`` over the protected positions j (Gaussian
#: options) and ``_laplace_accountant(W, horizon, i, 2 * L, ...)`` (Gamma options). Where the
#: accountant stays at or below the claim everywhere and no pair refutes it, the theorem's number
#: survives while its proof's lemma does not: a proof gap, not a privacy failure.
ACCOUNTANT_BASIS = {
    cid: {"proved_statement": ACCOUNTANT_SENSITIVITY_STATEMENT + " [every d, every L]",
          "method": ("smt-proved (every d): z3 over the Gram abstraction (squared norms and inner "
                     "product with Cauchy-Schwarz p^2 <= a b, sound in every R^d), L symbolic; "
                     "the 2L comes from the learners' clipping, so it holds for any loss"),
          "sensitivity": "2L",
          "refuted_statement": SENSITIVITY_LEMMA.statement}
    for cid in ("pfcoco/wdp-cocop-gaussian", "pfcoco/wdp-cocol-gaussian",
                "pfcoco/wdp-cocop-gamma", "pfcoco/wdp-cocol-gamma")}

#: Readings are not parameters: each claim's primary reading of every reading choice
#: its grid sweeps (or that the audit fixes), as (grid parameter, value, why: the paper line it
#: rests on). The primary reading is the paper's literal text; where the text prints nothing (or
#: the OCR lost it), the reading consistent with the paper's own definitions. The claim's verdict
#: is the primary reading's; the other readings get their own (README, "Readings").
_BOUNDARY_PRIMARY = (
    "boundary", "strict",
    "Def. 6 prints 'w(i) = 1 for i < W, w(i) = oo for i > W' and nothing for T - i = W; the "
    "paper's own mechanism decides: the window tree adds noise 'to the nodes of the subtrees "
    "involved in the privacy window' and 'the window partial sum only involves log2 W + 1 noisy "
    "nodes' (Sec. III-A/B), i.e. exactly the last W leaves (T - i < W) are protected")
_LOG_POWER_PRIMARY = (
    "log_power", 2,
    "eq. (13) prints 'sigma^2 = 8 Delta_2^2 (ceil(log2 W) + 1)^2 ln^2(2/delta) / eps^2' (OCR "
    "'1112(2/5)') and Theorem 2's eq. (16) '(L + mu D)^2 (ceil(log2 W) + 1)^2 ln^2(2/delta)' "
    "(OCR 'In*(2/9)'): the superscript 2 on ln is printed in both places")
_UPDATE_PRIMARY = (
    "update", "exact",
    "Sec. III-C: 'we update the response x~_{t+1} by exactly solving J_t(x) with g~_t computed "
    "by window tree mechanism', J_t of eq. (9); the OCR of eq. (10) and Algorithm 1 line 3 "
    "('PO(sum x~_tau - g~_t/mu, C)') has lost its fraction bars (the exact minimiser of (9) has "
    "1/t on both terms), so the paper's own definition (9) decides")
_DIRECTION_PRIMARY = (
    "direction", "gradient",
    "Algorithm 2 line 7 passes 'sum x~_tau + C0 x_t - g~_t/mu' (OCR, garbled) to LLOO, whose "
    "argument is a linear objective (Sec. III-D: 'y in B(x, r) n P: <p, g> <= <y, g>'); read as "
    "the gradient of J~_t at x~_t; privacy does not depend on it (post-processing of the window "
    "tree), so it is not swept")
PRIMARY_READINGS: dict[str, tuple[tuple[str, object, str], ...]] = {
    "pfcoco/window-tree-gamma": (_BOUNDARY_PRIMARY,),
    "pfcoco/window-tree-gaussian": (_BOUNDARY_PRIMARY, _LOG_POWER_PRIMARY),
    "pfcoco/wdp-cocop-gamma": (_BOUNDARY_PRIMARY, _UPDATE_PRIMARY),
    "pfcoco/wdp-cocop-gaussian": (_BOUNDARY_PRIMARY, _LOG_POWER_PRIMARY, _UPDATE_PRIMARY),
    "pfcoco/wdp-cocol-gamma": (_BOUNDARY_PRIMARY, _DIRECTION_PRIMARY),
    "pfcoco/wdp-cocol-gaussian": (_BOUNDARY_PRIMARY, _LOG_POWER_PRIMARY, _DIRECTION_PRIMARY),
}


def _with_readings(claim: PrivacyClaim) -> PrivacyClaim:
    """``claim`` with its primary readings declared: its verdict is theirs."""
    return replace(claim, readings=tuple(ReadingChoice(parameter, value, why)
                                         for parameter, value, why in PRIMARY_READINGS[claim.id]))


#: Theorems 2 and 5 print no range for eps; the only one printed in their proof chain is
#: Proposition A3's (the Gaussian mechanism, through Lemma 3). Read as a precondition of the
#: theorem, the Gaussian learners claim window (eps, delta)-DP only for eps in (0, 1): that
#: reading gets its own verdict, beside the claim's (eps in (0, inf), the theorem's own text).
PROP_A3_EPSILON_RANGE = RangeReading(
    "epsilon", "(0, 1)",
    "Theorems 2 and 5 print no range for eps; the only range printed in their proof chain is "
    "Proposition A3's 'For any eps in (0, 1), if c^2 > 2 ln(1.25/delta)' (the Gaussian mechanism "
    "behind Lemma 3), read here as a precondition of the theorem",
    label="epsilon in (0, 1) (Prop. A3's range as a precondition of the theorem)")

WINDOW_TREE_GAMMA = _with_readings(WINDOW_TREE_GAMMA)
WINDOW_TREE_GAUSSIAN = _with_readings(WINDOW_TREE_GAUSSIAN)
WDP_COCOP_GAMMA = _with_readings(WDP_COCOP_GAMMA)
WDP_COCOP_GAUSSIAN = replace(_with_readings(WDP_COCOP_GAUSSIAN),
                             range_readings=(PROP_A3_EPSILON_RANGE,))
WDP_COCOL_GAMMA = _with_readings(WDP_COCOL_GAMMA)
WDP_COCOL_GAUSSIAN = replace(_with_readings(WDP_COCOL_GAUSSIAN),
                             range_readings=(PROP_A3_EPSILON_RANGE,))

PFCOCO_CLAIMS = (WINDOW_TREE_GAMMA, WINDOW_TREE_GAUSSIAN, WDP_COCOP_GAMMA, WDP_COCOP_GAUSSIAN,
                 WDP_COCOL_GAMMA, WDP_COCOL_GAUSSIAN, STANDARD_TREE, PROP_A1, PROP_A3, PROP_A6)


# Every grid parameter's stated range (ranges.py), so an audit covers the whole stated range.
PFCOCO_CLAIMS = tuple(replace(c, ranges=PFCOCO_RANGES[c.id]) for c in PFCOCO_CLAIMS)
(WINDOW_TREE_GAMMA, WINDOW_TREE_GAUSSIAN, WDP_COCOP_GAMMA, WDP_COCOP_GAUSSIAN, WDP_COCOL_GAMMA,
 WDP_COCOL_GAUSSIAN, STANDARD_TREE, PROP_A1, PROP_A3, PROP_A6) = PFCOCO_CLAIMS
