"""Private Online Convex Programming (POCP, Algorithm 1) and its instances PIGD and PGIGA.

Jain, Kothari & Thakurta, *Differentially Private Online Learning*, implemented literally in two
versions (``version``): ``"colt"``, the COLT 2012 proceedings (calibration of App. A.1-A.3 and of
Algorithms 2 and 3, line 8), and ``"arxiv"`` (Algorithm 1 line 7, Algorithms 2 and 3 line 8). POCP
perturbs the output of a non-private OCP algorithm and releases the projection
``x^_{t+1} = Pi_C(x_{t+1} + b_{t+1})``, ``b_{t+1} ~ N(0, beta^2 / t^2 I_d)``, keeping the
uncorrupted ``x_{t+1}`` for the next step. The versions differ in the exponent ``c`` of ``beta``
and in the sensitivity constant ``lambda_A`` of PIGD (Alg. 2, Lemma 4) and PGIGA (Alg. 3,
Lemma 5). The printed ``c`` is read as the logarithm of the product (the value solving
``delta = 2 exp(-2 eps T^{2c})``, App. A.2), applied as printed even when negative;
``T >= 2`` is required.

Both versions' formulas and the reading: docs/paper-readings.md#jkt12-pocp.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_generator, check_int,
                                 check_positive)
from dpaudit.mechanisms.private_sum import Version, check_version
from dpaudit.learners.base import OnlineLearner, RoundCounting, StoredPointRelease
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.giga import GIGA, gradient_lipschitz
from dpaudit.learners.igd import IGD
from dpaudit.learners.losses import Loss
from dpaudit.learners.starting_points import StartingPoint, check_starting_point, starting_points
from dpaudit.mechanisms.gaussian import sample_gaussian

__all__ = ["Version", "check_version", "pocp_c", "pocp_beta", "pigd_lambda", "pigd_beta",
           "pgiga_lambda", "pgiga_beta", "check_base_and_domain", "POCP", "PIGD", "PGIGA"]


def _check_T(T: object) -> int:
    T = check_int(T, "T", minimum=1)
    if T < 2:
        raise ValueError("T must be an integer in [2, inf): the printed c = ... / (2 ln T) is "
                         "undefined at T = 1")
    return T


def pocp_c(version: Version, T: int, epsilon: float, delta: float) -> float:
    """The exponent c of the POCP noise, as printed in ``version``.

    COLT 2012 (App. A.2 and A.3; Alg. 2 and 3 line 8):
    ``c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T)``.
    arXiv (Alg. 1 line 7; proof of Theorem 1): ``c = ln((1/2) ln(2/delta)) / (2 ln T)``.

    Parameters
    ----------
    version : {"colt", "arxiv"}
    T : int
        Horizon, >= 2.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    """
    version = check_version(version)
    T = _check_T(T)
    epsilon = check_epsilon(epsilon)
    delta = _check_open_delta(delta)
    inner = math.log(2.0 / delta) / (2.0 * epsilon if version == "colt" else 2.0)
    return math.log(inner) / (2.0 * math.log(T))


def _check_open_delta(delta: object) -> float:
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    return delta


def pocp_beta(version: Version, T: int, lam: float, epsilon: float, delta: float) -> float:
    """The POCP noise parameter beta (noise at step t: N(0, beta^2/t^2 I)).

    ``beta = lambda T^{0.5+c} sqrt((2/eps)(ln(T/delta) + sqrt(eps)/T^{0.5+c}))`` with c from
    :func:`pocp_c` (arXiv Alg. 1 line 7; COLT App. A.3, the same form with the COLT c).

    Parameters
    ----------
    version : {"colt", "arxiv"}
    T : int
        >= 2.
    lam : float
        The sensitivity constant lambda_A of assumption (1), > 0.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    """
    lam = check_positive(lam, "lam")
    c = pocp_c(version, T, epsilon, delta)
    power = T ** (0.5 + c)
    return lam * power * math.sqrt((2.0 / epsilon)
                                   * (math.log(T / delta) + math.sqrt(epsilon) / power))


def _printed_lambda(version: Version, bound: float, bound_name: str, alpha: float) -> float:
    """``2 bound / alpha`` (COLT) or ``2 bound`` (arXiv): the lambda of PIGD and PGIGA's noise."""
    version = check_version(version)
    bound = check_positive(bound, bound_name)
    alpha = check_positive(alpha, "alpha")
    return 2.0 * bound / alpha if version == "colt" else 2.0 * bound


