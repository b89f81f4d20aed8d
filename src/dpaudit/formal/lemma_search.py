"""Property-based checks of a sensitivity lemma over any inputs: a Hypothesis search for the
neighbouring inputs that push a quantity furthest above its claimed bound.

:func:`dpaudit.formal.sensitivity.check_sensitivity` checks lemmas about dpaudit's learners over
its loss classes; this module checks a lemma about *any* function: the user states the inputs
(a Hypothesis strategy of neighbouring pairs ``(data0, data1)``), the quantity
(``quantity(data0, data1) -> float``, e.g. the l2 distance between two noise-free releases) and
the claimed bound. The search maximises ``quantity / bound`` (``hypothesis.target``), fails on
the first pair above the bound, and shrinks it; the result is a
:class:`~dpaudit.evidence.LemmaCheck` whose counterexample is the shrunk pair with the
observed and claimed values (AUDIT-METHOD section 2, evidence 2). A search can refute a lemma,
never prove it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from dpaudit._validation import check_int, check_nonnegative
from dpaudit.evidence import LemmaCheck
from dpaudit.hypothesis_seeding import independent_of_loaded_modules

__all__ = ["LemmaSearchResult", "LemmaViolation", "search_lemma"]

#: Float slack of the verdict: a pair violates the lemma when
#: ``quantity > bound * (1 + _RTOL) + _ATOL``; the defaults of
#: :func:`dpaudit.formal.sensitivity.check_sensitivity`, so both searches decide alike.
_RTOL, _ATOL = 1e-9, 1e-12


def _describe(x: Any, limit: int = 400) -> Any:
    """A JSON-friendly, bounded description of one input."""
    try:
        import numpy as np

        if isinstance(x, np.ndarray):
            x = x.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)) and len(x) <= 64 and all(
            isinstance(v, (int, float, str, bool)) or v is None for v in x):
        return list(x)
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class LemmaSearchResult:
    """What :func:`search_lemma` found.

    ``holds``: no pair above the bound among ``examples`` tried; ``worst_ratio``: the largest
    ``quantity / bound`` seen; ``counterexample``: the shrunk failing pair with its values (None
    when it holds); ``worst``: the pair with the largest ratio.
    """

    statement: str
    holds: bool
    worst_ratio: float
    examples: int
    counterexample: dict[str, Any] | None
    worst: dict[str, Any] | None

    def to_lemma_check(self) -> LemmaCheck:
        return LemmaCheck(self.statement, "holds" if self.holds else "violated",
                          worst_ratio=self.worst_ratio, examples=self.examples,
                          counterexample=self.counterexample, method="sampled")

    def message(self) -> str:
        """One paragraph for an assertion message or a report."""
        if self.holds:
            return (f"lemma '{self.statement}' held on {self.examples} generated pairs "
                    f"(largest quantity/bound ratio {self.worst_ratio:.4g}); a search can refute "
                    "a lemma, never prove it")
        c = self.counterexample or {}
        return (f"lemma '{self.statement}' is violated: on the shrunk pair data0={c.get('data0')!r},"
                f" data1={c.get('data1')!r} the quantity is {c.get('observed'):.6g} > claimed "
                f"bound {c.get('claimed'):.6g} (ratio {c.get('ratio'):.4g}; {self.examples} pairs "
                "tried)")


class LemmaViolation(Exception):
    """Raised inside a Hypothesis lemma search when an example exceeds the claimed bound.

    Every lemma search (this module's, :mod:`dpaudit.formal.sensitivity`'s and the papers') raises
    it so that Hypothesis shrinks the failing example and re-raises it; ``example`` is the record
    the search reports as the counterexample (``None`` where the search keeps its own).
    """

    def __init__(self, example: Any = None) -> None:
        super().__init__("the claimed bound is exceeded")
        self.example = example


def search_lemma(statement: str, pairs: Any, quantity: Callable[[Any, Any], float],
                 bound: float, *, examples: int = 200, seed: int = 0,
                 seeds: Sequence[tuple[Any, Any]] = ()) -> LemmaSearchResult:
    """Search ``pairs`` for neighbouring inputs with ``quantity(data0, data1) > bound``.

    Parameters
    ----------
    statement
        The lemma in words, as reports print it.
    pairs
        A Hypothesis strategy of neighbouring pairs ``(data0, data1)``.
    quantity
        ``quantity(data0, data1) -> float``: what the lemma bounds (finite, >= 0).
    bound
        The claimed bound (finite, >= 0).
    examples
        Hypothesis ``max_examples``.
    seed
        Seed of the search: the result is a deterministic function of it and the program.
    seeds
        Pairs evaluated first (e.g. the input class's extreme pairs), before any generated one.

    Returns
    -------
    LemmaSearchResult
        ``holds`` unless some pair has ``quantity > bound * (1 + 1e-9) + 1e-12`` (float slack);
        then the shrunk counterexample.

    Raises
    ------
    ValueError
        If ``statement`` is empty, ``bound`` or ``examples``/``seed`` is out of range, or
        ``quantity`` returns a negative or non-finite value.
    TypeError
        If ``pairs`` is not a Hypothesis strategy of pairs, ``quantity`` is not callable or does
        not return a number.
    """
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings, target
    from hypothesis.strategies import SearchStrategy

    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("statement must be a non-empty string saying what the lemma claims")
    if not isinstance(pairs, SearchStrategy):
        raise TypeError("pairs must be a Hypothesis strategy of (data0, data1) pairs, got "
                        f"{type(pairs).__name__}")
    if not callable(quantity):
        raise TypeError(f"quantity must be callable as quantity(data0, data1), got "
                        f"{type(quantity).__name__}")
    bound = check_nonnegative(bound, "bound")
    examples = check_int(examples, "examples", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    limit = bound * (1 + _RTOL) + _ATOL
    tried = [0]
    worst: dict[str, Any] = {"ratio": -math.inf}
    failing: list[dict[str, Any]] = []

    def evaluate(d0: Any, d1: Any) -> dict[str, Any]:
        value = quantity(d0, d1)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"quantity must return a number, got {type(value).__name__}") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"quantity returned {value} on data0={_describe(d0)!r}, "
                             f"data1={_describe(d1)!r}; it must be finite and >= 0")
        ratio = value / bound if bound > 0 else (math.inf if value > 0 else 0.0)
        rec = {"data0": _describe(d0), "data1": _describe(d1), "observed": value,
               "claimed": bound, "ratio": ratio}
        tried[0] += 1
        if ratio > worst["ratio"]:
            worst.clear()
            worst.update(rec)
        return rec

    for d0, d1 in seeds:
        rec = evaluate(d0, d1)
        if rec["observed"] > limit:
            failing.append(rec)
            break
    if not failing:
        # Not the papers' shared profile (formal.sensitivity.LEMMA_SEARCH_SETTINGS): this search
        # runs a user's strategy, possibly inside the user's own @given test or pytest fixture, so
        # every health check is suppressed (nested_given, function_scoped_fixture, ... included),
        # not only the profile's four; switching would turn such calls into errors.
        @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                  phases=[Phase.generate, Phase.target, Phase.shrink],
                  suppress_health_check=list(HealthCheck))
        @hseed(seed)
        @given(pairs)
        def run(pair: Any) -> None:
            try:
                d0, d1 = pair
            except (TypeError, ValueError):
                raise TypeError("pairs must generate (data0, data1) pairs") from None
            rec = evaluate(d0, d1)
            target(min(rec["ratio"], 1e12), label="quantity / claimed bound")
            if rec["observed"] > limit:
                failing[:] = [rec]  # the last failing example Hypothesis reports is the shrunk one
                raise LemmaViolation

        with independent_of_loaded_modules():
            try:
                run()
            except LemmaViolation:
                pass
    ratio = float(worst.get("ratio", 0.0)) if tried[0] else 0.0
    return LemmaSearchResult(statement, not failing, ratio if math.isfinite(ratio) else math.inf,
                             tried[0], failing[0] if failing else None,
                             dict(worst) if tried[0] else None)
