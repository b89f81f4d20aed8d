"""The privacy claims of AFKT23 (ICML 2023), exactly as printed, as data.

Every claim is stated for any epsilon > 0 (Theorem 7: epsilon < 1; Theorem 5's lower bound is not a
privacy claim) under the paper's relation (Definition 2.1: sequences "that differ in a single
element", i.e. one round's whole loss vector / loss function replaced), with the whole sequence of
plays released. ``epsilon``/``delta`` are representative values; ``parameter_range`` records the
quantification. Reading choices are in ``notes`` and in the learners' module docstrings.

Claim ids (issue 11): ``afkt23/alg1-pure``, ``afkt23/alg1-approx``, ``afkt23/alg2``,
``afkt23/net-oco``, ``afkt23/dp-ftrl``, ``afkt23/alg5``, ``afkt23/alg5-approx``,
``afkt23/above-threshold``, ``afkt23/binary-tree``.
"""

from __future__ import annotations

from dataclasses import replace

from dpaudit.claims import (NeighbourRelation, ParameterRange, PrivacyClaim, Provenance,
                            ReadingChoice, Release, SensitivityLemma)

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


#: The primary reading of every claim whose audit sweeps a reading parameter (issue 27, "readings
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
    """``claim`` with its primary reading declared (the verdict rests on it; issue 27)."""
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


# --- stated ranges of every grid parameter (issue 33) -----------------------------------------------
# Quotes are verbatim from afkt23.txt (whitespace collapsed; tests/test_parameter_ranges.py checks
# them against the seed text and the extremes and jumps against every grid).

def _R(name: str, stated: str, quote: str = "", extremes: tuple = (), breakpoints: tuple = (),
       role: str = "parameter", note: str = "") -> ParameterRange:
    return ParameterRange(name, stated, quote, extremes, breakpoints, role, note)


_THM1_EPS = _R("epsilon", "(0, inf)", r"If $\eta = \varepsilon / (12 \lceil \log d \rceil + 48 "
               r"\log(1/\beta))$ then Algorithm 1 is $\varepsilon$ -DP", (0.1, 128.0),
               note="no range printed; 128 is where the exact laws at T = 6 see a switch")
_EXPERTS = r"Let $\ell_1, \dots, \ell_T \in [0, 1]^d$ be chosen by an oblivious adversary"
_THM1_D = _R("d", ">= 2 experts", _EXPERTS, (2, 1024), (2, 3),
             note="ceil(log d) (base 2) jumps from 1 to 2 between d = 2 and d = 3")
_THM1_T = _R("T", ">= 1", _EXPERTS, (6, 1048576), (6, 256),
             note="the draws the loop allows, min(ceil(K), floor(T/2)), saturate at T = 2 ceil(K) "
                  "(48 at d = 2, beta = 0.49): T = 6 below, 256 above. T = 1 is not audited: "
                  "line 4 plays x_1 = x_0 ~ Unif[d] before the first loss is received (line 11), "
                  "so a one-round release does not depend on the data (epsilon 0)")
_BETA = _R("beta", "(0, 1/2)", r"Let $0 < \beta < 1/2$", (0.01, 0.49))
_K_READING = _R("k_reading", "printed | integer", r"**if** $k < K$ **then**", role="reading",
                note="line 5 with line 1's real K: ceil(K) draws (printed) or floor(K) (integer)")
_ALG1_RANGES = (_THM1_EPS, _THM1_D, _THM1_T, _BETA, _K_READING)
_GAMMA = _R("gamma", "(0, 1)", r"For some $\gamma > 0$ , let $L^*(\gamma)$ be such that",
            (2.0 ** -20, 0.99), (0.61, 0.6, 0.37, 0.36),
            note="a prior mass (K = 2 log 1/gamma > 0 needs gamma < 1); 2^-20 = 1/d at d = 2^20; "
                 "ceil(K) phases jump at gamma = e^(-1/2) (0.61 | 0.6) and e^(-1) (0.37 | 0.36)")
_ALG5_T = _R("T", ">= 2 (log T > 0)", r"$\beta = \frac{1}{T^2}$", (2, 1048576),
             note="T = 2 (standard grid, d = 2): the smallest horizon with log T > 0")
_ALG5_D = _R("d", ">= 2 experts", r"In particular, for DP-OPE with $d$ experts", (2, 1048576))
_EPS0_READING = _R("eps0_reading", "eps0-formula | eta-formula",
                   r"$\varepsilon_0 = \varepsilon/\sqrt{K} \log 1/\delta$", role="reading",
                   note="Theorem 7's eps_0 as printed, or as implied by its eta identity")
_PAIR = _R("pair", "label", role="label",
           note="names the special pair a point audits (module audit: LARGE_EPS_STREAM, "
                "NEAR_ONE_DELTA_ROWS), no parameter of the claim")

ALG1_PURE = replace(ALG1_PURE, ranges=_ALG1_RANGES)
ALG1_APPROX = replace(ALG1_APPROX, ranges=_ALG1_RANGES + (
    _R("delta", "(0, 1)", r"then Algorithm 1 is $(\varepsilon, \delta)$ -DP", (1e-6, 0.99),
       note="the near-one end at eps = 0.1, which the garbled side condition (read as eps <= "
            "sqrt(log T log(1/delta)) = 0.29 at T = 4096, delta = 0.99) admits"),))
