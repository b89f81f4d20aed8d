"""The public claim API: state a privacy claim about your own code and audit it like a bundled one.

A :class:`Claim` says what is claimed, where it is stated, under which neighbouring relation and
over which parameters, and how to run the release; dpaudit turns it into the same declaration the
bundled papers use (:mod:`dpaudit.claims.driver`), so it gets the same three kinds of evidence, the
same verdict rules, reports, CLI, exit codes and pytest helpers. Example (runnable)::

    import numpy as np
    import dpaudit
    from dpaudit import Claim, Source

    def release(params):                    # the batch mechanism at one grid point
        def mechanism(data, n, rng):         # n independent runs, leading axis n
            total = float(np.clip(data, 0.0, 1.0).sum())
            return total + rng.laplace(0.0, 1.0 / params["epsilon"], size=n)
        return mechanism

    claim = Claim(
        id="mine/clipped-sum",
        statement="The clipped sum with Laplace(1/eps) noise is eps-DP under add/remove.",
        source=Source(title="clipped-sum design note", kind="design doc", location="Sec. 2"),
        claimed=lambda p: (p["epsilon"], 0.0),
        neighbours="add-remove",
        grid=[{"epsilon": 0.5}, {"epsilon": 1.0}],
        release=release,
        pairs=lambda p: [([0.0, 1.0], [0.0])],
        accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0 / p["epsilon"], sensitivity=1.0),
        exact=lambda p: dpaudit.exact.ProductLaplace(
            mean=lambda d: [float(np.clip(d, 0, 1).sum())], scale=1.0 / p["epsilon"]),
    )
    result = dpaudit.audit_claim(claim, budget="quick", seed=0)
    assert result.verdict == "holds"

Fields a user cannot leave out: ``id`` (``"<namespace>/<name>"``), ``statement``, ``source``,
``claimed``, ``neighbours`` (named explicitly: ``"replace-one"`` or ``"add-remove"``; there is no
default, because the factor of two between them is the most common calibration bug), ``grid`` and
``release``. Evidence is optional but a verdict of ``holds`` needs an accountant at every point
(an upper bound), and ``violated`` needs an exact value or an empirical bound above the claim.

Labels: values dpaudit computes (``accountant=`` a noise schedule, ``exact=`` a law) are its own
evidence; a number the user computes carries one label wherever it shows (the JSON, the verdict
sentence, the findings and the reports): ``exact_value=`` is the "user-supplied exact epsilon",
``accountant=`` returning a float the "user-supplied accountant epsilon", and ``lower_bound=``
(a rigorous lower bound on the release's epsilon from a published attack or the user's own proof)
the "user-supplied lower bound".
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dpaudit._validation import check_delta, check_epsilon
from dpaudit.claims.context import AuditContext
from dpaudit.claims.declaration import Declaration, EmpiricalPlan, PointPlan
from dpaudit.claims.evidence import (EXACT, EXACT_TOLERANCE, NOT_COMPUTED, USER_ACCOUNTANT_LABEL,
                                     USER_EXACT_LABEL, USER_LOWER_BOUND_LABEL, USER_SUPPLIED,
                                     AccountantSource, EvidenceOrigin, ExactSource,
                                     InvarianceRecord, LemmaCheck, LemmaOutcome, PointEvidence)
from dpaudit.claims.pair_relation import ADD_REMOVE_SHAPE_HINT, neighbour_violation
from dpaudit.claims.registry import check_namespace
from dpaudit.claims.model import (NeighbourRelation, PrivacyClaim, Provenance, Release,
                                  SensitivityLemma)
from dpaudit.formal.noise_schedules import distance_factor

__all__ = ["Source", "Lemma", "Claim", "Params", "UserDeclaration", "declaration_of"]

Params = Mapping[str, Any]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*/[A-Za-z0-9][A-Za-z0-9._+-]*$")
_MAX_ID = 120


@dataclass(frozen=True, kw_only=True)
class Source:
    """Where a claim is stated: a paper, a design document, a library's documentation, a docstring.

    ``title``: the document in words; ``kind``: what it is (free text: ``"paper"``, ``"design
    doc"``, ``"library documentation"``, ``"code"``); ``version``: which version of it (a release,
    a commit, a date); ``location``: where in it (section, theorem, function); ``url``: a link;
    ``quote``: the claim verbatim.
    """

    title: str
    kind: str = "document"
    version: str = ""
    location: str = ""
    url: str = ""
    quote: str = ""

    def __post_init__(self) -> None:
        for name in ("title", "kind", "version", "location", "url", "quote"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"Source.{name} must be a string, got {type(value).__name__}")
        if not self.title.strip():
            raise ValueError("Source.title must say which document states the claim")


@dataclass(frozen=True, kw_only=True)
class Lemma:
    """A sensitivity statement the claim relies on, checked by a property-based search.

    ``statement``: the lemma in words; ``pairs``: a Hypothesis strategy of neighbouring inputs
    ``(data0, data1)``, or ``pairs(params) -> strategy``; ``quantity(data0, data1, params) ->
    float``: what the lemma bounds (e.g. the l2 distance between the two noise-free releases);
    ``bound``: the claimed bound, a number or ``bound(params) -> float``. The search
    (:func:`dpaudit.formal.lemma_search.search_lemma`) maximises ``quantity / bound`` at every grid
    point and reports the shrunk counterexample when the bound fails.
    """

    statement: str
    pairs: Any
    quantity: Callable[[Any, Any, Params], float]
    bound: float | Callable[[Params], float]

    def __post_init__(self) -> None:
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise ValueError("Lemma.statement must be a non-empty string")
        if not callable(self.quantity):
            raise TypeError("Lemma.quantity must be callable as quantity(data0, data1, params)")
        if not (callable(self.bound) or isinstance(self.bound, (int, float))):
            raise TypeError("Lemma.bound must be a number or a callable bound(params)")

    def strategy(self, params: Params) -> Any:
        from hypothesis.strategies import SearchStrategy

        s = self.pairs if isinstance(self.pairs, SearchStrategy) else self.pairs(params)
        if not isinstance(s, SearchStrategy):
            raise TypeError("Lemma.pairs must be a Hypothesis strategy of (data0, data1) pairs or "
                            "a callable returning one")
        return s

    def bound_at(self, params: Params) -> float:
        value = self.bound(params) if callable(self.bound) else self.bound
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"Lemma.bound must be finite and >= 0, got {value} at {dict(params)}")
        return value


def _check_primitives(claim: Any) -> None:
    """``Claim.primitives`` as a tuple of distinct :class:`Primitive` objects, else an error."""
    from dpaudit.greybox.primitives import Primitive

    value = claim.primitives
    if isinstance(value, (str, bytes, Primitive)) or not isinstance(value, Sequence):
        raise TypeError("Claim.primitives must be a list of dpaudit.Primitive objects")
    prims = tuple(value)
    for p in prims:
        if not isinstance(p, Primitive):
            raise TypeError(f"Claim.primitives must hold dpaudit.Primitive objects, got "
                            f"{type(p).__name__}")
    paths = [p.path for p in prims]
    if len(set(paths)) != len(paths):
        raise ValueError(f"Claim.primitives names a path twice: {paths}")
    object.__setattr__(claim, "primitives", prims)


def _check_lower_bound(value: Any, where: str = "") -> float:
    """``Claim.lower_bound``'s value as a float, refused with the field's name unless a finite
    number ``>= 0`` (a lower bound on an epsilon: NaN, infinity or a negative value is a bug in
    the number handed in, never evidence)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"Claim.lower_bound must be a number or a callable lower_bound(params) "
                        f"-> float{where}, got {type(value).__name__} {_describe(value)}")
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"Claim.lower_bound must be a finite number >= 0 (a rigorous lower bound "
                         f"on the release's epsilon){where}, got {x}")
    return x


