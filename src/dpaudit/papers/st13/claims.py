"""The privacy claims of Smith & Thakurta, NeurIPS 2013, exactly as printed.

Every claim is pure epsilon-DP (delta = 0) for any epsilon > 0, under the paper's neighbour relation
(Sec. 1, Definition 2: "two input sequences F, F' are neighbors if they differ only in one entry
(say, replacing f_t by f'_t)"), with the whole output sequence released. The claims' epsilon is the
representative value audited by default; ``parameter_range`` records the universal
quantification. The sensitivity statements their proofs rely on are recorded as lemmas (App. B.1:
every leaf lies in at most ``ceil(log2 T) + 1`` nodes, and "each of the ratio in the product of
(11) is bounded by e^(eps / (ceil(log2 T) + 1))" because every input has l2 norm at most the bound
passed to the tree).

Claim ids: ``st13/tree-aggregation``, ``st13/pftal``, ``st13/pftal-convex``, ``st13/bandit-ftal``,
``st13/bandit-ftal-convex``.
"""

from __future__ import annotations

from dataclasses import replace

from dpaudit.claims import NeighbourRelation, PrivacyClaim, Provenance, Release, SensitivityLemma
from dpaudit.papers.st13.ranges import ST13_RANGES

__all__ = [
    "PAPER",
    "VERSION",
    "TREE_CALIBRATION",
    "NODE_RATIO_LEMMA",
    "TREE_AGGREGATION",
    "PFTAL_CLAIM",
    "PFTAL_CONVEX_CLAIM",
    "BANDIT_FTAL_CLAIM",
    "BANDIT_FTAL_CONVEX_CLAIM",
    "ST13_CLAIMS",
]

PAPER = "st13.txt"
VERSION = "NeurIPS 2013, with supplementary appendices A-E"
#: The paper in words (reports print it instead of the file name).
CITATION = ("Smith, Thakurta: (Nearly) Optimal Algorithms for Private Online Learning in "
            "Full-information and Bandit Settings, NeurIPS 2013 (with supplementary appendices)")

#: Algorithm 2 line 9, verbatim up to typography.
TREE_CALIBRATION = ("n ~ lambda exp(-||n||_2 eps / (mu (ceil(log2 T) + 1))) added once to every "
                    "node completed at step t (Alg. 2 line 9), mu = the L2-norm bound on the z_i")

_B1 = Provenance(PAPER, VERSION, "Proof of Theorem 3 (App. B.1)",
                 "each of the ratio in the product of (11) is bounded by "
                 "e^(eps / (ceil(log2 T) + 1)) (See Line 9 in Algorithm 2)",
                 "App. B.1, after eq. (11)")

#: The per-node step of the privacy proof: one input changes each node containing it by at most
#: the bound mu, hence a ratio e^(eps/(ceil(log2 T)+1)) per node.
NODE_RATIO_LEMMA = SensitivityLemma(
    "replacing one tree input z_t by z'_t (both of l2 norm <= mu) moves every node containing "
    "leaf t by at most mu in l2, so each node's likelihood ratio is at most "
    "e^(eps/(ceil(log2 T)+1))", _B1)

_LEAF_NODES_LEMMA = SensitivityLemma(
    "changing one entry affects only ceil(log2 T) + 1 terms (nodes) of the product (11)", _B1)

_INPUT_BOUND_LEMMA = SensitivityLemma(
    "every input passed to the tree has l2 norm at most the L2-bound passed with it "
    "(||grad f_t(w)||_2 <= L by the Lipschitz property)", _B1)

_POSTPROCESSING_LEMMA = SensitivityLemma(
    "given v^_2, ..., v^_(t+1) the outputs w^_2, ..., w^_(t+1) are completely determined "
    "(the learner touches the data only through the tree)",
    Provenance(PAPER, VERSION, "Proof of Theorem 3 (App. B.1)",
               "Notice that given v^_2, ..., v^_(t+1) ... the outputs w^_2, ..., w^_(t+1) are "
               "completely determined", "App. B.1, first sentence"))

