"""pytest plugin for users' own CI: assert that a mechanism is not caught violating its DP claim.

Installed with dpaudit (entry point ``pytest11``). It provides :func:`assert_dp`, which runs
:func:`dpaudit.audit` and raises ``AssertionError`` with a readable message when the empirical
lower bound exceeds the claim (``sequential=True``: the anytime-valid gate
:func:`dpaudit.blackbox.sequential_gate.sequential_gate`); the fixture ``dp_auditor``
(:class:`DPAuditor`), seeded from the test's id; the marker ``dp_slow``; and the options
``--dp-seed``, ``--dp-samples`` and ``--dp-sequential``. The assertions (:func:`assert_dp`,
:func:`assert_claim`, :func:`assert_sensitivity`) need no pytest::

    from dpaudit.testing import assert_dp

    def test_my_laplace_is_1_dp():
        def mechanism(data, n, rng):        # n independent runs -> array with leading axis n
            return sum(data) + rng.laplace(0.0, 1.0, size=n)
        assert_dp(mechanism, [0, 0, 1], [0, 0, 0], epsilon=1.0, samples=200_000)

Seeds are deterministic, so a CI failure reproduces locally; a passing test is not a proof of
privacy. In full: docs/cli.md#auditing-your-own-mechanism-in-ci-pytest-plugin.
"""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING, Any, Callable, Mapping

from dpaudit.evidence import NOT_COMPUTED, USER_EXACT_LABEL, USER_LOWER_BOUND_LABEL, USER_SUPPLIED

try:  # only the plugin's hooks and its fixture need pytest: the assertions import without it
    import pytest
except ImportError:  # e.g. a notebook or a CI script without pytest
    pytest = None  # type: ignore[assignment]

if TYPE_CHECKING:  # the engine is imported lazily: this module loads in every pytest run
    from dpaudit.blackbox.result import AuditResult
    from dpaudit.blackbox.sequential import SequentialResult

__all__ = ["assert_dp", "assert_claim", "assert_sensitivity", "DPAuditor", "dp_auditor",
           "derive_seed", "violation_message", "DEFAULT_SAMPLES", "DEFAULT_SEED"]

#: Samples per input when a call does not say (the fixture's default can be changed with
#: ``--dp-samples``).
DEFAULT_SAMPLES = 100_000
#: Seed of :func:`assert_dp`, and base seed of the fixture, when none is given.
DEFAULT_SEED = 0


def _fmt(x: Any, digits: int = 4) -> str:
    if isinstance(x, str):
        return x
    if x is None:
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def _call_text(epsilon: float, delta: float, samples: int, alpha: float, seed: int,
               extra: Mapping[str, Any], sequential: bool = False) -> str:
    budget = f"sequential=True, max_samples={samples!r}" if sequential else f"samples={samples!r}"
    args = [f"epsilon={epsilon!r}", f"delta={delta!r}", budget, f"alpha={alpha!r}",
            f"seed={seed!r}"]
    args += [f"{k}={v!r}" if isinstance(v, (int, float, str, bool, type(None))) else f"{k}=..."
             for k, v in extra.items()]
    return "assert_dp(mechanism, data0, data1, " + ", ".join(args) + ")"