def pigd_lambda(version: Version, L: float, alpha: float) -> float:
    """lambda of PIGD's printed noise: COLT ``2L/alpha`` (Lemma 4); arXiv ``2L`` (Lemma 4, Alg 2)."""
    return _printed_lambda(version, L, "L", alpha)


def pigd_beta(version: Version, T: int, L: float, alpha: float, epsilon: float,
              delta: float) -> float:
    """PIGD's beta, Algorithm 2 line 8 of ``version``.

    COLT: ``beta = 2 L T^{0.5+c} / alpha * sqrt((2/eps)(ln(T/delta) + sqrt(eps)/T^{0.5+c}))``;
    arXiv: ``beta = 2 L T^{0.5+c} * sqrt(...)`` (no 1/alpha); c from :func:`pocp_c`.
    """
    return pocp_beta(version, T, pigd_lambda(version, L, alpha), epsilon, delta)


def pgiga_lambda(version: Version, G: float, alpha: float) -> float:
    """lambda of PGIGA's printed noise: COLT ``2G/alpha``; arXiv ``2G`` (Alg. 3 line 8)."""
    return _printed_lambda(version, G, "G", alpha)


def pgiga_beta(version: Version, T: int, G: float, alpha: float, epsilon: float,
               delta: float) -> float:
    """PGIGA's beta, Algorithm 3 line 8 of ``version``.

    COLT: ``beta = 2 G T^{0.5+c} / alpha * sqrt(...)``; arXiv: ``beta = 2 G T^{0.5+c} * sqrt(...)``.
    """
    return pocp_beta(version, T, pgiga_lambda(version, G, alpha), epsilon, delta)


class OutputPerturbation(StoredPointRelease):
    """State shared by the output-perturbation learners (Algorithm 1 here, Algorithm 7 in
    :mod:`dpaudit.learners.pocp_doubling`): the non-private ``base`` learner A, the released
    x^_t (``_point``), the noise generator and the round counter.

    Subclasses set ``base``, ``domain`` and ``x1_hat`` in ``__init__``; :meth:`reset` restarts A
    and draws the first released point x^_1 (independently of the data).
    """

    base: OnlineLearner
    domain: Domain | None
    x1_hat: StartingPoint

    @property
    def dim(self) -> int:
        return self.base.dim

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        self._rng = check_generator(rng)
        self.base.reset(n_runs, self._rng)
        self._point = starting_points(self.x1_hat, self.domain, n_runs, self.dim, self._rng)
        self._t = 1


