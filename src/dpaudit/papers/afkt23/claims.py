"""The privacy claims of AFKT23 (ICML 2023), exactly as printed, as data.

Every claim is stated for any epsilon > 0 (Theorem 7: epsilon < 1; Theorem 5's lower bound is not a
privacy claim) under the paper's relation (Definition 2.1: sequences "that differ in a single
element", i.e. one round's whole loss vector / loss function replaced), with the whole sequence of
plays released. ``epsilon``/``delta`` are representative values; ``parameter_range`` records the
quantification. Reading choices are in ``notes`` and in the learners' module docstrings.

Claim ids: ``afkt23/alg1-pure``, ``afkt23/alg1-approx``, ``afkt23/alg2``,
``afkt23/net-oco``, ``afkt23/dp-ftrl``, ``afkt23/alg5``, ``afkt23/alg5-approx``,
``afkt23/above-threshold``, ``afkt23/binary-tree``.
"""

from __future__ import annotations

from dataclasses import replace

from dpaudit.claims import (NeighbourRelation, PrivacyClaim, Provenance, ReadingChoice, Release,
                            SensitivityLemma)
from dpaudit.papers.afkt23.ranges import AFKT23_RANGES

__all__ = ["PAPER", "VERSION", "SVT_QUERY_LEMMA_ALG1", "LAPLACE_COUNT_LEMMA_ALG2",
           "SVT_QUERY_LEMMA_ALG5", "EM_SCORE_LEMMA", "ALG1_PURE", "ALG1_APPROX", "ALG2", "NET_OCO",
           "DP_FTRL", "ALG5", "ALG5_APPROX", "ABOVE_THRESHOLD", "BINARY_TREE", "AFKT23_CLAIMS",
           "PRIMARY_READINGS"]

PAPER = "afkt23.txt"
VERSION = "ICML 2023 (PMLR 202), with appendices A-D"
#: The paper as reviewers cite it (reports' paper column).
CITATION = (
    "Asi, Feldman, Koren, Talwar: Near-Optimal Algorithms for Private Online Optimization in "
    "the Realizable Regime, ICML 2023 (PMLR 202), with appendices A-D")

_LOGS = ("log bases are never stated: ceil(log d) read as ceil(log2 d) (the proof halves the "
         "potential ceil(log d) times), log(1/beta), B, log(1/delta) natural; each is a parameter")

SVT_QUERY_LEMMA_ALG1 = SensitivityLemma(
    "every query fed to Algorithm 1's sparse vector, q_t = sum_{i=t_p}^{t-1} l_i(x_t), is "
    "1-sensitive under replacing one loss vector in [0,1]^d",
    Provenance(PAPER, VERSION, "Lemma 2.3 (assumption) / proof of Theorem 1",
               "We assume that each q_i is 1-sensitive", "Sec. 2.1 and Sec. 3"))

LAPLACE_COUNT_LEMMA_ALG2 = SensitivityLemma(
    "Algorithm 2's count sum_{i=1}^{t-1} l_i(x_t) is 1-sensitive (Laplace(K/eps_0) makes it "
    "eps_0/K-DP)",
    Provenance(PAPER, VERSION, "Proof of Theorem 2 (App. B.2)",
               "applications of the Laplace mechanism ... Each of these is eps/2K log(T)-DP",
               "App. B.2"))

SVT_QUERY_LEMMA_ALG5 = SensitivityLemma(
    "every query fed to Algorithm 5's sparse vector, q_t = (1/eta)(log phi_eta(t*(k)) - "
    "log phi_eta(t)), is 1-sensitive under replacing one loss vector in [0,1]^d",
    Provenance(PAPER, VERSION, "Lemma 2.3 (assumption) / privacy paragraph before Theorem 6",
               "each phase of the algorithm satisfies (eta + eps_0)-DP", "App. C"))

EM_SCORE_LEMMA = SensitivityLemma(
    "the exponential mechanism's scores max(sum_{i<t} l_i(x), L*) (Alg. 1) and sum_{i<t} l_i(x) "
    "(Alg. 5) are 1-sensitive; exp(-eta s/2) is then eta-DP, exp(-eta s) is 2 eta-DP under "
    "replacement (the paper charges eta for both)",
    Provenance(PAPER, VERSION, "Proof of Theorem 1; App. C",
               "K applications of the exponential mechanism with privacy parameter eta",
               "Sec. 3, App. C"))

_ALG1_RANGE = {"epsilon": "(0, inf)", "d": ">= 2 experts", "T": ">= 1",
               "beta": "(0, 1/2)", "L*": ">= 0 (known)"}