def violation_message(result: "AuditResult | SequentialResult", reproduce: str) -> str:
    """The failure message for a violated claim: bound, claim, event, counts, reproduction (for a
    :class:`~dpaudit.blackbox.sequential.SequentialResult`: stopping time, log-wealth, the winning
    bettor's event, reproduction)."""
    if hasattr(result, "stopped_at"):
        return _gate_message(result, reproduce)
    d = result.to_dict()
    claim = d.get("claim", {})
    eps, delta = claim.get("epsilon"), claim.get("delta")
    conf = d.get("confidence", {})
    level = conf.get("level", 1 - result.alpha)
    lines = [
        f"({_fmt(eps)}, {_fmt(delta)})-DP claim violated: empirical epsilon lower bound "
        f"{_fmt(d.get('epsilon_lower_bound'))} > claimed epsilon {_fmt(eps)} "
        f"(one-sided {100 * level:.4g}% confidence, {conf.get('interval_method', 'Clopper-Pearson')}"
        f" intervals, Bonferroni factor {conf.get('bonferroni_factor', 1)}).",
    ]
    event = d.get("event") or {}
    ev = event.get("event") or {}
    if ev:
        lines.append(f"  event:     {ev.get('description') or ev}")
    test = event.get("test") or {}
    if test:
        lines.append(f"  counts:    {test.get('count0')} / {test.get('nobs0')} runs on data0, "
                     f"{test.get('count1')} / {test.get('nobs1')} runs on data1 (fresh test split; "
                     "the event was chosen on a separate training split)")
    p, q = event.get("p_interval") or {}, event.get("q_interval") or {}
    if p and q:
        num = ev.get("numerator", 0)
        lines.append(f"  bound:     P[event | data{num}] >= {_fmt(p.get('lower'))}, "
                     f"P[event | data{1 - num}] <= {_fmt(q.get('upper'))}; "
                     f"ln((p_lo - delta) / q_hi) = {_fmt(event.get('log_ratio_lower_bound'))}")
    samples = d.get("samples") or {}
    stat = d.get("statistic") or {}
    stat_name = stat.get("description") or stat.get("name") or d.get("output_kind", "")
    lines.append(f"  samples:   {samples.get('per_input', result.samples)} per input (training "
                 f"{_sum(samples.get('fit'), samples.get('select'))}, test {samples.get('test')}), "
                 f"seed {d.get('seed')}, statistic: {stat_name}")
    if getattr(result, "chosen_pair", ""):
        lines.append(f"  pair:      {result.chosen_pair}")
    if (d.get("rng") or {}).get("rng_ignored"):
        lines.append(f"  rng:       {d['rng'].get('note', '')}")
    pairs = d.get("pairs") or {}
    if pairs.get("pair_index") is not None:
        lines.append(f"  pair:      candidate pair {pairs['pair_index']} (chosen on a pilot of "
                     f"{pairs.get('pilot_samples')} runs per input per pair)")
    if d.get("mu_lower_bound"):
        lines.append(f"  GDP:       mu >= {_fmt(d['mu_lower_bound'])} (assumes a Gaussian trade-off "
                     "curve; not used for the verdict)")
    lines.append(f"  reproduce: {reproduce}")
    return "\n".join(lines)


def _gate_message(result: "SequentialResult", reproduce: str) -> str:
    d = result.to_dict()
    claim = d.get("claim", {})
    eps, delta = claim.get("epsilon"), claim.get("delta")
    lines = [
        f"({_fmt(eps)}, {_fmt(delta)})-DP claim violated: the sequential gate stopped after "
        f"{d.get('stopped_at')} betting runs per input ({d.get('runs_per_input')} in all, "
        f"{d.get('train_runs')} training runs never bet on): log-wealth {_fmt(d.get('log_wealth'))}"
        f" >= ln(1/alpha) = {_fmt(d.get('threshold_log_wealth'))} (anytime-valid at level alpha = "
        f"{_fmt(d.get('alpha'))}, Ville's inequality).",
    ]
    best = d.get("event") or {}
    ev = best.get("event") or {}
    if ev:
        lines.append(f"  event:     {ev.get('description') or ev} (bettor: "
                     f"{best.get('statistic')} statistic, bet {_fmt(best.get('bet'))}, its "
                     f"log-wealth {_fmt(best.get('log_wealth'))})")
    bettors = [b.get("statistic") for b in (d.get("statistic") or {}).get("bettors", [])]
    if bettors:
        lines.append(f"  bettors:   {len(bettors)} ({', '.join(map(str, bettors))}), equal weights "
                     "fixed before sampling; the gate's wealth is their average")
    lines.append(f"  samples:   at most {d.get('max_samples')} runs per input, seed {d.get('seed')}, "
                 f"{d.get('rounds')} betting round{'s' if d.get('rounds') != 1 else ''}")
    lines.append(f"  reproduce: {reproduce}")
    return "\n".join(lines)