#: Why the audited bandit learners use r = rho on the ball C = rho B^p (Theorems 6 and 17 ask for
#: 0 < r < R strictly).
_INNER_RADIUS_NOTE = (
    "Inner radius: Theorems 6 and 17 assume r B^p subset C subset R B^p with 0 < r < R. r and R "
    "are radii of sandwiching balls, not the in- and circumradius of C, so on the ball "
    "C = rho B^p the pair r = rho, R > rho (any) meets the hypothesis; the learners use r = rho. "
    "Algorithm 3 uses r only (xi = beta / r), R enters only the regret bounds, and Theorem 5 (the "
    "privacy claim) has no hypothesis on r or R.")

_RADII_RANGE = ("r B^p subset C subset R B^p, 0 < r < R (on C = rho B^p: r = rho with any "
                "R > rho, see notes)")

_COMMON_RANGE = {
    "epsilon": "(0, inf)",
    "delta": "0 (pure DP)",
    "T": ">= 1",
    "p (dimension d)": ">= 1",
}

TREE_AGGREGATION = PrivacyClaim(
    id="st13/tree-aggregation",
    formula="(eps, 0)",
    citation=CITATION,
    epsilon=1.0,
    delta=0.0,
    provenance=Provenance(
        PAPER, VERSION, "Sec. 2.1 'Tree-based Aggregation' and App. A (Algorithm 2)",
        "Assuming each z_t has L2-norm of at most L', the following tree-based aggregation "
        "scheme will ensure that ... the whole sequence v_1, ..., v_T is eps-differentially "
        "private", "Sec. 2.1; App. A; App. B.1 eq. (11)"),
    calibration=TREE_CALIBRATION,
    parameter_range={**_COMMON_RANGE, "mu (L2-norm bound on z_t)": "(0, inf)"},
    neighbour=NeighbourRelation.REPLACE_ONE,
    release=Release.FULL_SEQUENCE,
    lemmas=(NODE_RATIO_LEMMA, _LEAF_NODES_LEMMA, _INPUT_BOUND_LEMMA),
    notes=("Released: all noisy partial sums v_1..v_T. Neighbours: one vector z_t replaced by "
           "another of l2 norm <= mu. Root case of Alg. 2 (left open in print): the root is "
           "treated as a left child, so at t = 2^ceil(log2 T) the whole path is noised and the "
           "root is released; bits b_i are read least significant first along the path from the "
           "leaf. Inputs are clipped to mu."),
)

PFTAL_CLAIM = PrivacyClaim(
    id="st13/pftal",
    formula="(eps, 0)",
    citation=CITATION,
    epsilon=1.0,
    delta=0.0,
    provenance=Provenance(
        PAPER, VERSION, "Theorem 3 (Algorithm 1)",
        "Pass grad f_t(w^_t), L2-bound L and privacy parameter eps to the tree based "
        "aggregation protocol (Alg. 1 lines 2 and 5); Theorem 3: Algorithm 1 is "
        "eps-differentially private", "Sec. 2.1.1; App. B.1"),
    calibration=("Algorithm 2 with mu = L: node noise density proportional to "
                 "exp(-||n||_2 eps / (L (ceil(log2 T) + 1)))"),
    parameter_range={**_COMMON_RANGE, "L (Lipschitz)": "(0, inf)",
                     "H (strong convexity)": ("(0, 2 L / diam(C)], i.e. (0, L / R] on the ball of "
                                              "radius R (derived, not printed: see notes)"),
                     "C": "any convex set"},
    neighbour=NeighbourRelation.REPLACE_ONE,
    release=Release.FULL_SEQUENCE,
    lemmas=(NODE_RATIO_LEMMA, _LEAF_NODES_LEMMA, _INPUT_BOUND_LEMMA, _POSTPROCESSING_LEMMA),
    notes=("Losses: L-Lipschitz, H-strongly convex over C. Released: w^_1..w^_T (line 4's "
           "'Output w^_t' read as releasing the point just computed). w^_1 = Pi_C(0). Lemma 8 "
           "also mentions a noise scale with L + H||C||_2; the printed Algorithm 1 passes L "
           "(tree_bound reading 'lipschitz'); the other reading is audited too. The range of H "
           "is not printed in the paper (Theorems 3-4 quantify over any L-Lipschitz, H-strongly "
           "convex losses): it is derived from the class being non-empty. For x, y in C, "
           "H ||x - y||^2 <= <grad f(x) - grad f(y), x - y> <= 2 L ||x - y||, so "
           "H diam(C) <= 2 L is necessary; on the ball of radius R (the audited C) it reads "
           "H <= L / R and is also sufficient (f(w) = H/2 ||w||^2 is H R-Lipschitz there). "
           "(Sec. 1 calls ||C||_2 the diameter; the bound is stated with diam(C) to avoid "
           "reading it as a radius.)"),
)