ALG1_PURE = PrivacyClaim(
    id="afkt23/alg1-pure", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Theorem 1 (pure part)",
                          "eta = eps / (12 ceil(log d) + 48 log(1/beta)); K = 6 ceil(log d) + "
                          "24 log(1/beta); InitializeSparseVec(eps/2, L, beta/T); "
                          "P(x_t = x) ∝ exp(-eta s_t(x)/2)", "Sec. 3, Algorithm 1"),
    calibration=("sparse vector at eps/2 (Lap(4/eps) threshold, Lap(8/eps) query noise), K "
                 "exponential-mechanism draws exp(-eta s/2), eta = eps/(2K); proof: eps/2 + K eta"),
    parameter_range=_ALG1_RANGE, lemmas=(SVT_QUERY_LEMMA_ALG1, EM_SCORE_LEMMA),
    notes=("loop 'k < K' with K non-integer allows ceil(K) draws (k_reading='printed'; "
           "'integer' reads floor(K)); " + _LOGS + "; after K draws the expert is kept; losses "
           "clipped to [0,1]"))

ALG1_APPROX = PrivacyClaim(
    id="afkt23/alg1-approx", epsilon=1.0, delta=1e-6,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Theorem 1 (approximate part)",
                          "eta = eps / sqrt(32 (6 ceil(log d) + 24 log(1/beta)) log(1/delta)); "
                          "proof: (eps/2 + sqrt(2K) log(1/delta) eta + K eta (e^eta - 1), delta)",
                          "Sec. 3"),
    calibration="as alg1-pure with eta = eps / sqrt(32 K log(1/delta))",
    parameter_range=_ALG1_RANGE | {"delta": "(0, 1)",
                                   "epsilon": "(0, inf); the printed side condition is garbled"},
    lemmas=(SVT_QUERY_LEMMA_ALG1, EM_SCORE_LEMMA),
    notes=("the printed condition on eps ('eps <= sqrt(log T log(1/delta)) / (eps / sqrt(...))') "
           "is garbled and not enforced; " + _LOGS))

ALG2 = PrivacyClaim(
    id="afkt23/alg2", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Theorem 2 (privacy proof App. B.2)",
                          "eps_0 = eps/2 log T, beta_0 = beta/T, K = 6 ceil(log d) + "
                          "24 log(1/beta_0), eta = eps_0/2K; Laplace(K/eps_0); 'Lbar* can change "
                          "at most log(T) times'", "Sec. 3.1, Algorithm 2"),
    calibration=("each application of Algorithm 1 at eps_0, each Laplace(K/eps_0) count eps_0/K; "
                 "proof: at most log T applications"),
    parameter_range={"epsilon": "(0, inf)", "d": ">= 2", "T": ">= 2", "beta": "(0, 1/2)"},
    lemmas=(SVT_QUERY_LEMMA_ALG1, LAPLACE_COUNT_LEMMA_ALG2, EM_SCORE_LEMMA),
    notes=("no cap on restarts as printed (capped option audited separately); log T in eps_0 read "
           "as log2 T; L uses the current estimate Lbar*; restarts run Algorithm 1 on the "
           "remaining rounds; " + _LOGS))

NET_OCO = PrivacyClaim(
    id="afkt23/net-oco", epsilon=1.0, delta=1e-6,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Theorem 3",
                          "running Algorithm 1 over X_experts^rho with rho = 1/(LT) is "
                          "(eps, delta)-DP", "Sec. 4.1"),
    calibration="Algorithm 1 with Theorem 1's calibration on M = |rho-net| experts",
    parameter_range={"epsilon": "(0, inf)", "delta": "[0, 1)", "d": ">= 1 (audited: 1, 2)",
                     "T": ">= 1", "L": "> 0", "D": "> 0"},
    lemmas=(SVT_QUERY_LEMMA_ALG1, EM_SCORE_LEMMA),
    notes=("net: grid of spacing 2 rho/sqrt(d) projected on the ball; expert losses "
           "l_t(x)/(2LD) clipped to [0,1]; pure calibration when delta = 0"))

DP_FTRL = PrivacyClaim(
    id="afkt23/dp-ftrl", epsilon=1.0, delta=1e-5,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Theorem 4",
                          "lambda = 32 beta + ((beta/eps^2)(L/D)^2 T d log(T) log(1/delta))^{1/3}; "
                          "noise: 'see Appendix B.1 in (Kairouz et al., 2021)'", "Sec. 4.2, "
                          "Algorithm 3"),
    calibration=("Gaussian tree aggregation of gradients clipped to L, sigma from rho-zCDP "
                 "rho = h Delta^2/(2 sigma^2), h = floor(log2 T) + 1, rho + 2 sqrt(rho ln(1/delta)) "
                 "= eps (our reading of Kairouz et al. 2021; Delta = L or 2L)"),
    parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1)", "T": ">= 2", "d": ">= 1",
                     "L, D, beta": "> 0"},
    notes="calibration not printed in AFKT23; taken from Kairouz et al. (2021) as documented")