def _sum(a: Any, b: Any) -> Any:
    try:
        return int(a) + int(b)
    except (TypeError, ValueError):
        return "?"


class _Missing:
    """Default of ``data0``/``data1``: tells an omitted input from an input that is ``None``."""

    def __repr__(self) -> str:
        return "<required unless pairs= is given>"


_MISSING: Any = _Missing()


def _inputs(caller: str, data0: Any, data1: Any, audit_kwargs: Mapping[str, Any]
            ) -> tuple[Any, Any]:
    """The inputs to pass to ``audit``: a TypeError naming what is missing, unless ``pairs=``."""
    missing = [name for name, d in (("data0", data0), ("data1", data1)) if d is _MISSING]
    if audit_kwargs.get("pairs") is not None:
        return (None if data0 is _MISSING else data0), (None if data1 is _MISSING else data1)
    if missing:
        raise TypeError(f"{caller} needs two neighbouring inputs: pass data0 and data1, or "
                        f"pairs=[(data0, data1), ...]; missing: {', '.join(missing)}")
    return data0, data1


def assert_dp(mechanism: Callable[..., Any], data0: Any = _MISSING, data1: Any = _MISSING, *,
              epsilon: float, delta: float = 0.0, samples: int = DEFAULT_SAMPLES,
              alpha: float = 0.05, seed: int = DEFAULT_SEED, sequential: bool = False,
              max_samples: int | None = None,
              **audit_kwargs: Any) -> "AuditResult | SequentialResult":
    """Fail the calling test if an audit finds that ``mechanism`` violates (epsilon, delta)-DP.

    Parameters
    ----------
    mechanism : callable ``(data, n, rng) -> array``
        Outputs of ``n`` independent runs on ``data``, leading axis ``n`` (the contract of
        :func:`dpaudit.audit`); all randomness must come from the ``numpy.random.Generator`` rng.
    data0, data1 : any
        Two neighbouring inputs. Omit them and pass ``pairs=[(d0, d1), ...]`` to audit the most
        promising of several candidate pairs.
    epsilon, delta : float
        The claim (epsilon > 0, delta in [0, 1)).
    samples : int
        Runs per input (default 100 000).
    alpha : float
        Probability of a false alarm on a mechanism that meets its claim (default 0.05).
    seed : int
        Seed of the audit (default 0: deterministic, so CI runs are reproducible).
    sequential : bool
        Run the anytime-valid gate :func:`dpaudit.blackbox.sequential_gate.sequential_gate`
        instead of the fixed-budget audit (default False): it stops at the first conclusive
        evidence of a violation, so a broken mechanism fails fast and a correct one costs the
        whole budget.
    max_samples : int >= 100, optional
        With ``sequential=True``: the gate's largest number of runs per input (default:
        ``samples``). Not accepted without ``sequential=True``.
    **audit_kwargs
        Passed to :func:`dpaudit.audit` (``pairs``, ``statistic``, ``output_kind``, ...); with
        ``sequential=True`` to the gate, which takes ``train_samples`` and ``statistics`` only.

    Returns
    -------
    AuditResult or SequentialResult
        When no violation was found (a ``SequentialResult`` with ``sequential=True``).

    Raises
    ------
    AssertionError
        When the one-sided ``(1 - alpha)`` lower bound on epsilon exceeds ``epsilon``; the message
        states the bound, the claim, the event, its counts and the call that reproduces it. With
        ``sequential=True``: when the gate's wealth reaches ``1 / alpha``; the message states the
        stopping time, the log-wealth, the winning bettor's event and the call that reproduces it.
    ValueError, TypeError
        For invalid arguments or a mechanism that breaks the contract (from :func:`dpaudit.audit`
        or the gate).
    """
    __tracebackhide__ = True
    data0, data1 = _inputs("assert_dp()", data0, data1, audit_kwargs)
    if _sequential_mode(sequential, max_samples):
        return _assert_gate(mechanism, data0, data1, epsilon, delta,
                            samples if max_samples is None else max_samples,
                            "samples" if max_samples is None else "max_samples", alpha, seed,
                            audit_kwargs, None)
    return _assert_dp(mechanism, data0, data1, epsilon, delta, samples, alpha, seed, audit_kwargs,
                      None)


