"""The thirteen published privacy claims of Jain, Kothari & Thakurta (2012), per version.

*Differentially Private Online Learning*: ``jkt12-colt.txt`` (COLT 2012 proceedings, appendices
A-G) and ``jkt12-arxiv.txt`` (arXiv version). Each version's theorem is a separate claim, implemented
literally; the printed calibrations are the pure functions of :mod:`dpaudit.learners.pocp`,
:mod:`~dpaudit.mechanisms.private_sum`, :mod:`~dpaudit.learners.pqftl`, :mod:`~dpaudit.learners.pol`
and :mod:`~dpaudit.learners.pocp_doubling`, which the learners use too. :func:`claimed_privacy` maps
an algorithm's parameters to the (epsilon, delta) its theorem promises; the differences between the
versions that matter are tabulated in ``README.md`` beside this file (Claims).
"""

from __future__ import annotations

import math
from dataclasses import replace
from types import MappingProxyType
from typing import Mapping

from dpaudit._validation import check_delta, check_epsilon, check_int
from dpaudit.claims import PrivacyClaim, Provenance, ReadingChoice, Release, SensitivityLemma
from dpaudit.papers.jkt12.ranges import JKT12_RANGES

__all__ = ["CLAIM_IDS", "REPRESENTATIVE", "JKT12_CLAIMS", "claimed_privacy", "get_claim",
           "COLT", "ARXIV", "PRIMARY_READINGS"]

COLT = ("jkt12-colt.txt", "COLT 2012")
ARXIV = ("jkt12-arxiv.txt", "arXiv")
#: The paper in words, per version (reports print it instead of the file name).
CITATION = {COLT: "Jain, Kothari, Thakurta: Differentially Private Online Learning, COLT 2012 "
                  "(proceedings version)",
            ARXIV: "Jain, Kothari, Thakurta: Differentially Private Online Learning, arXiv "
                   "version"}

CLAIM_IDS: tuple[str, ...] = (
    "jkt12-colt/pocp", "jkt12-colt/pigd", "jkt12-colt/pgiga", "jkt12-colt/pqftl",
    "jkt12-colt/privatesum", "jkt12-colt/pol", "jkt12-colt/pocp-doubling",
    "jkt12-arxiv/pocp", "jkt12-arxiv/pigd", "jkt12-arxiv/pgiga", "jkt12-arxiv/pqftl",
    "jkt12-arxiv/privatesum", "jkt12-arxiv/pol",
)

#: The algorithm parameters of the representative instance of every claim.
REPRESENTATIVE: Mapping[str, float] = MappingProxyType({"epsilon": 1.0, "delta": 1e-5,
                                                        "T": 1024})

_POCP_BETA = ("beta = lambda_A T^{0.5+c} sqrt((2/eps)(ln(T/delta) + sqrt(eps)/T^{0.5+c})), "
              "b_{t+1} ~ N(0, beta^2/t^2 I)")
_C_COLT = "c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T)"
_C_ARXIV = "c = ln((1/2) ln(2/delta)) / (2 ln T)"
_SIGMA_COLT = "sigma^2 = R^2/eps^2 log^2 T log(log T/delta)"
_SIGMA_ARXIV = "sigma^2 = R^2/eps log^2 T log(log T/delta)"
_POL_BETA = ("beta = 2 sqrt(2) (L + alpha ||x*||) ln T / (T eps_p) sqrt(ln(1/delta) + eps_p), "
             "alpha = eps_g/||x*||^2")
_DOUBLING_BETA = ("beta_t = lambda_A sqrt(2^{k+1}/eps (ln(2^k/delta) + sqrt(eps/2^k))), "
                  "k = floor(log2 t), b_{t+1} ~ N(0, beta_t^2/t^2 I)")


def _prov(source: tuple[str, str], theorem: str, equation: str = "", location: str = "") -> Provenance:
    return Provenance(source[0], source[1], theorem, equation, location)


