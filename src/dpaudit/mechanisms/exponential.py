"""The exponential mechanism over a finite set of candidates, sampled exactly by Gumbel-max.

Given scores ``s(x)`` for candidates ``x in [k]`` (losses: lower is better), the mechanism outputs
``x`` with probability proportional to ``exp(-c eta s(x))`` (McSherry & Talwar, FOCS 2007; Dwork &
Roth 2014, Definition 3.4 and Theorem 3.10), in the half form (``c = 1/2``, AFKT23 Algorithm 1
line 14) or the full form (``c = 1``, AFKT23 Algorithm 5). With score sensitivity ``Delta`` it is
``(2 c eta Delta)``-DP, and ``c eta Delta`` when the scores are monotone in the neighbour relation
(Dwork & Roth 2014, remark after Theorem 3.10), which sums of losses are not under replacement.
Sampling is ``argmax_x (-c eta s(x) + G_x)`` with i.i.d. standard Gumbel ``G_x`` (Gumbel 1954;
Yellott 1977): exact, and it never exponentiates, so it cannot overflow. In doubles it is the
softmax only up to rounding, hence not exactly DP (Mironov 2012).

Both forms, the privacy argument and the sampling: docs/paper-readings.md#exponential-mechanism.
"""

from __future__ import annotations

from typing import Any, Literal

import dp_accounting
import numpy as np
from scipy import special

from dpaudit._validation import check_epsilon, check_finite_array, check_generator, check_int, check_positive
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

__all__ = ["ExponentialForm", "ExponentialMechanism"]

ExponentialForm = Literal["half", "full"]

# Exponent coefficient c in P(x) ∝ exp(-c eta s(x)) for each printed form.
_COEFFICIENT = {"half": 0.5, "full": 1.0}

# Largest number of Gumbel variates drawn at once (bounds memory to ~8 MB per chunk).
_CHUNK_ELEMENTS = 1 << 20