#: Options of :func:`assert_dp` that the sequential gate takes besides the claim and budget.
_GATE_OPTIONS = ("train_samples", "statistics")


def _sequential_mode(sequential: Any, max_samples: Any) -> bool:
    """Whether to run the gate; a TypeError for a non-bool ``sequential`` or for ``max_samples``
    without it (it would be silently ignored by the fixed-budget audit)."""
    if not isinstance(sequential, bool):
        raise TypeError(f"sequential must be True or False, got {sequential!r}")
    if max_samples is not None and not sequential:
        raise TypeError("max_samples is the sequential gate's budget: pass sequential=True with "
                        "it (the fixed-budget audit takes samples=)")
    return sequential


def _assert_gate(mechanism: Callable[..., Any], data0: Any, data1: Any, epsilon: float,
                 delta: float, max_samples: Any, budget_name: str, alpha: float, seed: int,
                 gate_kwargs: Mapping[str, Any], rerun_hint: str | None) -> "SequentialResult":
    __tracebackhide__ = True
    from dpaudit._validation import check_int
    from dpaudit.blackbox.sequential_gate import sequential_gate

    others = sorted(set(gate_kwargs) - set(_GATE_OPTIONS))
    if others:
        raise TypeError(f"assert_dp(sequential=True) runs the sequential gate on one pair "
                        f"(data0, data1), which takes {' and '.join(_GATE_OPTIONS)} only; not "
                        f"{', '.join(others)} (options of the fixed-budget audit: pass "
                        "sequential=False to run it, also under --dp-sequential)")
    # The budget is named as the caller passed it (samples= or max_samples=).
    max_samples = check_int(max_samples, budget_name, minimum=100)
    result = sequential_gate(mechanism, data0, data1, epsilon=epsilon, delta=delta, alpha=alpha,
                             max_samples=max_samples, seed=seed, **gate_kwargs)
    if result.verdict == "violated":
        reproduce = _call_text(epsilon, delta, max_samples, alpha, seed, gate_kwargs,
                               sequential=True)
        if rerun_hint:
            reproduce += f"\n             or rerun: {rerun_hint}"
        raise AssertionError(violation_message(result, reproduce))
    return result


def _assert_dp(mechanism: Callable[..., Any], data0: Any, data1: Any, epsilon: float, delta: float,
               samples: int, alpha: float, seed: int, audit_kwargs: Mapping[str, Any],
               rerun_hint: str | None) -> "AuditResult":
    __tracebackhide__ = True
    from dpaudit.blackbox.empirical_audit import audit

    result = audit(mechanism, data0, data1, epsilon=epsilon, delta=delta, samples=samples,
                   alpha=alpha, seed=seed, **_with_session_executor(audit_kwargs))
    if result.verdict == "violated":
        reproduce = _call_text(epsilon, delta, samples, alpha, seed, audit_kwargs)
        if rerun_hint:
            reproduce += f"\n             or rerun: {rerun_hint}"
        raise AssertionError(violation_message(result, reproduce))
    return result


# Where audits run in this pytest session (``--dp-executor``, ``--dp-scheduler``): the name and
# scheduler, and the executor itself, opened on first use and closed when the session ends.
_SESSION: dict[str, Any] = {"executor": "local", "scheduler": None, "open": None,
                           "report_dir": None}