def _lemma(source: tuple[str, str], statement: str, where: str, equation: str = "") -> SensitivityLemma:
    return SensitivityLemma(statement, _prov(source, where, equation))


def _assumption(src: tuple[str, str]) -> SensitivityLemma:
    return _lemma(src, "Assumption (1): S(A, t) = sup ||x_{t+1} - x'_{t+1}|| <= lambda_A / t",
                  "eq. (1)", "S(A,t) <= lambda_A / t")


def _lemma1(src: tuple[str, str], c: str) -> SensitivityLemma:
    where = "Lemma 1 (App. A.1)" if src == COLT else "Lemma 1"
    return _lemma(src, "Lemma 1: each noisy output x~_{t+1} is (sqrt(eps)/T^{0.5+c}, delta/T)-DP "
                  f"when ||x_{{t+1}} - x'_{{t+1}}|| <= lambda_A/t ({c})", where)


def tree_lemmas(src: tuple[str, str], theorem: str) -> tuple[SensitivityLemma, ...]:
    """The two sensitivity lemmas of JKT12's PrivateSum tree (Algorithm 5) a theorem rests on.

    Lemma 6 (one replaced ``w_t`` moves every node sum by at most ``R`` in l2) and the privacy
    proof's "B(D) and B(D') differ in at most log T nodes" (Theorem 11 COLT / 9 arXiv).

    Parameters
    ----------
    src
        The paper version's ``(file, label)`` source (``COLT`` or ``ARXIV``).
    theorem
        The theorem whose proof uses the tree (e.g. ``"Theorem 11"``), as the provenance prints it.

    Returns
    -------
    tuple of SensitivityLemma
        Lemma 6, then the node-count lemma.
    """
    return (
        _lemma(src, "Lemma 6: ||B_s(D) - B_s(D')||_2 <= R for every node s (w_t replaced, "
               "||w_t|| <= R)", "Lemma 6 (proof)", "||Delta||_2 <= R"),
        _lemma(src, f"{theorem} proof: B(D) and B(D') differ in at most log T nodes",
               f"{theorem} (privacy proof)", "at most log T nodes"),
    )


def _regime_note(colt: bool, eps_max: str = "1000") -> str:
    """Where the proof of Theorem 1 works (the audit reports the verdict there separately)."""
    if colt:
        return (" The theorem states no bound on eps, so the audit covers eps up to "
                f"{eps_max}; the " "proof's step 2 eps/T^{2c} <= 2 eps (App. A.2) needs c >= 0, i.e. "
                "eps <= (1/2) ln(2/delta), and the audit also reports the verdict restricted to "
                "that regime.")
    return (" Lemma 1 assumes c > 0; the printed c is positive iff delta < 2 e^-2 (about 0.271), "
            "whatever eps. The theorems do not repeat the assumption; every audited point has "
            "delta <= 0.01, hence c > 0 (inside the proof's regime).")