_ALG5_RANGE = {"epsilon": "(0, inf)", "d": ">= 2 (gamma = 1/d)", "T": ">= 2",
               "alpha": "1", "beta": "1/T^2"}

ALG5 = PrivacyClaim(
    id="afkt23/alg5", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "App. C privacy paragraph with Theorem 6",
                          "each phase satisfies (eta + eps_0)-DP; alpha = 1, beta = 1/T^2, "
                          "K = 2 log 1/gamma, eps_0 = eps/K, eta = eps_0/(56 log T)", "App. C"),
    calibration=("K phases, each a sparse vector at eps_0 (threshold 2 alpha) and one draw "
                 "P(x) ∝ exp(-eta sum l(x))"),
    parameter_range=_ALG5_RANGE, lemmas=(SVT_QUERY_LEMMA_ALG5, EM_SCORE_LEMMA),
    notes="K = 2 ln d non-integer: 'k < K' allows ceil(K) phases; natural logs")

ALG5_APPROX = PrivacyClaim(
    id="afkt23/alg5-approx", epsilon=0.5, delta=1e-6,
    formula="(eps, delta)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "App. C privacy paragraph with Theorem 7",
                          "(2(eta + eps_0) sqrt(K) log 1/delta, delta)-DP; eps_0 = "
                          "eps/sqrt(K) log 1/delta, eta = eps_0/(56 log T) = "
                          "eps/(112 log T sqrt(log 1/gamma log 1/delta))", "App. C"),
    calibration="as alg5 with Theorem 7's eps_0 (two printed forms; eps0_reading)",
    parameter_range=_ALG5_RANGE | {"epsilon": "(0, 1)", "delta": "(0, 1)"},
    lemmas=(SVT_QUERY_LEMMA_ALG5, EM_SCORE_LEMMA),
    notes=("eps_0 printed as 'eps/sqrt(K) log 1/delta' and implied by the eta identity as "
           "eps/sqrt(2K log(1/delta)): both audited"))

ABOVE_THRESHOLD = PrivacyClaim(
    id="afkt23/above-threshold", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Lemma 2.3 (Dwork & Roth 2014, Thm 3.24)",
                          "there is an eps-DP algorithm (AboveThreshold) that halts at time "
                          "k in [T+1]", "Sec. 2.1"),
    calibration="Dwork-Roth Alg 1: threshold Lap(2/eps), query noise Lap(4/eps), 1-sensitive queries",
    parameter_range={"epsilon": "(0, inf)", "T": ">= 1 queries"},
    notes="mechanism-level claim: the released object is the halting time")

BINARY_TREE = PrivacyClaim(
    id="afkt23/binary-tree", epsilon=1.0, delta=0.0,
    formula="(eps, 0)", citation=CITATION,
    provenance=Provenance(PAPER, VERSION, "Lemma 2.4 (Dwork et al. 2010, Thm 4.1)",
                          "Let eps <= 1. There is an eps-DP algorithm (BinaryTree) that takes a "
                          "stream a_1..a_T and outputs c_1..c_T", "Sec. 2.1"),
    calibration=("no calibration printed: Laplace node noise of scale (floor(log2 T) + 1)/eps "
                 "(Dwork et al. 2010 / Chan et al. 2011), streams in [0,1]"),
    parameter_range={"epsilon": "(0, 1]", "T": ">= 1"},
    notes="mechanism-level claim; the node-noise scale is our reading of the cited construction")

AFKT23_CLAIMS: tuple[PrivacyClaim, ...] = (ALG1_PURE, ALG1_APPROX, ALG2, NET_OCO, DP_FTRL, ALG5,
                                           ALG5_APPROX, ABOVE_THRESHOLD, BINARY_TREE)