class POCP(OutputPerturbation, RoundCounting):
    """Algorithm 1: a non-private OCP learner plus Gaussian output perturbation and projection.

    Parameters
    ----------
    base : OnlineLearner
        The non-private OCP algorithm A (its state is never released).
    domain : Ball, Box or None
        C, onto which the noisy point is projected (Algorithm 1 line 8); ``None`` is C = R^d
        (no projection, as for QFTL in Section 4), which needs a fixed ``x1_hat``.
    T : int
        Horizon, >= 2 (the noise depends on T).
    epsilon, delta : float
        Privacy parameters (eps > 0, delta in (0, 1)); the claim is (3 eps, 2 delta).
    lam : float
        lambda_A, the sensitivity constant of assumption (1), > 0.
    version : {"colt", "arxiv"}
        Which printed calibration (see :func:`pocp_c`).
    x1_hat : ``"uniform"`` or array_like, shape (d,)
        The first released point x^_1 ("choose x^_1 randomly from C", independent of the data).

    Notes
    -----
    ``predict()`` returns the released x^_t, shape ``(n_runs, d)``. ``learn(f_t)`` for
    t = 1..T-1 runs A on f_t and releases x^_{t+1}; ``learn(f_T)`` is accepted and ignored (the
    loop of Algorithm 1 ends at T-1), so that ``run`` takes the whole stream of T losses.
    """

    name = "POCP"
    private = True

    def __init__(self, base: OnlineLearner, domain: Domain | None, T: int, epsilon: float,
                 delta: float, lam: float, version: Version = "colt", x1_hat: StartingPoint = "uniform") -> None:
        check_base_and_domain(base, domain)
        self.base = base
        self.domain = domain
        self.T = _check_T(T)
        self.epsilon = check_epsilon(epsilon)
        self.delta = _check_open_delta(delta)
        self.lam = check_positive(lam, "lam")
        self.version = check_version(version)
        self.x1_hat = check_starting_point(x1_hat, domain, base.dim)
        self.beta = pocp_beta(self.version, self.T, self.lam, self.epsilon, self.delta)
        self._point: np.ndarray | None = None
        self._rng: np.random.Generator | None = None
        self._t = 0

    def project(self, x: np.ndarray) -> np.ndarray:
        """Pi_C (the identity when C = R^d)."""
        return x if self.domain is None else self.domain.project(x)

    def noise_std(self, t: int) -> float:
        """Standard deviation beta / t of each coordinate of b_{t+1} (added to x_{t+1})."""
        t = check_int(t, "t", minimum=1)
        return self.beta / t

    def releases_noise(self, t: int) -> bool:
        """Whether step t perturbs A's output (True for every t = 1..T-1 in Algorithm 1)."""
        return 1 <= t <= self.T - 1

    def check_loss(self, loss: Loss) -> None:
        """Reject losses outside the declared class (no constants are declared by Algorithm 1)."""
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != learner dimension {self.dim}")

    def learn(self, loss: Loss) -> None:
        if self._point is None or self._rng is None:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        t = self._t
        if t > self.T:
            raise RuntimeError(f"the learner was built for T={self.T} rounds; round {t} is "
                               "beyond it")
        self.check_loss(loss)
        if t <= self.T - 1:
            self.base.learn(loss)
            x_next = self.base.predict()
            if self.releases_noise(t):
                noisy = x_next + sample_gaussian(self.noise_std(t), x_next.shape, self._rng)
                self._point = self.project(noisy)
            else:
                self._point = starting_points(self.x1_hat, self.domain, x_next.shape[0], self.dim,
                                             self._rng)
        self._t += 1


def check_base_and_domain(base: OnlineLearner, domain: Domain | None) -> None:
    """Require an OnlineLearner base and a Ball, Box or None domain of the same dimension."""
    if not isinstance(base, OnlineLearner):
        raise TypeError(f"base must be an OnlineLearner, got {type(base).__name__}")
    if domain is not None:
        if not isinstance(domain, (Ball, Box)):
            raise TypeError(f"domain must be a Ball, a Box or None, got {type(domain).__name__}")
        if base.dim != domain.dim:
            raise ValueError(f"base dimension {base.dim} != domain dimension {domain.dim}")


def _check_declared(loss: Loss, domain: Domain, lipschitz: float, alpha: float, what: str) -> None:
    if loss.dim != domain.dim:
        raise ValueError(f"loss dimension {loss.dim} != learner dimension {domain.dim}")
    lip = loss.lipschitz(domain)
    if lip > lipschitz * (1 + 1e-9):
        raise ValueError(f"loss is outside the declared class: its Lipschitz constant {lip:.6g} "
                         f"over the domain exceeds the declared {what}={lipschitz:.6g}")
    if loss.strong_convexity < alpha * (1 - 1e-9):
        raise ValueError(f"loss is outside the declared class: strong convexity "
                         f"{loss.strong_convexity:.6g} below the declared alpha={alpha:.6g}")