def _with_session_executor(audit_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``audit_kwargs`` plus the session's executor, unless the call chose one itself.

    The executor never changes a result (:mod:`dpaudit.execution.executors`), so a test gives the
    same verdict, bound and message with ``--dp-executor dask`` as in-process.
    """
    kwargs = dict(audit_kwargs)
    if "executor" in kwargs or "scheduler" in kwargs or (
            _SESSION["executor"] == "local" and _SESSION["scheduler"] is None):
        return kwargs
    if _SESSION["open"] is None:
        from dpaudit.execution.executors import open_executor

        _SESSION["open"] = open_executor(_SESSION["executor"], _SESSION["scheduler"],
                                         preload=("dpaudit.blackbox.empirical_audit",))
    kwargs["executor"] = _SESSION["open"]
    return kwargs


def derive_seed(base_seed: int, test_id: str, call_index: int = 0) -> int:
    """A fixed 32-bit seed for the ``call_index``-th audit of the test ``test_id``.

    Different tests (and successive calls in one test) get independent seeds; the same test id
    and base seed always give the same seed, on every machine.
    """
    import numpy as np

    words = [int(base_seed), zlib.crc32(test_id.encode("utf-8")), int(call_index)]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0])


class DPAuditor:
    """What the ``dp_auditor`` fixture returns: audits seeded from the test id.

    ``base_seed`` comes from ``--dp-seed``, ``samples`` from ``--dp-samples`` and ``sequential``
    from ``--dp-sequential`` (``assert_dp`` then runs the sequential gate with at most
    ``samples`` runs per input, unless the call says ``sequential=False``); each call's
    seed is :func:`derive_seed` ``(base_seed, test_id, k)`` for the k-th call in the test, unless
    the call passes ``seed=`` itself.
    """

    def __init__(self, test_id: str, base_seed: int = DEFAULT_SEED,
                 samples: int = DEFAULT_SAMPLES, sequential: bool = False) -> None:
        self.test_id = test_id
        self.base_seed = base_seed
        self.samples = samples
        self.sequential = sequential
        self.calls = 0

    def next_seed(self) -> int:
        """The seed of the next audit in this test."""
        seed = derive_seed(self.base_seed, self.test_id, self.calls)
        self.calls += 1
        return seed

    def audit(self, mechanism: Callable[..., Any], data0: Any = _MISSING, data1: Any = _MISSING, *,
              epsilon: float, delta: float = 0.0, samples: int | None = None, alpha: float = 0.05,
              seed: int | None = None, **audit_kwargs: Any) -> "AuditResult":
        """:func:`dpaudit.audit` with this test's seed and default samples; never fails the test."""
        from dpaudit.blackbox.empirical_audit import audit

        data0, data1 = _inputs("dp_auditor.audit()", data0, data1, audit_kwargs)
        return audit(mechanism, data0, data1, epsilon=epsilon, delta=delta,
                     samples=self.samples if samples is None else samples, alpha=alpha,
                     seed=self.next_seed() if seed is None else seed,
                     **_with_session_executor(audit_kwargs))

    def assert_dp(self, mechanism: Callable[..., Any], data0: Any = _MISSING,
                  data1: Any = _MISSING, *,
                  epsilon: float, delta: float = 0.0, samples: int | None = None,
                  alpha: float = 0.05, seed: int | None = None, sequential: bool | None = None,
                  max_samples: int | None = None,
                  **audit_kwargs: Any) -> "AuditResult | SequentialResult":
        """:func:`assert_dp` with this test's seed and default samples; ``sequential`` defaults
        to ``--dp-sequential`` and the gate's ``max_samples`` to ``samples`` (``--dp-samples``)."""
        __tracebackhide__ = True
        data0, data1 = _inputs("dp_auditor.assert_dp()", data0, data1, audit_kwargs)
        from_option = sequential is None and self.sequential
        sequential = self.sequential if sequential is None else sequential
        gate = _sequential_mode(sequential, max_samples)
        explicit = seed is not None
        seed = seed if explicit else self.next_seed()
        hint = None if explicit else (f"pytest {self.test_id!r} --dp-seed={self.base_seed}"
                                      + (" --dp-sequential" if from_option else ""))
        budget = self.samples if samples is None else samples
        if gate:
            return _assert_gate(mechanism, data0, data1, epsilon, delta,
                                budget if max_samples is None else max_samples,
                                "samples" if max_samples is None else "max_samples", alpha, seed,
                                audit_kwargs, hint)
        return _assert_dp(mechanism, data0, data1, epsilon, delta, budget, alpha, seed,
                          audit_kwargs, hint)


# ------------------------------------------------------------------------------------------------
# Claims and lemmas (the public claim API)
# ------------------------------------------------------------------------------------------------

def assert_claim(claim: Any, *, budget: str = "quick", seed: int = 0, alpha: float = 0.05,
                 require: str = "not violated", out: Any = None) -> Any:
    """Audit ``claim`` (a :class:`dpaudit.Claim` or a registered claim id) with the same engine,
    verdict rules and reports as ``dpaudit audit``, and fail the test unless its verdict meets
    ``require``: ``"not violated"`` (the default: fails on ``violated``) or ``"holds"`` (fails on
    ``violated`` and ``inconclusive``). The message carries the verdict sentence, the worst point
    and the command that reproduces the audit. Returns the
    :class:`~dpaudit.claims.record.ClaimAudit`.

    With ``out=DIR`` (or the session option ``--dp-report DIR``) the claim's reports are written
    there, as the CLI writes them.
    """
    from dpaudit.api import audit_claim

    if require not in ("not violated", "holds"):
        raise ValueError(f"require must be 'not violated' or 'holds', got {require!r}")
    target = out if out is not None else _SESSION.get("report_dir")
    result = audit_claim(claim, budget=budget, seed=seed, alpha=alpha, out=target)
    verdict, reason = result.verdict_and_reason
    failed = verdict == "violated" or (require == "holds" and verdict != "holds")
    if failed:
        lines = [f"claim {result.claim.id} is {verdict.upper()} (required: {require}): {reason}"]
        worst = result.worst_point()
        if worst is not None:
            lines.append(
                f"  worst point: {dict(worst.parameters)}; claimed ({_fmt(worst.claimed_epsilon)}, "
                f"{_fmt(worst.claimed_delta)}); exact {_fmt(worst.epsilon_exact)} "
                f"({_exact_words(worst)}); accountant {_fmt(worst.epsilon_accountant)}; empirical "
                f"lower bound {_fmt(worst.epsilon_lower_bound)}"
                + ("" if worst.epsilon_user_lower_bound is None else
                   f"; {USER_LOWER_BOUND_LABEL} {_fmt(worst.epsilon_user_lower_bound)} "
                   f"({NOT_COMPUTED})"))
        lines.append(f"  reproduce: {result.reproduce}")
        if target is not None:
            lines.append(f"  report: {target}")
        raise AssertionError("\n".join(lines))
    return result


def _exact_words(point: Any) -> str:
    """``exact, derived from the code`` / ``exact, declared`` / ``user-supplied exact epsilon`` /
    ``exact``: the kind of a point's exact value and which evidence it is, as the reports label
    it."""
    from dpaudit.reporting.view import exact_origin

    if point.exact_kind == USER_SUPPLIED:  # one label per user number, as in the verdict
        return USER_EXACT_LABEL
    origin = exact_origin({"epsilon_exact": point.epsilon_exact, "exact_kind": point.exact_kind,
                           "evidence": point.evidence.to_dict()})
    if not origin or origin == point.exact_kind:
        return str(point.exact_kind)
    return f"{point.exact_kind}, {origin}"


def assert_sensitivity(statement: str, pairs: Any, quantity: Callable[[Any, Any], float],
                       bound: float, *, examples: int = 200, seed: int = 0) -> Any:
    """Search the Hypothesis strategy ``pairs`` of neighbouring inputs for one with
    ``quantity(data0, data1) > bound`` and fail with the shrunk counterexample (the two inputs,
    the observed and the claimed value) when one exists; returns the
    :class:`~dpaudit.formal.lemma_search.LemmaSearchResult` otherwise. A passing search is not a
    proof."""
    from dpaudit.formal.lemma_search import search_lemma

    result = search_lemma(statement, pairs, quantity, bound, examples=examples, seed=seed)
    if not result.holds:
        raise AssertionError(result.message() + f"\n  reproduce: assert_sensitivity(..., "
                             f"examples={examples}, seed={seed})")
    return result


# ------------------------------------------------------------------------------------------------
# pytest hooks
# ------------------------------------------------------------------------------------------------

def _nonnegative_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _samples_int(text: str) -> int:
    import argparse

    value = _nonnegative_int(text)
    if value < 10:
        raise argparse.ArgumentTypeError(f"expected at least 10 samples, got {text!r}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpaudit", "differential-privacy audits (dpaudit)")
    group.addoption("--dp-seed", action="store", type=_nonnegative_int, default=DEFAULT_SEED,
                    metavar="N", help="base seed of the dp_auditor fixture (default 0); each test "
                    "derives its own fixed seed from it and its test id")
    group.addoption("--dp-samples", action="store", type=_samples_int, default=DEFAULT_SAMPLES,
                    metavar="N", help="samples per input of dp_auditor audits that do not set "
                    f"samples= (default {DEFAULT_SAMPLES})")
    group.addoption("--dp-sequential", action="store_true", default=False,
                    help="dp_auditor.assert_dp runs the anytime-valid sequential gate (stops at "
                    "the first conclusive evidence) instead of the fixed-budget audit, with at "
                    "most --dp-samples runs per input, unless a call says sequential=False")
    group.addoption("--dp-executor", action="store", default="local",
                    choices=("local", "processes", "dask"),
                    help="where assert_dp and dp_auditor audits run their test chunks: local "
                    "(default), processes, or dask (a LocalCluster for the session, or "
                    "--dp-scheduler / DASK_SCHEDULER_ADDRESS); results are identical")
    group.addoption("--dp-scheduler", action="store", default=None, metavar="ADDRESS",
                    help="address of a running Dask scheduler (implies --dp-executor dask)")
    group.addoption("--dp-report", action="store", default=None, metavar="DIR",
                    help="write the reports of every claim assert_claim audits into DIR (JSON, "
                    "Markdown, HTML and an index, as `dpaudit audit --out DIR` writes them)")
    group.addoption("--dp-plugin", action="append", default=[], metavar="MODULE",
                    help="import MODULE (dotted name or .py path) so that the claims it registers "
                    "can be audited by id; repeatable")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "dp_slow: a slow differential-privacy audit (deselect with -m \"not dp_slow\")")
    scheduler = config.getoption("dp_scheduler", None)
    executor = config.getoption("dp_executor", "local") or "local"
    if scheduler is not None and executor == "local":
        executor = "dask"
    if scheduler is not None and executor != "dask":
        raise pytest.UsageError(f"--dp-scheduler needs --dp-executor dask, got {executor}")
    if config.getoption("dp_sequential", False) and config.getoption("dp_samples", 100) < 100:
        raise pytest.UsageError(f"--dp-samples must be at least 100 with --dp-sequential (the "
                                f"gate's runs per input), got {config.getoption('dp_samples')}")
    _SESSION.update(executor=executor, scheduler=scheduler, open=None,
                    report_dir=config.getoption("dp_report", None))
    plugins = config.getoption("dp_plugin", None) or []
    if plugins:
        from dpaudit.claims.registry import PluginError, load_plugin

        for spec in plugins:
            try:
                load_plugin(spec)
            except PluginError as exc:
                raise pytest.UsageError(str(exc)) from None


def pytest_unconfigure(config: pytest.Config) -> None:
    opened = _SESSION.get("open")
    _SESSION.update(executor="local", scheduler=None, open=None, report_dir=None)
    if opened is not None:
        opened.close()


def pytest_report_header(config: pytest.Config) -> str:
    mode = ("sequential gate (--dp-sequential), at most" if config.getoption("dp_sequential")
            else "default samples")
    return (f"dpaudit: dp_auditor base seed {config.getoption('dp_seed')} (--dp-seed), "
            f"{mode} {config.getoption('dp_samples')} (--dp-samples), executor "
            f"{_SESSION['executor']} (--dp-executor)")


def dp_auditor(request: pytest.FixtureRequest) -> DPAuditor:
    """A :class:`DPAuditor` whose audits are seeded from ``--dp-seed`` and this test's id."""
    return DPAuditor(request.node.nodeid, request.config.getoption("dp_seed"),
                     request.config.getoption("dp_samples"),
                     bool(request.config.getoption("dp_sequential", False)))


if pytest is not None:
    dp_auditor = pytest.fixture(dp_auditor)