#: The primary reading of every claim whose audit sweeps a reading parameter ("readings
#: are not parameters"): ``claim id -> (grid parameter, primary value, why)``. Primary = the paper's
#: literal text; where it prints nothing (DP-FTRL's noise), the reading consistent with its own
#: definitions (Definition 2.1's replace-one relation). The claim's verdict is the primary
#: reading's; the other values get their own verdicts (README "Readings"). alg5's ``scope`` reading
#: is declared with the claim below (its primary points carry no ``scope`` key). Readings that are fixed,
#: not swept (log bases, Alg. 5's k < K, Theorem 3's calibration per delta), are in the README.
PRIMARY_READINGS: dict[str, tuple[str, str, str]] = {
    ALG1_PURE.id: ("k_reading", "printed",
                   "Algorithm 1 line 5 tests 'if k < K' with the real K of line 1, 'Set K = "
                   "6 ceil(log d) + 24 log(1/beta)': k = 0, 1, ..., ceil(K) - 1 pass, so ceil(K) draws"),
    ALG1_APPROX.id: ("k_reading", "printed",
                     "same loop as alg1-pure: line 5 'if k < K' with line 1's real-valued K"),
    ALG2.id: ("cap", "none",
              "Algorithm 2 has no bound on restarts: '9: Set Lbar* = 2 Lbar*  10: Go to step 4'; "
              "the bound appears only in the proof (App. B.2: 'Lbar* can change at most log(T) "
              "times as L* <= T'), which the printed test does not enforce"),
    DP_FTRL.id: ("reading", "2L",
                 "AFKT23 prints no sigma (Algorithm 3 defers to 'Appendix B.1 in (Kairouz et al., "
                 "2021)'); its own relation, Definition 2.1, takes sequences 'that differ in a single "
                 "element' (replace one loss), under which a gradient clipped to norm L moves by 2L"),
    ALG5_APPROX.id: ("eps0_reading", "eps0-formula",
                     "Theorem 7 defines 'eps_0 = eps/sqrt(K) log 1/delta' (read eps/(sqrt(K) "
                     "log(1/delta)), as Algorithm 2's 'eps/2 log T' is eps/(2 log T)); the other "
                     "value is only implied by the second equality printed for eta, "
                     "'eta = eps_0/(56 log T) = eps/(112 log T sqrt(log 1/gamma log 1/delta))'"),
}


def _with_reading(claim: PrivacyClaim) -> PrivacyClaim:
    """``claim`` with its primary reading declared (the verdict rests on it)."""
    parameter, primary, why = PRIMARY_READINGS[claim.id]
    return replace(claim, readings=(ReadingChoice(parameter, primary, why),))


ALG1_PURE = _with_reading(ALG1_PURE)
ALG1_APPROX = _with_reading(ALG1_APPROX)
ALG2 = _with_reading(ALG2)
DP_FTRL = replace(DP_FTRL, readings=(ReadingChoice(
    "reading", "2L", PRIMARY_READINGS[DP_FTRL.id][2],
    labels={"2L": "Delta = 2L (replace-one, the paper's Definition 2.1)",
            "L": "Delta = L (Kairouz et al.'s calibration read as an add/remove sensitivity)"}),))
ALG5_APPROX = _with_reading(ALG5_APPROX)
ALG5 = replace(ALG5, readings=(ReadingChoice(
    "scope", "all pairs",
    "Definition 2.1 quantifies privacy over every pair of neighbouring sequences; Theorem 6's 'If "
    "L*(gamma) <= log^2 1/gamma log T/eps, then this algorithm satisfies eps-DP and incurs loss "
    "...' is read as the hypothesis of the loss bound (Lemma C.3 needs it so that the K phases "
    "suffice), not as a restriction of the pairs the privacy guarantee covers",
    labels={"all pairs": "privacy for all neighbouring pairs (the hypothesis bounds the loss)",
            "hypothesis pairs": "privacy only for pairs whose streams both satisfy L*(gamma) <= "
                                "log^2(1/gamma) log T/eps"}),))


# Every grid parameter's stated range (ranges.py).
ALG1_PURE = replace(ALG1_PURE, ranges=AFKT23_RANGES[ALG1_PURE.id])
ALG1_APPROX = replace(ALG1_APPROX, ranges=AFKT23_RANGES[ALG1_APPROX.id])
ALG2 = replace(ALG2, ranges=AFKT23_RANGES[ALG2.id])
NET_OCO = replace(NET_OCO, ranges=AFKT23_RANGES[NET_OCO.id])
DP_FTRL = replace(DP_FTRL, ranges=AFKT23_RANGES[DP_FTRL.id])
ALG5 = replace(ALG5, ranges=AFKT23_RANGES[ALG5.id])
ALG5_APPROX = replace(ALG5_APPROX, ranges=AFKT23_RANGES[ALG5_APPROX.id])
ABOVE_THRESHOLD = replace(ABOVE_THRESHOLD, ranges=AFKT23_RANGES[ABOVE_THRESHOLD.id])
BINARY_TREE = replace(BINARY_TREE, ranges=AFKT23_RANGES[BINARY_TREE.id])

AFKT23_CLAIMS = (ALG1_PURE, ALG1_APPROX, ALG2, NET_OCO, DP_FTRL, ALG5, ALG5_APPROX,
                 ABOVE_THRESHOLD, BINARY_TREE)