def _build() -> dict[str, PrivacyClaim]:
    claims: list[PrivacyClaim] = []
    eps, dl = REPRESENTATIVE["epsilon"], REPRESENTATIVE["delta"]
    ocp_range = {"epsilon": "(0, inf)", "delta": "(0, 1/2) (claimed 2 delta < 1)", "T": ">= 2",
                 "d": ">= 1", "lambda_A": "(0, inf)", "C": "any closed convex set"}
    for src, tag, c in ((COLT, "colt", _C_COLT), (ARXIV, "arxiv", _C_ARXIV)):
        colt = tag == "colt"
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/pocp", epsilon=3 * eps, delta=2 * dl,
            formula="(3 eps, 2 delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 1 (POCP Privacy)", f"{_POCP_BETA}, {c}",
                             "App. A.2 (proof; Alg. 1 not printed in the body)" if colt
                             else "Sec. 3.1, Algorithm 1 line 7"),
            calibration=f"{_POCP_BETA}; {c}",
            parameter_range=ocp_range,
            lemmas=(_assumption(src), _lemma1(src, c)),
            notes=("Claim: for any OCP algorithm A satisfying assumption (1), Algorithm 1 is "
                   "(3 eps, 2 delta)-DP for the whole released sequence x^_1..x^_T. "
                   + ("COLT prints Theorem 1, Lemma 1 and Algorithm 1 only through their proofs "
                      "(App. A.1-A.3) and Algorithms 2, 3; the calibration is taken from there."
                      if colt else "arXiv's c omits the eps of COLT's c.")
                   + _regime_note(colt))))
        lem4 = "2L/(alpha t)" if colt else "2L/t"
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/pigd", epsilon=3 * eps, delta=2 * dl,
            formula="(3 eps, 2 delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 7 (PIGD Privacy)" if colt else "Theorem 3 (PIGD Privacy)",
                             ("beta = 2 L T^{0.5+c}/alpha sqrt((2/eps)(ln(T/delta) + "
                              "sqrt(eps)/T^{0.5+c}))" if colt else
                              "beta = 2 L T^{0.5+c} sqrt((2/eps)(ln(T/delta) + sqrt(eps)/T^{0.5+c}))")
                             + f", {c}",
                             "App. B, Algorithm 2 line 8" if colt else "Sec. 3.3, Algorithm 2 line 8"),
            calibration=("beta = 2 L T^{0.5+c}/alpha sqrt(...)" if colt
                         else "beta = 2 L T^{0.5+c} sqrt(...)") + f"; {c}; eta_t = 1/(alpha t)",
            parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1/2)", "T": ">= 2", "d": ">= 1",
                             "L": "(0, inf)", "alpha": "(0, inf)",
                             "f_t": "alpha-strongly convex, L-Lipschitz on C (any such loss)"},
            lemmas=(_lemma(src, f"Lemma 4: IGD L2-sensitivity <= {lem4} for the t-th output "
                           "(read as ||x_{t+1} - x'_{t+1}|| <= " + lem4 + ", Definition 3)",
                           "Lemma 4 (IGD Sensitivity)", lem4),
                    _lemma1(src, c)),
            notes=("x_1 and x^_1 'chosen randomly from C': a fixed point is an admissible choice "
                   "(the arXiv audit also runs one empirical test with uniform points)."
                   + _regime_note(colt, "2000"))))
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/pgiga", epsilon=3 * eps, delta=2 * dl,
            formula="(3 eps, 2 delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 9 (PGIGA Privacy)" if colt else "Theorem 5 (PGIGA Privacy)",
                             ("beta = 2 G T^{0.5+c}/alpha sqrt(...)" if colt
                              else "beta = 2 G T^{0.5+c} sqrt(...)") + f", {c}",
                             "App. C, Algorithm 3 line 8" if colt else "Sec. 3.4, Algorithm 3 line 8"),
            calibration=("beta = 2 G T^{0.5+c}/alpha sqrt(...)" if colt
                         else "beta = 2 G T^{0.5+c} sqrt(...)")
            + f"; {c}; eta_t = 2/(alpha t); t_q = 2 L_G^2/alpha^2",
            parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1/2)", "T": ">= 2", "d": ">= 1",
                             "G": "(0, inf)", "alpha": "(0, inf)", "L_G": "[alpha, inf)",
                             "f_t": "differentiable, alpha-strongly convex, L_G-smooth, "
                                    "||grad f_t|| <= G on C"},
            lemmas=(_lemma(src, "Lemma 5: GIGA L2-sensitivity <= 2G/(alpha t) "
                           "(||x_{t+1} - x'_{t+1}|| <= 2G/(alpha t))", "Lemma 5 (GIGA Sensitivity)",
                           "2G/(alpha t)"),
                    _lemma1(src, c)),
            notes=("t_q read as ceil(2 L_G^2/alpha^2); x_1..x_{t_q} random (Lemma 5's base case)."
                   + ("" if colt else " arXiv's beta lacks the 1/alpha of its own Lemma 5.")
                   + _regime_note(colt))))
        sigma = _SIGMA_COLT if colt else _SIGMA_ARXIV
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/pqftl", epsilon=eps, delta=dl,
            formula="(eps, delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 3 (PQFTL Privacy)" if colt else "Theorem 7 (PQFTL Privacy)",
                             f"PrivateSum(v_t v_t^T, ..., R^2, eps/2, delta/2, T), "
                             f"PrivateSum(y_t v_t, ..., R, eps/2, delta/2, T); {sigma}",
                             "App. D.1, Algorithm 4" if colt else "Sec. 3.5, Algorithm 4"),
            calibration=f"two PrivateSum trees at (eps/2, delta/2) with bounds R^2 and R; {sigma}",
            parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1)", "T": ">= 2", "d": ">= 1",
                             "R": "(0, inf): |y_t|, ||v_t|| <= R", "alpha": "(0, inf)"},
            lemmas=(_lemma(src, "Algorithm 4 line 8 with Lemma 6: replacing f_t moves every node of "
                           "the u-tree by at most R, the bound passed to PrivateSum for y_t v_t",
                           "Algorithm 4 line 8", "bound R"),
                    _lemma(src, "Algorithm 4 line 7 with Lemma 6: replacing f_t moves every node of "
                           "the V-tree by at most R^2 (Frobenius), the bound passed for v_t v_t^T",
                           "Algorithm 4 line 7", "bound R^2"))
            + tree_lemmas(src, "Theorem 11" if colt else "Theorem 9"),
            notes=("R is a public, enforced bound (line 2 defines it from the data). The release is "
                   "x^_1..x^_T, a post-processing of the noisy sums (V^_t, u^_t).")))
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/privatesum", epsilon=eps, delta=dl,
            formula="(eps, delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 11 (Algorithm 5: Privacy)" if colt
                             else "Theorem 9 (Algorithm 5: Privacy)", sigma,
                             "App. D.2, Algorithm 5 line 3" if colt
                             else "Sec. 3.5.1, Algorithm 5 line 3"),
            calibration=f"{sigma}; node noise N(0, sigma^2 I) on every node",
            parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1)", "T": ">= 2", "d": ">= 1",
                             "R": "(0, inf): ||w_t|| <= R"},
            lemmas=tree_lemmas(src, "Theorem 11" if colt else "Theorem 9"),
            notes=("Released: W^_1..W^_T. Reading choice: the theorem states 'for all t, W^_t is "
                   "(eps, delta)-DP' (each output on its own); the claim is audited for the whole "
                   "sequence W^_1..W^_T, since the proof shows the whole noisy tree is private and "
                   "PQFTL (Algorithm 4) needs the sequence; the per-step value (the worst single "
                   "output) is reported next to it. 'log' read as log2 T for the tree depth and "
                   "ln inside log(log T/delta) (log_reading='tree'); 'natural' reads every log "
                   "as ln.")))
        claims.append(PrivacyClaim(
            id=f"jkt12-{tag}/pol", epsilon=eps, delta=dl,
            formula="(eps_p, delta)", citation=CITATION[src],
            provenance=_prov(src, "Theorem 5 (POL Privacy)" if colt else "Theorem 10 (POL Privacy)",
                             _POL_BETA, "Sec. 5, Algorithm 6 line 13" if colt
                             else "Sec. 4.2, Algorithm 6 line 13"),
            calibration=_POL_BETA,
            parameter_range={"epsilon_p": "(0, inf)", "delta": "(0, 1)", "T": ">= 2", "d": ">= 1",
                             "L": "(0, inf): l(.; z) L-Lipschitz on C", "epsilon_g": "(0, inf)",
                             "||x*||": "(0, inf)"},
            release=Release.FINAL,
            lemmas=(_lemma(src, "||x~ - x~'||_2 <= 2 L' ln T / T, L' = L + alpha ||x*||",
                           "eq. (37)" if colt else "eq. (35)", "2 L' ln T / T"),),
            notes="Released: the single point x^ (Release.FINAL)."))
    claims.append(PrivacyClaim(
        id="jkt12-colt/pocp-doubling", epsilon=3 * eps * math.log2(REPRESENTATIVE["T"]),
        formula="(3 eps log2 T, delta log2 T + 2 / T^(2 eps))", citation=CITATION[COLT],
        delta=(dl * math.log2(REPRESENTATIVE["T"])
               + 2.0 / REPRESENTATIVE["T"] ** (2 * eps)),
        provenance=_prov(COLT, "Theorem 13", _DOUBLING_BETA, "Sec. 6.2, App. F, Algorithm 7 line 7"),
        calibration=_DOUBLING_BETA,
        parameter_range={"epsilon": "(0, inf)", "delta": "(0, 1)", "T": ">= 2 (unknown to the "
                         "algorithm)", "d": ">= 1", "lambda_A": "(0, inf)"},
        lemmas=(_assumption(COLT),
                _lemma(COLT, "App. F: step t is (sqrt(eps/2^k), delta/2^k)-DP, k = floor(log2 t)",
                       "App. F", "beta_t as printed")),
        notes=("Claim (3 eps log2 T, delta log2 T + 2/T^{2 eps}) for the outputs of T rounds; "
               "representative instance eps = 1, delta = 1e-5, T = 1024. Points where the claimed "
               "delta is >= 1 are vacuous.")))
    return {c.id: c for c in claims}