class ExponentialMechanism(Mechanism):
    """Exponential mechanism ``P(x) ∝ exp(-c eta s(x))`` over ``k`` candidates.

    Parameters
    ----------
    sensitivity : float
        Score sensitivity ``Delta``: the largest change ``|s(x) - s'(x)|`` of any candidate's score
        between neighbours under ``relation``, > 0.
    eta : float
        The printed parameter ``eta`` > 0.
    form : {"half", "full"}, optional
        ``"half"``: weights ``exp(-eta s / 2)``; ``"full"``: weights ``exp(-eta s)``.
    monotone : bool, optional
        Assert that scores are monotone in the neighbour relation
        (docs/paper-readings.md#exponential-mechanism); halves the stated epsilon. The mechanism
        cannot check this assertion; the audit can.
    maximize : bool, optional
        Scores are utilities (higher is better): weights ``exp(+c eta s)`` instead. Privacy is the
        same.
    relation : NeighbourRelation, optional
        The neighbour relation under which ``sensitivity`` holds (default: replace one element).

    Notes
    -----
    Stated privacy (pure DP): ``epsilon = 2 c eta Delta`` in general and ``c eta Delta`` when
    ``monotone``, with ``c = 1/2`` (half form) or ``1`` (full form). :meth:`dp_event` returns
    ``EpsilonDeltaDpEvent(epsilon, 0)`` (:mod:`dpaudit.mechanisms.events`).
    """

    name = "exponential"

    def __init__(self, sensitivity: float, eta: float, form: ExponentialForm = "half", *,
                 monotone: bool = False, maximize: bool = False,
                 relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE) -> None:
        if form not in _COEFFICIENT:
            raise ValueError(f"form must be 'half' (exp(-eta s / 2)) or 'full' (exp(-eta s)), got {form!r}")
        for flag, flag_name in ((monotone, "monotone"), (maximize, "maximize")):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{flag_name} must be a bool, got {type(flag).__name__}")
        self._sensitivity = Sensitivity(
            check_positive(sensitivity, "sensitivity"), norm="count", relation=relation,
            description="largest change of any candidate's score between neighbours")
        self._eta = check_positive(eta, "eta")
        self._form: ExponentialForm = form
        self._monotone = bool(monotone)
        self._maximize = bool(maximize)

    @classmethod
    def from_epsilon(cls, sensitivity: float, epsilon: float, form: ExponentialForm = "half", *,
                     monotone: bool = False, maximize: bool = False,
                     relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE) -> "ExponentialMechanism":
        """The mechanism whose stated privacy is exactly ``epsilon``.

        ``eta = epsilon / (2 c Delta)`` in general, ``epsilon / (c Delta)`` when ``monotone``.
        """
        sensitivity = check_positive(sensitivity, "sensitivity")
        epsilon = check_epsilon(epsilon)
        if form not in _COEFFICIENT:
            raise ValueError(f"form must be 'half' (exp(-eta s / 2)) or 'full' (exp(-eta s)), got {form!r}")
        factor = _COEFFICIENT[form] * (1.0 if monotone else 2.0)
        return cls(sensitivity, epsilon / (factor * sensitivity), form, monotone=monotone,
                   maximize=maximize, relation=relation)

    @property
    def sensitivity(self) -> Sensitivity:
        return self._sensitivity

    @property
    def eta(self) -> float:
        """The printed parameter ``eta``."""
        return self._eta

    @property
    def form(self) -> ExponentialForm:
        """``"half"`` (weights ``exp(-eta s / 2)``) or ``"full"`` (weights ``exp(-eta s)``)."""
        return self._form

    @property
    def monotone(self) -> bool:
        return self._monotone

    @property
    def maximize(self) -> bool:
        return self._maximize

    @property
    def coefficient(self) -> float:
        """``c eta``: the weight of candidate x is ``exp(-c eta s(x))`` (``+`` when maximising)."""
        return _COEFFICIENT[self._form] * self._eta

    @property
    def epsilon(self) -> float:
        """Stated pure-DP epsilon: ``2 c eta Delta`` (``c eta Delta`` when ``monotone``)."""
        return self.coefficient * self._sensitivity.bound * (1.0 if self._monotone else 2.0)

    def _log_weights(self, scores: Any, ndim: int | tuple[int, ...]) -> np.ndarray:
        s = check_finite_array(scores, "scores", ndim=ndim)
        if s.shape[-1] == 0:
            raise ValueError("scores must have at least one candidate (last axis of length >= 1)")
        sign = 1.0 if self._maximize else -1.0
        with np.errstate(over="ignore"):
            log_w = (sign * self.coefficient) * s
        if not np.all(np.isfinite(log_w)):
            raise ValueError("scores are too large: eta * score overflows a float64")
        return log_w

    def log_probabilities(self, scores: Any) -> np.ndarray:
        """Exact log output probabilities (numerically stable log-softmax).

        Parameters
        ----------
        scores : array_like, shape (k,) or (m, k)
            One score vector, or ``m`` score vectors (one per row).

        Returns
        -------
        numpy.ndarray
            Same shape as ``scores``; each row's exponentials sum to 1.
        """
        return special.log_softmax(self._log_weights(scores, (1, 2)), axis=-1)

    def probabilities(self, scores: Any) -> np.ndarray:
        """Exact output probabilities ``exp(-c eta s(x)) / sum_y exp(-c eta s(y))``.

        Numerically stable softmax (the largest log-weight is subtracted first).

        Parameters
        ----------
        scores : array_like, shape (k,) or (m, k)
            One score vector, or ``m`` score vectors (one per row).

        Returns
        -------
        numpy.ndarray
            Same shape as ``scores``; each row sums to 1.
        """
        return special.softmax(self._log_weights(scores, (1, 2)), axis=-1)

    def sample(self, scores: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """Selected candidate indices of ``n`` independent runs (Gumbel-max).

        Parameters
        ----------
        scores : array_like, shape (k,) or (n, k)
            The score vector (all runs share it) or one score vector per run (the mechanism's
            ``data`` in the :class:`~dpaudit.mechanisms.base.Mechanism` contract).
        n : int
            Number of independent runs, >= 1.
        rng : numpy.random.Generator

        Returns
        -------
        numpy.ndarray
            int64 indices in ``[0, k)``, shape ``(n,)``.
        """
        n = check_int(n, "n", minimum=1)
        rng = check_generator(rng)
        log_w = self._log_weights(scores, (1, 2))
        if log_w.ndim == 2 and log_w.shape[0] != n:
            raise ValueError(f"scores must have shape (k,) or (n, k) = ({n}, k), got {log_w.shape}")
        # Shift each row so that its largest log-weight is 0 (the softmax is unchanged). Adding
        # O(1) Gumbel variates to log-weights of magnitude |c eta s| ~ 1e15 would otherwise round
        # them to a grid of spacing ~0.1 and distort the law.
        log_w = log_w - np.max(log_w, axis=-1, keepdims=True)
        k = log_w.shape[-1]
        out = np.empty(n, dtype=np.int64)
        rows = max(1, _CHUNK_ELEMENTS // k)
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            base = log_w if log_w.ndim == 1 else log_w[start:stop]
            out[start:stop] = np.argmax(base + rng.gumbel(size=(stop - start, k)), axis=1)
        return out

    def dp_event(self) -> dp_accounting.DpEvent:
        return EpsilonDeltaDpEvent(self.epsilon, 0.0)

    def describe(self) -> dict[str, Any]:
        weights = "exp(-eta*s/2)" if self._form == "half" else "exp(-eta*s)"
        if self._maximize:
            weights = weights.replace("-", "+")
        return {**super().describe(), "eta": self._eta, "form": self._form, "weights": weights,
                "monotone": self._monotone, "epsilon": self.epsilon}

    def __repr__(self) -> str:
        return (f"ExponentialMechanism(sensitivity={self._sensitivity.bound!r}, eta={self._eta!r}, "
                f"form={self._form!r}, monotone={self._monotone!r}, maximize={self._maximize!r})")