ALG2 = replace(ALG2, ranges=(
    _R("epsilon", "(0, inf)", r"Then Algorithm 2 is $\varepsilon$ -DP", (0.1, 10.0)),
    _R("d", ">= 2 experts", _EXPERTS, (2, 1024)),
    _R("T", ">= 2 (log T > 0)", r"Set $\varepsilon_0 = \varepsilon/2 \log T$", (2, 2 ** 30),
       note="2^30: enough rounds for the uncapped restarts to exceed the proof's log T; T = 2 "
            "(standard grid): the smallest horizon with log T > 0"),
    _BETA,
    _R("cap", "none | log2 T", r"can change at most $\log(T)$ times", role="reading",
       note="no cap as printed; the proof's log T cap audited as the other reading")))
NET_OCO = replace(NET_OCO, ranges=(
    _R("epsilon", "(0, inf)", r"with $\rho = 1/(LT)$ is $(\varepsilon, \delta)$ -DP", (0.1, 128.0)),
    _R("delta", "[0, 1) (0: Theorem 1's pure calibration)",
       r"with $\rho = 1/(LT)$ is $(\varepsilon, \delta)$ -DP", (0.0, 0.99)),
    _R("d", ">= 1", r"Let $\mathcal{X} = \{x \in \mathbb{R}^d : \|x\|_2 \leq D\}$", (1, 2),
       note="the net has about (2 D sqrt(d) L T)^d points: d <= 2 is what can be enumerated"),
    _R("T", ">= 1", r"$\rho = 1/(LT)$", (1, 1024),
       note="T = 1 (standard grid): one release, the net's exponential mechanism before any loss")))
DP_FTRL = replace(DP_FTRL, ranges=(
    _R("epsilon", "(0, inf)", r"is $(\varepsilon, \delta)$ -DP and generates", (0.1, 4.0)),
    _R("delta", "(0, 1)", r"\log(T) \log(1/\delta)\right)^{1/3}$", (1e-8, 0.99),
       note="the near-one end (0.5, 0.99; standard grid, eps = 1, T = 64) where the zCDP sigma "
            "shrinks: the Gaussian's total variation is below delta there (epsilon 0)"),
    _R("T", ">= 2 (log T > 0)", r"\log(T) \log(1/\delta)\right)^{1/3}$", (2, 256), (2, 64, 256),
       note="h = floor(log2 T) + 1 nodes per leaf jumps at every power of two"),
    _R("d", ">= 1", r"Let $\mathcal{X} = \{x \in \mathbb{R}^d : \|x\|_2 \leq D\}$", (1, 8)),
    _R("D", "> 0", r"Let $\mathcal{X} = \{x \in \mathbb{R}^d : \|x\|_2 \leq D\}$", (1.0, 1e4),
       note="D enters lambda and whether a point is projected; L = 1, beta fixed"),
    _R("reading", "2L | L", r"Appendix B.1 in (Kairouz et al., 2021)", role="reading",
       note="sigma is not printed: Delta = 2L (replace-one) or L")))
ALG5 = replace(ALG5, ranges=(
    _R("epsilon", "(0, inf)", r"then this algorithm satisfies $\varepsilon$ -DP", (1e-4, 3000.0),
       note="3000: the large-eps limit where the best pair found is closest to the claim; 1e-4 "
            "(scope 'hypothesis pairs' only): where the hypothesis bound log^2(1/gamma) log T/eps "
            "admits unit losses at gamma = 0.99"),
    _ALG5_D, _ALG5_T, _GAMMA, _EPS0_READING, _PAIR,
    _R("scope", "all pairs | hypothesis pairs",
       r"If $L^*(\gamma) \leq \log^2 1/\gamma \log T/\varepsilon$ , then this algorithm satisfies",
       role="reading", note="privacy for every neighbouring pair (primary; points without the key) "
                            "or only for pairs meeting Theorem 6's hypothesis")))
ALG5_APPROX = replace(ALG5_APPROX, ranges=(
    _R("epsilon", "(0, 1)", r"Suppose that for $\varepsilon < 1$", (0.1, 0.9)),
    _R("delta", "(0, 1)", r"$\varepsilon_0 = \varepsilon/\sqrt{K} \log 1/\delta$", (1e-6, 0.997),
       note="no upper limit printed; eps_0 grows as 1/log(1/delta) near 1"),
    _ALG5_D, _ALG5_T,
    replace(_GAMMA, extremes=(2.0 ** -20, 1.0 - 1e-8),
            note=_GAMMA.note + "; Theorem 7's eps_0 exceeds eps only for gamma > 0.99738 at delta "
                               "= 1e-6 (eta-formula: > 0.982): exact laws at gamma = 0.9999 and "
                               "0.99999 (T = 6, d = 2), and from 0.99995 to 1 - 1e-8 with pairs "
                               "in which every expert loses every round as well (the pairs with a "
                               "zero-loss expert give 0 there)"),
    _EPS0_READING, _PAIR))
ABOVE_THRESHOLD = replace(ABOVE_THRESHOLD, ranges=(
    _R("epsilon", "(0, inf)", r"there is an $\varepsilon$ -DP algorithm (AboveThreshold)",
       (0.01, 10.0)),
    _R("queries", ">= 1", r"that halts at time $k \in [T + 1]$", (1, 32))))
BINARY_TREE = replace(BINARY_TREE, ranges=(
    _R("epsilon", "(0, 1]", r"Let $\varepsilon \leq 1$", (0.1, 1.0)),
    _R("T", ">= 1", r"takes a stream of numbers $a_1, a_2, \dots, a_T$", (1, 256), (15, 16),
       note="floor(log2 T) + 1 tree levels jump at every power of two")))
AFKT23_CLAIMS = (ALG1_PURE, ALG1_APPROX, ALG2, NET_OCO, DP_FTRL, ALG5, ALG5_APPROX,
                 ABOVE_THRESHOLD, BINARY_TREE)