#: Claim id -> claim (read-only).
JKT12_CLAIMS: Mapping[str, PrivacyClaim] = MappingProxyType(_build())


def get_claim(claim_id: str) -> PrivacyClaim:
    """The JKT12 claim with this id.

    Parameters
    ----------
    claim_id
        A key of :data:`JKT12_CLAIMS` (e.g. ``"jkt12-colt/pigd"``).

    Returns
    -------
    PrivacyClaim
        The claim, its primary readings and ranges declared.

    Raises
    ------
    KeyError
        If the id is unknown; the message lists the known ids.
    """
    try:
        return JKT12_CLAIMS[claim_id]
    except KeyError:
        raise KeyError(f"unknown JKT12 claim id {claim_id!r}; known: {', '.join(CLAIM_IDS)}") from None


def claimed_privacy(claim_id: str, epsilon: float, delta: float, T: int | None = None
                    ) -> tuple[float, float]:
    """The (epsilon', delta') the theorem promises when the algorithm runs with (eps, delta[, T]).

    POCP, PIGD, PGIGA (Theorems 1, 7, 9 COLT / 1, 3, 5 arXiv): (3 eps, 2 delta). PQFTL, PrivateSum,
    POL: (eps, delta). Doubling (COLT Theorem 13): (3 eps log2 T, delta log2 T + 2 / T^{2 eps}),
    which needs T. delta' may be >= 1 (a vacuous claim); callers decide what to do with it.

    Parameters
    ----------
    claim_id
        A key of :data:`JKT12_CLAIMS`.
    epsilon
        The algorithm's input epsilon (> 0).
    delta
        The algorithm's input delta, in [0, 1).
    T
        The horizon (>= 2); needed by the doubling claim only.

    Returns
    -------
    tuple
        ``(epsilon', delta')``.

    Raises
    ------
    KeyError
        If ``claim_id`` is unknown.
    ValueError
        If a parameter is out of its range.
    TypeError
        If ``T`` is missing (``None``) for the doubling claim.
    """
    get_claim(claim_id)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    algo = claim_id.split("/", 1)[1]
    if algo in ("pocp", "pigd", "pgiga"):
        return 3.0 * epsilon, 2.0 * delta
    if algo in ("pqftl", "privatesum", "pol"):
        return epsilon, delta
    T = check_int(T, "T", minimum=2)
    lg = math.log2(T)
    return 3.0 * epsilon * lg, delta * lg + 2.0 * math.exp(-2.0 * epsilon * math.log(T))


