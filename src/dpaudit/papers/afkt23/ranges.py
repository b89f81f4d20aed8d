"""The stated range of every grid parameter of the afkt23 claims.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``). Quotes are verbatim from the paper
(whitespace collapsed), checked by ``tests/test_parameter_ranges.py`` against the seed text, and
the extremes and jumps against every grid; notes say where a range is read from the definitions
and why the grid's values stand for each end.
"""

from __future__ import annotations

from dataclasses import replace

from dpaudit.claims import ParameterRange

__all__ = ["AFKT23_RANGES"]


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

#: Claim id -> the stated range of each of its grid parameters.
AFKT23_RANGES: dict[str, tuple[ParameterRange, ...]] = {
    "afkt23/alg1-pure": _ALG1_RANGES,
    "afkt23/alg1-approx": _ALG1_RANGES + (
        _R("delta", "(0, 1)", r"then Algorithm 1 is $(\varepsilon, \delta)$ -DP", (1e-6, 0.99),
           note="the near-one end at eps = 0.1, which the garbled side condition (read as eps <= "
                "sqrt(log T log(1/delta)) = 0.29 at T = 4096, delta = 0.99) admits"),),
    "afkt23/alg2": (
        _R("epsilon", "(0, inf)", r"Then Algorithm 2 is $\varepsilon$ -DP", (0.1, 10.0)),
        _R("d", ">= 2 experts", _EXPERTS, (2, 1024)),
        _R("T", ">= 2 (log T > 0)", r"Set $\varepsilon_0 = \varepsilon/2 \log T$", (2, 2 ** 30),
           note="2^30: enough rounds for the uncapped restarts to exceed the proof's log T; T = 2 "
                "(standard grid): the smallest horizon with log T > 0"),
        _BETA,
        _R("cap", "none | log2 T", r"can change at most $\log(T)$ times", role="reading",
           note="no cap as printed; the proof's log T cap audited as the other reading")),
    "afkt23/net-oco": (
        _R("epsilon", "(0, inf)", r"with $\rho = 1/(LT)$ is $(\varepsilon, \delta)$ -DP", (0.1, 128.0)),
        _R("delta", "[0, 1) (0: Theorem 1's pure calibration)",
           r"with $\rho = 1/(LT)$ is $(\varepsilon, \delta)$ -DP", (0.0, 0.99)),
        _R("d", ">= 1", r"Let $\mathcal{X} = \{x \in \mathbb{R}^d : \|x\|_2 \leq D\}$", (1, 2),
           note="the net has about (2 D sqrt(d) L T)^d points: d <= 2 is what can be enumerated"),
        _R("T", ">= 1", r"$\rho = 1/(LT)$", (1, 1024),
           note="T = 1 (standard grid): one release, the net's exponential mechanism before any loss")),
    "afkt23/dp-ftrl": (
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
           note="sigma is not printed: Delta = 2L (replace-one) or L")),
    "afkt23/alg5": (
        _R("epsilon", "(0, inf)", r"then this algorithm satisfies $\varepsilon$ -DP", (1e-4, 3000.0),
           note="3000: the large-eps limit where the best pair found is closest to the claim; 1e-4 "
                "(scope 'hypothesis pairs' only): where the hypothesis bound log^2(1/gamma) log T/eps "
                "admits unit losses at gamma = 0.99"),
        _ALG5_D, _ALG5_T, _GAMMA, _EPS0_READING, _PAIR,
        _R("scope", "all pairs | hypothesis pairs",
           r"If $L^*(\gamma) \leq \log^2 1/\gamma \log T/\varepsilon$ , then this algorithm satisfies",
           role="reading", note="privacy for every neighbouring pair (primary; points without the key) "
                                "or only for pairs meeting Theorem 6's hypothesis")),
    "afkt23/alg5-approx": (
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
        _EPS0_READING, _PAIR),
    "afkt23/above-threshold": (
        _R("epsilon", "(0, inf)", r"there is an $\varepsilon$ -DP algorithm (AboveThreshold)",
           (0.01, 10.0)),
        _R("queries", ">= 1", r"that halts at time $k \in [T + 1]$", (1, 32))),
    "afkt23/binary-tree": (
        _R("epsilon", "(0, 1]", r"Let $\varepsilon \leq 1$", (0.1, 1.0)),
        _R("T", ">= 1", r"takes a stream of numbers $a_1, a_2, \dots, a_T$", (1, 256), (15, 16),
           note="floor(log2 T) + 1 tree levels jump at every power of two")),
}