PFTAL_CONVEX_CLAIM = PrivacyClaim(
    id="st13/pftal-convex",
    formula="(eps, 0)",
    citation=CITATION,
    epsilon=1.0,
    delta=0.0,
    provenance=Provenance(
        PAPER, VERSION, "App. C (Algorithm 1 on h_t = f_t + H/2 ||w||^2; Theorem 11)",
        "Clearly, each h_t is now H-strongly convex. So, the privacy and regret guarantees in "
        "Section 2.1.1 will hold for the cost sequence h_1, ..., h_T", "App. C; Sec. 2.1.1"),
    calibration=("Algorithm 2 with mu = the bound passed for h_t: the paper leaves it open; "
                 "readings 'lipschitz+H|C|' (mu = L + H ||C||_2, the Lipschitz constant of h_t) "
                 "and 'lipschitz' (mu = L) are both audited"),
    parameter_range={**_COMMON_RANGE, "L (Lipschitz)": "(0, inf)",
                     "H (regulariser)": "(0, inf); Theorem 11: sqrt(p log^2.5 T / (eps T))",
                     "C": "any convex set"},
    neighbour=NeighbourRelation.REPLACE_ONE,
    release=Release.FULL_SEQUENCE,
    lemmas=(NODE_RATIO_LEMMA, _LEAF_NODES_LEMMA, _INPUT_BOUND_LEMMA, _POSTPROCESSING_LEMMA),
    notes=("Losses f_t: L-Lipschitz convex over C; the tree receives grad h_t(w^_t) = "
           "grad f_t(w^_t) + H w^_t, clipped to mu."),
)

BANDIT_FTAL_CLAIM = PrivacyClaim(
    id="st13/bandit-ftal",
    formula="(eps, 0)",
    citation=CITATION,
    epsilon=1.0,
    delta=0.0,
    provenance=Provenance(
        PAPER, VERSION, "Theorem 5 (Algorithm 3, App. E.1)",
        "Pass (p/beta) f_t(w^dagger_t + beta u_t) u_t, L2-bound pB/beta and privacy parameter "
        "eps to the tree based protocol (Alg. 3 lines 3 and 7); Theorem 5: the bandit version "
        "of PFTAL (Algorithm 3) is eps-differentially private", "Sec. 3.2; App. E.1"),
    calibration=("Algorithm 2 with mu = p B / beta: node noise density proportional to "
                 "exp(-||n||_2 eps beta / (p B (ceil(log2 T) + 1)))"),
    parameter_range={**_COMMON_RANGE, "B (|f_t| <= B)": "(0, inf)",
                     "H (strong convexity)": "(0, inf)", "L (Lipschitz)": "(0, inf)",
                     "r, R": _RADII_RANGE,
                     "beta, xi": "Theorem 6: beta = p/T^(1/3) (oblivious) or p/T^(1/4) "
                                 "(adaptive), xi = beta/r"},
    neighbour=NeighbourRelation.REPLACE_ONE,
    release=Release.FULL_SEQUENCE,
    lemmas=(NODE_RATIO_LEMMA, _LEAF_NODES_LEMMA, _INPUT_BOUND_LEMMA, _POSTPROCESSING_LEMMA),
    notes=("Released: the played points w^_t = w^dagger_t + beta u_t only (Sec. 3.1 step 2). "
           "The proof 'is exactly the same as of Theorem 3'. " + _INNER_RADIUS_NOTE),
)