def _callable(value: Any, name: str, signature: str) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"Claim.{name} must be callable as {signature}, got "
                        f"{type(value).__name__}")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A privacy claim about code that is not in dpaudit (see the module docstring).

    Required: ``id``, ``statement``, ``source``, ``claimed(params) -> (epsilon, delta)``,
    ``neighbours`` (``"replace-one"`` or ``"add-remove"``), ``grid`` (parameter points, each a
    mapping; include the extremes of the range you claim) and ``release(params) -> mechanism``
    where ``mechanism(data, n, rng)`` returns ``n`` independent releases (leading axis ``n``).

    Evidence (each optional):

    * ``pairs(params) -> [(data0, data1), ...]``: explicit neighbouring inputs; the empirical test
      pilots each and audits the most promising one; exact values are computed on every one.
    * ``pair_search(params) -> strategy``: a Hypothesis strategy of pairs searched by the engine;
      with ``pairs`` too, the explicit pairs seed the search (piloted first).
    * ``accountant(params) -> schedule``: a noise schedule of :mod:`dpaudit.noise` (dpaudit's
      accountant, evaluated under ``neighbours``), or a float (user-supplied).
    * ``exact(params) -> law``: the release's law (:mod:`dpaudit.exact`: ``LinearGaussian``,
      ``ProductLaplace``, ``DiscreteLaw``); dpaudit computes the exact epsilon of each pair. The
      law is a hypothesis: it is tested against runs of the release (one test of the claim's
      Bonferroni family), and a rejected law certifies nothing. For a release drawing Gaussian or
      Laplace noise from the ``rng`` dpaudit passes, leave it out: dpaudit derives the law from
      the code by replay (:mod:`dpaudit.greybox`), and that law decides whenever it exists.
    * ``exact_value(params, data0, data1) -> float``: an exact epsilon the user computed
      (labelled "user-supplied exact epsilon").
    * ``lower_bound``: a rigorous lower bound on the release's epsilon at the claimed delta that
      the user obtained elsewhere (a published attack, the user's own proof): a number, or
      ``lower_bound(params) -> float`` per grid point; finite and ``>= 0`` (``ValueError``
      naming the field otherwise). Labelled "user-supplied lower bound" everywhere it shows. It
      decides like a certified lower bound: above the claim the claim is ``violated`` and the
      verdict says it rests on a user-supplied number; above the accountant the accountant
      certifies nothing. It never makes a claim hold.
    * ``lemmas``: :class:`Lemma` statements checked at every grid point.
    * ``primitives``: :class:`~dpaudit.greybox.primitives.Primitive` objects naming the library
      functions that add the noise where no draw source sees it (compiled samplers, a library's
      own mechanism class); dpaudit records what reaches them on each declared pair, checks
      invariance and the declared sensitivity against the values' actual distance, and accounts
      the release from their laws (labelled "trusted primitives";
      :mod:`dpaudit.claims.primitive_check`).
    * ``statistic``: a row-wise score for the empirical test (default: learned by the engine).
    * ``samples``: runs per input of the empirical test (default: the budget's).
    * ``neighbour_check``: ``True`` (default) checks every declared or generated pair against
      ``neighbours`` where the data's shape says it (:mod:`dpaudit.claims.pair_relation`: lists,
      tuples and arrays are sequences of records); ``False`` trusts them (custom data types,
      zero-out neighbours), and the findings say so.

    Description: ``parameter_range`` (name -> range in words), ``calibration`` (the noise as
    stated), ``notes``, ``formula`` (the claimed privacy in words, e.g. ``"(eps, 1e-5)"``),
    ``kind`` (``"mechanism"`` or ``"learner"``).
    """

    id: str
    statement: str
    source: Source
    claimed: Callable[[Params], tuple[float, float]]
    neighbours: str
    grid: Sequence[Params]
    release: Callable[[Params], Callable[[Any, int, np.random.Generator], Any]]
    pairs: Callable[[Params], Sequence[tuple[Any, Any]]] | None = None
    pair_search: Callable[[Params], Any] | None = None
    accountant: Callable[[Params], Any] | None = None
    exact: Callable[[Params], Any] | None = None
    exact_value: Callable[[Params, Any, Any], float] | None = None
    lower_bound: float | Callable[[Params], float] | None = None
    lemmas: Sequence[Lemma] = ()
    statistic: Callable[[np.ndarray], np.ndarray] | None = None
    samples: int | None = None
    parameter_range: Mapping[str, str] = field(default_factory=dict)
    calibration: str = ""
    notes: str = ""
    formula: str = ""
    kind: str = "mechanism"
    neighbour_check: bool = True
    primitives: Sequence[Any] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or len(self.id) > _MAX_ID or not _ID.match(self.id) \
                or any(p in (".", "..") for p in self.id.split("/")):
            raise ValueError(f"Claim.id must be '<namespace>/<name>' (letters, digits, '.', '_', "
                             f"'+', '-'; at most {_MAX_ID} characters), got {self.id!r}")
        check_namespace(self.id)  # "papers/x" would overwrite the papers' pages in reports
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise ValueError("Claim.statement must say what is claimed, in words")
        if not isinstance(self.source, Source):
            raise TypeError(f"Claim.source must be a dpaudit.Source, got "
                            f"{type(self.source).__name__}")
        distance_factor(self.neighbours)  # ValueError naming the allowed relations
        _callable(self.claimed, "claimed", "claimed(params) -> (epsilon, delta)")
        _callable(self.release, "release", "release(params) -> mechanism(data, n, rng)")
        for name, sig in (("pairs", "pairs(params) -> [(data0, data1), ...]"),
                          ("pair_search", "pair_search(params) -> Hypothesis strategy"),
                          ("accountant", "accountant(params) -> noise schedule or float"),
                          ("exact", "exact(params) -> law"),
                          ("exact_value", "exact_value(params, data0, data1) -> float"),
                          ("statistic", "statistic(outputs) -> scores")):
            _callable(getattr(self, name), name, sig)
        if self.lower_bound is not None and not callable(self.lower_bound):
            object.__setattr__(self, "lower_bound", _check_lower_bound(self.lower_bound))
        if isinstance(self.grid, (str, bytes)) or not isinstance(self.grid, Sequence):
            raise TypeError("Claim.grid must be a sequence of parameter mappings")
        for i, p in enumerate(self.grid):
            if not isinstance(p, Mapping):
                raise TypeError(f"Claim.grid[{i}] must be a mapping of parameter names to values "
                                f"(e.g. {{'epsilon': 1.0}}), got {type(p).__name__} {p!r}")
        grid = tuple(dict(p) for p in self.grid)
        if not grid:
            raise ValueError("Claim.grid must contain at least one parameter point")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "lemmas", tuple(self.lemmas))
        for lem in self.lemmas:
            if not isinstance(lem, Lemma):
                raise TypeError(f"Claim.lemmas must hold dpaudit.Lemma objects, got "
                                f"{type(lem).__name__}")
        if self.exact is not None and self.exact_value is not None:
            raise ValueError("give Claim.exact (dpaudit computes) or Claim.exact_value "
                             "(user-supplied), not both")
        if self.kind not in ("mechanism", "learner"):
            raise ValueError(f"Claim.kind must be 'mechanism' or 'learner', got {self.kind!r}")
        if self.samples is not None and (not isinstance(self.samples, int) or self.samples < 10):
            raise ValueError(f"Claim.samples must be an integer >= 10, got {self.samples!r}")
        _check_primitives(self)
        if not isinstance(self.neighbour_check, bool):
            raise TypeError(f"Claim.neighbour_check must be True or False, got "
                            f"{self.neighbour_check!r}")

    def lower_bound_at(self, params: Params) -> float | None:
        """The user-supplied lower bound on the release's epsilon at ``params`` (``None``: not
        given), validated: a finite number ``>= 0``."""
        if self.lower_bound is None:
            return None
        if not callable(self.lower_bound):
            return float(self.lower_bound)
        return _check_lower_bound(self.lower_bound(params), f" at {dict(params)}")

    def claimed_at(self, params: Params) -> tuple[float, float]:
        """The claim instantiated at ``params``, validated."""
        value = self.claimed(params)
        try:
            eps, delta = value
        except (TypeError, ValueError):
            raise TypeError(f"Claim.claimed must return (epsilon, delta), got {value!r}") from None
        try:
            return check_epsilon(eps), check_delta(delta)
        except ValueError as exc:
            raise ValueError(f"Claim.claimed at {dict(params)}: {exc}") from None

    def privacy_claim(self) -> PrivacyClaim:
        """The claim as the engine's immutable record (what reports and JSON carry)."""
        eps, delta = self.claimed_at(self.grid[0])
        src = self.source
        provenance = Provenance(paper=src.title, version=src.version, theorem=src.location,
                                equation=src.quote, location=src.url, kind=src.kind)
        citation = src.title + (f", {src.version}" if src.version else "")
        return PrivacyClaim(
            id=self.id, epsilon=eps, delta=delta, provenance=provenance,
            calibration=self.calibration, parameter_range=dict(self.parameter_range),
            neighbour=NeighbourRelation(self.neighbours), release=Release.FULL_SEQUENCE,
            lemmas=tuple(SensitivityLemma(lem.statement, provenance) for lem in self.lemmas),
            notes=self.notes, formula=self.formula or "", citation=citation,
            statement=self.statement)