class PIGD(POCP):
    """Private Implicit Gradient Descent, Algorithm 2 (COLT App. B / arXiv Sec. 3.3).

    POCP around :class:`~dpaudit.learners.igd.IGD` (eta_t = 1/(alpha t)) with the printed beta of
    :func:`pigd_beta`. L and alpha are public, enforced constants: a loss whose Lipschitz constant
    over C exceeds L, or whose strong convexity is below alpha, is rejected.

    Parameters
    ----------
    domain : Ball or Box
    T : int
        >= 2.
    L : float
        Declared Lipschitz constant of every f_t over C, > 0.
    alpha : float
        Declared strong-convexity modulus, > 0.
    epsilon, delta : float
        The claim is (3 eps, 2 delta)-DP (Theorem 7 COLT / Theorem 3 arXiv).
    version : {"colt", "arxiv"}
    x1 : ``"uniform"`` or array_like, shape (d,)
        x_1 and x^_1: independent uniform points of C, or both equal to a fixed point.
    """

    name = "PIGD"

    def __init__(self, domain: Domain, T: int, L: float, alpha: float, epsilon: float,
                 delta: float, version: Version = "colt", x1: StartingPoint = "uniform") -> None:
        self.L = check_positive(L, "L")
        self.alpha = check_positive(alpha, "alpha")
        super().__init__(IGD(domain, alpha, x1), domain, T, epsilon, delta,
                         pigd_lambda(version, L, alpha), version, x1)

    def check_loss(self, loss: Loss) -> None:
        _check_declared(loss, self.domain, self.L, self.alpha, "L")


class PGIGA(POCP):
    """Private GIGA, Algorithm 3 (COLT App. C / arXiv Sec. 3.4).

    POCP around :class:`~dpaudit.learners.giga.GIGA` (eta_t = 2/(alpha t), random burn-in
    x_1..x_{t_q}, t_q = ceil(2 L_G^2/alpha^2)) with the printed beta of :func:`pgiga_beta`. Noise is
    added for t = t_q..T-1; the released x^_2..x^_{t_q} are random points of C (line 3). G (the
    gradient bound over C), alpha and L_G are public, enforced constants.

    Parameters
    ----------
    domain : Ball or Box
    T : int
        >= 2.
    G : float
        Declared bound on ||grad f_t(x)|| over C, > 0.
    alpha : float
        Declared strong-convexity modulus, > 0.
    smoothness : float
        Declared L_G (Lipschitz constant of the gradients), >= alpha.
    epsilon, delta : float
        The claim is (3 eps, 2 delta)-DP (Theorem 9 COLT / Theorem 5 arXiv).
    version : {"colt", "arxiv"}
    x1 : ``"uniform"`` or array_like, shape (d,)
    """

    name = "PGIGA"

    def __init__(self, domain: Domain, T: int, G: float, alpha: float, smoothness: float,
                 epsilon: float, delta: float, version: Version = "colt",
                 x1: StartingPoint = "uniform") -> None:
        self.G = check_positive(G, "G")
        self.alpha = check_positive(alpha, "alpha")
        self.smoothness = check_positive(smoothness, "smoothness")
        giga = GIGA(domain, alpha, smoothness, x1)
        self.t_q = giga.t_q
        super().__init__(giga, domain, T, epsilon, delta, pgiga_lambda(version, G, alpha),
                         version, x1)

    def releases_noise(self, t: int) -> bool:
        """Noise is added for t = t_q..T-1 (Algorithm 3 line 4)."""
        return self.t_q <= t <= self.T - 1

    def check_loss(self, loss: Loss) -> None:
        _check_declared(loss, self.domain, self.G, self.alpha, "G")
        lg = gradient_lipschitz(loss)
        if lg > self.smoothness * (1 + 1e-9):
            raise ValueError(f"loss is outside the declared class: gradient Lipschitz constant "
                             f"{lg:.6g} exceeds the declared L_G={self.smoothness:.6g}")