BANDIT_FTAL_CONVEX_CLAIM = PrivacyClaim(
    id="st13/bandit-ftal-convex",
    formula="(eps, 0)",
    citation=CITATION,
    epsilon=1.0,
    delta=0.0,
    provenance=Provenance(
        PAPER, VERSION, "App. E.3 (Theorem 17; privacy as Theorem 5)",
        "Our results in this section can be extended to the setting with general convex costs "
        "via the regularization trick from Appendix C (by adding H/2 ||w||^2 to each cost "
        "function f_t)", "Sec. 3.2 'Bound for general convex functions'; App. E.3"),
    calibration=("Algorithm 2 with mu = p B / beta (Algorithm 3 as printed; reading "
                 "'loss-bound') or p (B + H R^2/2) / beta (the bound on |h_t|; reading "
                 "'regularised'); Theorem 17: H = 1/T^(1/4), beta = p/T^(1/4), xi = beta/r"),
    parameter_range={**_COMMON_RANGE, "B (|f_t| <= B)": "(0, inf)", "L (Lipschitz)": "(0, inf)",
                     "r, R": _RADII_RANGE,
                     "H, beta, xi": "Theorem 17: H = 1/T^(1/4), beta = p/T^(1/4), xi = beta/r"},
    neighbour=NeighbourRelation.REPLACE_ONE,
    release=Release.FULL_SEQUENCE,
    lemmas=(NODE_RATIO_LEMMA, _LEAF_NODES_LEMMA, _INPUT_BOUND_LEMMA, _POSTPROCESSING_LEMMA),
    notes=("Losses f_t: L-Lipschitz convex, |f_t| <= B on C; the tree receives "
           "(p/beta) h_t(w^_t) u_t with h_t = f_t + H/2 ||w||^2, clipped to mu. "
           + _INNER_RADIUS_NOTE),
)

#: All five, in a stable order.
ST13_CLAIMS: tuple[PrivacyClaim, ...] = (TREE_AGGREGATION, PFTAL_CLAIM, PFTAL_CONVEX_CLAIM,
                                         BANDIT_FTAL_CLAIM, BANDIT_FTAL_CONVEX_CLAIM)


# Every grid parameter's stated range (ranges.py), so an audit covers the whole stated range.
TREE_AGGREGATION = replace(TREE_AGGREGATION, ranges=ST13_RANGES[TREE_AGGREGATION.id])
PFTAL_CLAIM = replace(PFTAL_CLAIM, ranges=ST13_RANGES[PFTAL_CLAIM.id])
PFTAL_CONVEX_CLAIM = replace(PFTAL_CONVEX_CLAIM, ranges=ST13_RANGES[PFTAL_CONVEX_CLAIM.id])
BANDIT_FTAL_CLAIM = replace(BANDIT_FTAL_CLAIM, ranges=ST13_RANGES[BANDIT_FTAL_CLAIM.id])
BANDIT_FTAL_CONVEX_CLAIM = replace(BANDIT_FTAL_CONVEX_CLAIM,
                                   ranges=ST13_RANGES[BANDIT_FTAL_CONVEX_CLAIM.id])
ST13_CLAIMS = (TREE_AGGREGATION, PFTAL_CLAIM, PFTAL_CONVEX_CLAIM, BANDIT_FTAL_CLAIM,
               BANDIT_FTAL_CONVEX_CLAIM)