def _describe(x: Any, limit: int = 120) -> str:
    text = repr(x.tolist() if isinstance(x, np.ndarray) else x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class UserDeclaration(Declaration):
    """The driver's declaration of a user :class:`Claim` (``grid``, ``plan``, ``lemmas``)."""

    user: Claim
    claim: PrivacyClaim

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        return [dict(p) for p in self.user.grid]

    def _pairs(self, params: Params) -> list[tuple[Any, Any]]:
        if self.user.pairs is None:
            return []
        given = self.user.pairs(params)
        if given is None or isinstance(given, (str, bytes)) or not hasattr(given, "__iter__"):
            raise TypeError(f"Claim.pairs must return a list of (data0, data1) pairs; at "
                            f"{dict(params)} it returned {type(given).__name__}")
        pairs = list(given)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"Claim.pairs must return (data0, data1) pairs; item {i} at "
                                f"{dict(params)} is {type(pair).__name__}")
            self._check_neighbours(pair, params, f"Claim.pairs item {i}")
        return [tuple(p) for p in pairs]  # type: ignore[misc]

    def _check_neighbours(self, pair: Any, params: Params, what: str) -> Any:
        """``pair`` unchanged; ValueError naming it when it is not a pair of neighbours under
        the declared relation (:mod:`dpaudit.claims.pair_relation`)."""
        if self.user.neighbour_check:
            why = neighbour_violation(pair[0], pair[1], self.user.neighbours)
            if why is not None:
                raise ValueError(
                    f"{what} at {dict(params)} is not a pair of {self.user.neighbours} neighbours "
                    f"(data0={_describe(pair[0])}, data1={_describe(pair[1])}): {why}. Fix the "
                    "pair, or declare the other relation; if your data type's neighbours are not "
                    "read from its length and records (e.g. zero-out neighbours), pass "
                    "Claim(..., neighbour_check=False)")
        return pair

    def _search(self, params: Params) -> Any:
        """The declared pair strategy, each generated pair checked like a declared one."""
        strategy = self.user.pair_search(params)  # type: ignore[misc]
        if not self.user.neighbour_check or not hasattr(strategy, "map"):
            return strategy

        def checked(pair: Any) -> Any:
            if isinstance(pair, (tuple, list)) and len(pair) == 2:
                self._check_neighbours(pair, params, "a pair generated by Claim.pair_search")
            return pair
        return strategy.map(checked)

    def _law(self, params: Params) -> Any:
        if self.user.exact is None:
            return None
        law = self.user.exact(params)
        if not hasattr(law, "epsilon"):
            raise TypeError("Claim.exact must return a law with .epsilon(data0, data1, "
                            "delta) (dpaudit.exact.LinearGaussian, ProductLaplace or "
                            "DiscreteLaw)")
        return law

    def _exact(self, params: Params, pairs: list[tuple[Any, Any]], delta: float,
               mechanism: Any, ctx: AuditContext) -> Any:
        """The point's exact evidence: derived from the code by replay when it can
        be, else the declared law (tested against runs by the driver) or the user's number."""
        from dpaudit.greybox.point_evidence import exact_evidence

        u = self.user
        return exact_evidence(
            mechanism, pairs, delta=delta, law=self._law(params),
            seed=ctx.seed_for(self.claim.id, "replay", _fmt(params)), progress=ctx.progress,
            user_value=(None if u.exact_value is None
                        else lambda d0, d1: self._user_exact(params, d0, d1)))

    def _user_exact(self, params: Params, d0: Any, d1: Any) -> float:
        """The user's exact epsilon of one pair, refused with the field's name unless a number."""
        raw = self.user.exact_value(params, d0, d1)  # type: ignore[misc]
        if isinstance(raw, bool) or not isinstance(raw, (int, float, np.integer, np.floating)):
            raise TypeError(f"Claim.exact_value must return a number >= 0 (the exact epsilon of "
                            f"the pair); at {dict(params)} it returned {type(raw).__name__} "
                            f"{_describe(raw)}")
        return float(raw)

    def accountant_at(self, params: Params, delta: float) -> tuple[float | None, str, str]:
        """The accountant epsilon at ``params`` and ``delta`` with its source and description:
        dpaudit's, of the schedule ``Claim.accountant`` returns (evaluated under the claim's
        relation), or the user's number; ``(None, "", "")`` without an accountant."""
        if self.user.accountant is None:
            return None, "", ""
        sched = self.user.accountant(params)
        if isinstance(sched, (int, float)) and not isinstance(sched, bool):
            value = float(sched)
            if math.isnan(value) or value < 0:
                raise ValueError(f"Claim.accountant returned {value}; it must be >= 0")
            return value, EvidenceOrigin.USER_SUPPLIED, "supplied by the user"
        if not hasattr(sched, "epsilon"):
            raise TypeError("Claim.accountant must return a noise schedule of dpaudit.noise "
                            "(GaussianNoise, LaplaceNoise, gaussian_tree, ...) or a float, got "
                            f"{type(sched).__name__}")
        value = float(sched.epsilon(delta, neighbours=self.user.neighbours))
        text = sched.describe(neighbours=self.user.neighbours) if hasattr(sched, "describe") \
            else repr(sched)
        return value, EvidenceOrigin.DPAUDIT, text

    def plan(self, params: Params, ctx: AuditContext) -> PointPlan:
        u = self.user
        eps, delta = u.claimed_at(params)
        pairs = self._pairs(params)
        mechanism = u.release(params)
        if not callable(mechanism):
            raise TypeError(f"Claim.release must return a mechanism(data, n, rng); at "
                            f"{dict(params)} it returned {type(mechanism).__name__}")
        code = self._exact(params, pairs, delta, mechanism, ctx)
        exact = code.exact
        acc, acc_source, acc_text = self.accountant_at(params, delta)
        evidence = PointEvidence(neighbours=u.neighbours)
        if exact is not None:
            evidence = evidence.with_(exact_source=ExactSource(
                EvidenceOrigin(exact.source),
                f"data0={_describe(exact.pair[0])}, data1={_describe(exact.pair[1])}",
                exact.method))
        evidence = evidence.merged(code.evidence)  # the grey box's record of the point
        if code.findings:
            evidence = evidence.with_(code_findings=list(code.findings))
        if u.primitives:  # the named primitives' record, accountant and checks' evidence
            from dpaudit.claims.primitive_check import point_primitives

            (acc, acc_source, acc_text), evidence = point_primitives(
                u.primitives, mechanism, pairs, (acc, acc_source, acc_text), evidence,
                neighbours=u.neighbours, delta=delta,
                seed=ctx.seed_for(self.claim.id, "primitives", _fmt(params)))
        if acc is not None:
            evidence = evidence.with_(
                accountant_source=AccountantSource(EvidenceOrigin(acc_source), acc_text))
        user_lower = u.lower_bound_at(params)
        if user_lower is not None:
            evidence = evidence.with_(user_lower_bound=f"{USER_LOWER_BOUND_LABEL} "
                                                       f"(Claim.lower_bound), {NOT_COMPUTED}")
        law_test = self._law_test(params, pairs, mechanism, ctx)
        verification = self._verification(code, mechanism, eps, delta, ctx)
        invariance = self._invariance(pairs, mechanism, ctx, params)
        if invariance:
            evidence = evidence.with_(invariance=invariance)
        if code.guarded:
            evidence = evidence.with_(rng_guard=code.guarded)
        elif pairs and acc is not None and (exact is None
                                            or exact.source != EvidenceOrigin.DERIVED):
            from dpaudit.greybox.noise_transforms import noise_transforms

            seen = noise_transforms(mechanism, pairs[0][0],
                                    seed=ctx.seed_for(self.claim.id, "replay", _fmt(params)))
            if seen:
                evidence = evidence.with_(noise_transforms=seen)
        empirical = None
        shape_reveals = code.chosen_law is not None and code.chosen_law.shapes_differ
        if shape_reveals:
            # The black box compares runs of one shape; here the shape itself is the evidence
            # (the exact value, infinite, verified on runs of each input).
            skipped = ("the output's shape depends on the data (it reveals which input ran); "
                       "the exact value derived from the code decides")
            if getattr(self.claim.neighbour, "value", None) == "add-remove":
                skipped += "; " + ADD_REMOVE_SHAPE_HINT
            evidence = evidence.with_(empirical_skipped=skipped)
        if (pairs or u.pair_search is not None) and not shape_reveals:
            # Both given: the explicit pairs seed the search (piloted before generated ones).
            both = bool(pairs) and u.pair_search is not None
            pair_arg: Any = self._search(params) if u.pair_search is not None else pairs
            empirical = EmpiricalPlan(
                mechanism=mechanism, pairs=pair_arg, statistic=u.statistic,
                statistic_name=("the user's statistic" if u.statistic is not None
                                else "the engine's learned statistic"),
                what=(f"{len(pairs)} declared pair(s) seeding a pilot search of the declared "
                      "strategy" if both else
                      f"{len(pairs)} declared pair(s), one chosen on a pilot" if pairs
                      else "pairs from the declared strategy, chosen by a pilot search"),
                samples=u.samples, pair_seeds=pairs if both else None, state_pair=True)
        recommend = None
        if (code.chosen_law is not None and exact is not None
                and exact.source == EvidenceOrigin.DERIVED and math.isfinite(exact.value)
                and exact.value > eps):
            from dpaudit.claims.recalibration import DerivedLawRecommendation

            recommend = DerivedLawRecommendation(code.chosen_law, exact.value, eps, delta)
        return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=delta,
                         recommendation=recommend,
                         exact=None if exact is None else exact.value,
                         exact_kind=EXACT if exact is None else exact.kind,
                         exact_upper=None if exact is None else exact.upper,
                         accountant=acc, empirical=empirical, evidence=evidence,
                         law_test=law_test, law_verification=verification,
                         user_lower_bound=user_lower)

    def _invariance(self, pairs: list[tuple[Any, Any]], mechanism: Any, ctx: AuditContext,
                    params: Params) -> InvarianceRecord | None:
        """The invariance check on every declared pair (:mod:`dpaudit.greybox.invariance`):
        the record of the first pair with a finding, else of all pairs checked; None without
        pairs."""
        if not pairs:
            return None
        from dpaudit.greybox.invariance import check_invariance

        seed = ctx.seed_for(self.claim.id, "replay", _fmt(params))
        results = [check_invariance(mechanism, d0, d1, seed=seed) for d0, d1 in pairs]
        bad = next((k for k, r in enumerate(results) if r.findings), None)
        if bad is None:
            return InvarianceRecord(invariant=True, pairs=len(pairs),
                                    calls=max(r.calls for r in results),
                                    sources=sorted({s for r in results for s in r.sources}),
                                    failures=[r.failure for r in results if r.failure])
        return InvarianceRecord.of(results[bad].to_dict()).with_(pairs=len(pairs), pair=bad)

    def _verification(self, code: Any, mechanism: Any, eps: float, delta: float,
                      ctx: AuditContext) -> Any:
        """The check of the derived law the point's exact value rests on against runs of the
        code (one test of the claim's family, run by the driver), or None."""
        pair_law = code.chosen_law
        if pair_law is None or code.exact is None:
            return None
        from dpaudit.greybox.verification import (MAX_CALLS, MAX_CONFIRM_SCALARS,
                                                  runs_to_confirm, verification_runs,
                                                  verify_pair)

        samples = self.user.samples if self.user.samples is not None else ctx.budget.samples
        pair = code.exact.pair

        labels = ("data0 of the exact pair", "data1 of the exact pair")
        scale = max(1.0, samples / 20_000)

        def verify(alpha: float, seed: int) -> Any:
            runs = verification_runs(eps, delta, alpha, floor=samples, ceiling=10 * samples)
            v = verify_pair(mechanism, pair_law, pair, runs=runs, seed=seed, alpha=alpha,
                            labels=labels)
            robust = v.robust_epsilon(delta)
            if v.rejected or robust is None or robust > eps:
                return v
            # A violation read from the law that its residual does not yet survive: verify as
            # many runs as the decision needs (fresh seed), within the confirmation cap.
            need = runs_to_confirm(pair_law, eps, delta, alpha)
            if need is None or need <= v.runs:
                return v
            if need * pair_law.law0.A.shape[1] > MAX_CONFIRM_SCALARS * scale:
                return replace(v, confirm_runs=need)  # out of this budget's reach: say so
            return verify_pair(mechanism, pair_law, pair, runs=need, seed=seed + 1,
                               alpha=alpha, labels=labels,
                               max_scalars=int(MAX_CONFIRM_SCALARS * scale),
                               max_calls=int(MAX_CALLS * scale))
        return verify

    def _law_test(self, params: Params, pairs: list[tuple[Any, Any]], mechanism: Any,
                  ctx: AuditContext) -> Any:
        """The declared law tested against runs of the release on every declared input (one
        test of the claim's Bonferroni family, run by the driver), or None."""
        law = self._law(params) if pairs else None
        if law is None:
            return None
        from dpaudit.greybox.law_tests import check_declared_law

        inputs = [x for pair in pairs for x in pair]
        index_pairs = [(2 * k, 2 * k + 1) for k in range(len(pairs))]
        runs = self.user.samples if self.user.samples is not None else ctx.budget.samples

        def law_test(alpha: float, seed: int) -> Any:
            return check_declared_law(law, mechanism, inputs, alpha=alpha, runs=runs, seed=seed,
                                      pairs=index_pairs,
                                      labels=[f"data{i % 2} of declared pair {i // 2 + 1}"
                                              for i in range(len(inputs))])
        return law_test

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Params]) -> LemmaOutcome:
        from dpaudit.formal.lemma_search import search_lemma

        checks: list[LemmaCheck] = []
        points = [dict(p) for p in parameters] or [dict(self.user.grid[0])]
        per_point = max(20, ctx.budget.sensitivity_examples // max(1, len(points)))
        findings: list[str] = []
        for j, lem in enumerate(self.user.lemmas):
            worst = None
            failed = None
            examples = 0
            for params in points:
                res = search_lemma(lem.statement, lem.strategy(params),
                                   lambda d0, d1, p=params: lem.quantity(d0, d1, p),
                                   lem.bound_at(params), examples=per_point,
                                   seed=ctx.seed_for(self.claim.id, "lemma", j, str(params)))
                examples += res.examples
                if worst is None or res.worst_ratio > worst[0]:
                    worst = (res.worst_ratio, params)
                if not res.holds:
                    failed = (res, params)
                    break
            assert worst is not None
            if failed is not None:
                res, params = failed
                cex = dict(res.counterexample or {}, parameters=params)
                checks.append(LemmaCheck(lem.statement, "violated", worst_ratio=res.worst_ratio,
                                         examples=examples, counterexample=cex))
                findings.append(f"Lemma '{lem.statement}' fails at ({_fmt(params)}): "
                                + res.message().split(": ", 1)[-1] + ".")
            else:
                checks.append(LemmaCheck(lem.statement, "holds", worst_ratio=worst[0],
                                         examples=examples))
        from dpaudit.claims.noise_site_check import noise_site_check  # checks each noise site; needs no declared lemma

        site_checks, site_findings = noise_site_check(self.user, ctx, self.claim.id, points,
                                                      per_point)
        checks += site_checks
        findings += site_findings
        return LemmaOutcome(checks=tuple(checks), findings=tuple(findings))

    def findings(self, run: Any) -> list[str]:
        out = []
        user_exact = [p for p in run.points if p.exact_kind == USER_SUPPLIED]
        if user_exact:
            out.append(f"The {USER_EXACT_LABEL} at {len(user_exact)} point(s) "
                       f"(Claim.exact_value) is {NOT_COMPUTED}.")
        user_lower = [p for p in run.points if p.epsilon_user_lower_bound is not None]
        if user_lower:
            refuting = sum(p.epsilon_user_lower_bound > p.claimed_epsilon * (1 + EXACT_TOLERANCE)
                           for p in user_lower)
            out.append(f"The {USER_LOWER_BOUND_LABEL} at {len(user_lower)} point(s) "
                       f"(Claim.lower_bound) is {NOT_COMPUTED}; it is above the claim at "
                       f"{refuting} of them" + (" (a violation resting on a user-supplied number)."
                                                if refuting else "."))
        out.extend(_origin_sentence(run.plans))
        for pl in run.plans:  # a declared number the law derived from the code contradicts
            out.extend(f"At ({_fmt(pl.parameters)}): {f}" for f in pl.evidence.code_findings or ())
        ignored = [t for t in run.tested if getattr(t.result, "rng_ignored", False)]
        if ignored:
            note = ignored[0].result.rng.get("note", "")
            out.append(f"The release ignores the rng dpaudit gives it at {len(ignored)} tested "
                       f"point(s) ({note.split(': ', 1)[-1].split(';')[0]}): its empirical "
                       "bounds are not reproducible from the seed.")
        if not self.user.neighbour_check and (self.user.pairs or self.user.pair_search):
            out.append("The pairs were not checked against the declared neighbouring relation "
                       "(Claim.neighbour_check=False): they are trusted as neighbours as declared.")
        user_acc = [pl for pl in run.plans if _accountant_origin(pl) is EvidenceOrigin.USER_SUPPLIED]
        if user_acc:
            out.append(f"The {USER_ACCOUNTANT_LABEL} at {len(user_acc)} point(s) "
                       f"(Claim.accountant returned a number) is {NOT_COMPUTED}.")
        return out


def _exact_origin(plan: PointPlan) -> EvidenceOrigin | None:
    return plan.evidence.exact_origin


def _accountant_origin(plan: PointPlan) -> EvidenceOrigin | None:
    return plan.evidence.accountant_origin


def _origin_sentence(plans: Sequence[PointPlan]) -> list[str]:
    """Which evidence was drawn from the code and which was declared, in one sentence
    (per point: ``PointEvidence.origins``)."""
    if not plans:
        return []
    derived = sum(_exact_origin(pl) is EvidenceOrigin.DERIVED for pl in plans)
    tested = sum(pl.evidence.declared_law is not None for pl in plans)
    reasons = [pl.evidence.derivation.reason for pl in plans if pl.evidence.derivation is not None]
    reason = next((r for r in reasons if r), None)
    parts = [f"Evidence drawn from the code: the empirical runs at every tested point"
             + (f", the exact epsilon at {derived} of {len(plans)} point(s) (law derived by "
                "replaying the rng)" if derived else "")
             + (f", the declared law's test at {tested} point(s)" if tested else "")]
    trusted = sum(_accountant_origin(pl) is EvidenceOrigin.TRUSTED_PRIMITIVES for pl in plans)
    declared = ["the accountant's noise schedule"] if any(
        pl.accountant is not None and _accountant_origin(pl) is not EvidenceOrigin.TRUSTED_PRIMITIVES
        for pl in plans) else []
    if any(_exact_origin(pl) in (EvidenceOrigin.DECLARED, EvidenceOrigin.USER_SUPPLIED)
           for pl in plans):
        declared.append("the exact epsilon" + (" at the other points" if derived else ""))
    if declared:
        parts.append("declared: " + " and ".join(declared))
    if trusted:
        parts.append(f"trusted: the accountant at {trusted} of {len(plans)} point(s), accounted "
                     "from the named primitives' laws, not read from their code")
    text = "; ".join(parts) + "."
    if reason and not derived:
        text += f" No law is derived from the code: {reason}."
    return [text]


def _fmt(params: Params) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def declaration_of(claim: Claim) -> UserDeclaration:
    """The claim driver's declaration of ``claim`` (what :func:`dpaudit.register_claim` registers)."""
    if not isinstance(claim, Claim):
        raise TypeError(f"expected a dpaudit.Claim, got {type(claim).__name__}")
    return UserDeclaration(claim, claim.privacy_claim())


def defining_module(depth: int = 2) -> str | None:
    """The module that called the public API (for the origin of a registration)."""
    frame = inspect.currentframe()
    for _ in range(depth + 1):
        if frame is None:
            return None
        frame = frame.f_back
    return None if frame is None else frame.f_globals.get("__name__")