# Readings are not parameters: each claim's primary reading of every reading choice,
# as (grid parameter or reading, value, why: the paper line it rests on). The primary reading is
# the paper's literal text; where the text prints nothing, the reading consistent with the paper's
# own definitions. The claim's verdict is the primary reading's; the other readings get their
# own (README, "Readings").
_LOG_PRIMARY = (
    "log_reading", "tree",
    "the base of log is not printed; the paper's own proof fixes it: Theorem 11 (COLT) / 9 (arXiv) "
    "composes over the tree's levels ('B(D) and B(D') can differ in at most log T nodes', i.e. "
    "log T = log2 T, the depth) and Lemma 6 sets 'gamma = 2 sqrt(ln (log T / delta))' (the inner "
    "log is ln)")
_PER_STEP_PRIMARY = (
    "released outputs", "each W^_t on its own",
    "Theorem 11 (COLT) / 9 (arXiv) prints 'forall t in [T], following are true for the output of "
    "Algorithm 5': W^_t is (eps, delta)-DP for every t, each output on its own (the whole "
    "sequence W^_1..W^_T is the audit's second reading)")
_X1_PRIMARY = (
    "x1", "any data-independent law on C (point mass at 0 audited)",
    "Algorithm 2 line 3 'Choose x_1 and x^_1 randomly from C' prints no law; the proof's base case "
    "'As x_1 is chosen randomly, it's value doesn't depend on the underlying dataset' needs only "
    "independence from the data, so every data-independent law (the point mass included) is "
    "covered")
_X1_PGIGA_PRIMARY = (
    "x1", "any data-independent law on C (point mass at 0 audited)",
    "Algorithm 3 line 3 'Choose x_1, ..., x_{t_q-1} and x^_1, ..., x^_{t_q-1} randomly from C' "
    "prints no law; the base case 'their value doesn't depend on the underlying dataset' needs "
    "only independence from the data")
_EPS_RANGE_PRIMARY = (
    "epsilon range", "as stated: every eps > 0",
    "Theorems 1/7/9 (COLT) state the guarantee for every eps with no bound; the proof's step "
    "2 eps / T^{2c} <= 2 eps (App. A.2) needs c >= 0, i.e. eps <= (1/2) ln(2/delta), which is the "
    "second reading (verdict 'restricted to c >= 0')")

PRIMARY_READINGS: dict[str, tuple[tuple[str, object, str], ...]] = {
    "jkt12-colt/privatesum": (_LOG_PRIMARY, _PER_STEP_PRIMARY),
    "jkt12-arxiv/privatesum": (_LOG_PRIMARY, _PER_STEP_PRIMARY),
    "jkt12-colt/pqftl": (_LOG_PRIMARY,),
    "jkt12-arxiv/pqftl": (_LOG_PRIMARY,),
    "jkt12-colt/pigd": (_X1_PRIMARY, _EPS_RANGE_PRIMARY),
    "jkt12-arxiv/pigd": (_X1_PRIMARY,),
    "jkt12-colt/pgiga": (_X1_PGIGA_PRIMARY, _EPS_RANGE_PRIMARY),
    "jkt12-arxiv/pgiga": (_X1_PGIGA_PRIMARY,),
    "jkt12-colt/pocp": (_EPS_RANGE_PRIMARY,),
}


def _with_readings(claim: PrivacyClaim) -> PrivacyClaim:
    """``claim`` with its primary readings declared (the verdict rests on them). Readings that are not grid
    parameters (the released outputs, x_1's law, the eps range) hold at every point and are
    declared for the record; the swept one (``log_reading``) splits the verdicts."""
    readings = PRIMARY_READINGS.get(claim.id, ())
    return replace(claim, readings=tuple(ReadingChoice(parameter, value, why)
                                         for parameter, value, why in readings))


JKT12_CLAIMS = MappingProxyType({cid: replace(_with_readings(c), ranges=JKT12_RANGES[cid])
                                  for cid, c in JKT12_CLAIMS.items()})
