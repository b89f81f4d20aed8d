"""Fuzz of the public API and the CLI with invalid input (a standing property).

Every invalid call must end in a ``ValueError``/``TypeError`` whose message names the offending
parameter (or, for a mechanism's bad outputs, the mechanism and the run), and every invalid
command line in exit status 2 with one ``error:`` sentence on stderr: never another exception
type, never a traceback, never a verdict. The default suite runs a few hundred examples;
``make campaign`` (``-m slow``) runs thousands. Each test prints its counts (bad calls tried,
clear errors, anything else) so the campaign output can be quoted.
"""

from __future__ import annotations

import collections
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit import cli
from dpaudit.claims import registry
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.evidence import GridPoint
from dpaudit.blackbox.empirical_audit import audit
from dpaudit.formal.floating_point import audit_float_laplace
from dpaudit.claims import PrivacyClaim, Provenance
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism, classical_sigma
from dpaudit.mechanisms.laplace import LaplaceMechanism, sample_laplace
from dpaudit.mechanisms.tree_aggregation import NodeNoise

COUNTS: collections.Counter = collections.Counter()


@pytest.fixture(scope="module", autouse=True)
def _print_counts():
    yield
    for key in sorted({k[0] for k in COUNTS}):
        print(f"\nfuzz {key}: {COUNTS[key, 'tried']} bad calls, {COUNTS[key, 'clear']} clear "
              f"errors, {COUNTS[key, 'other']} anything else")


def _settings(n: int):
    return settings(max_examples=n, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


def _expect_clear(kind: str, call, *words: str) -> None:
    """``call()`` must raise ValueError/TypeError mentioning every word; counted under kind."""
    COUNTS[kind, "tried"] += 1
    try:
        result = call()
    except (ValueError, TypeError) as exc:
        missing = [w for w in words if w not in str(exc)]
        if missing:
            COUNTS[kind, "other"] += 1
            raise AssertionError(f"message {str(exc)!r} does not name {missing}") from exc
        COUNTS[kind, "clear"] += 1
        return
    except Exception as exc:
        COUNTS[kind, "other"] += 1
        raise AssertionError(f"{type(exc).__name__} instead of ValueError/TypeError: {exc}") from exc
    COUNTS[kind, "other"] += 1
    raise AssertionError(f"no error, got {result!r}")


# ------------------------------------------------------------------------------------------------
# Invalid values per parameter
# ------------------------------------------------------------------------------------------------

junk = st.one_of(st.none(), st.text(max_size=5), st.just([1.0]), st.just({"a": 1}),
                 st.complex_numbers(allow_nan=False, max_magnitude=10).filter(lambda z: z.imag),
                 st.just(object()))
nan_like = st.sampled_from([math.nan, np.float64("nan"), np.float32("nan")])
not_int = st.one_of(st.floats(allow_nan=False, allow_infinity=True), st.booleans(), junk)


def positive_real_bad():  # for parameters in (0, inf)
    return st.one_of(junk, nan_like, st.booleans(), st.sampled_from([math.inf, -math.inf]),
                     st.floats(max_value=0.0, allow_nan=False), st.integers(max_value=0))


def unit_open_bad():  # for parameters in (0, 1)
    return st.one_of(junk, nan_like, st.booleans(), st.floats(max_value=0.0, allow_nan=False),
                     st.floats(min_value=1.0, allow_nan=False))


def delta_bad():  # [0, 1)
    return st.one_of(junk, nan_like, st.booleans(),
                     st.floats(max_value=-1e-300, allow_nan=False),
                     st.floats(min_value=1.0, allow_nan=False))


def int_bad(minimum: int, maximum: int | None = None):
    below = st.integers(max_value=minimum - 1)
    above = st.integers(min_value=maximum + 1, max_value=10**6) if maximum else st.nothing()
    return st.one_of(not_int, below, above)


def _lap(d, n, rng):
    return d + rng.laplace(0.0, 1.0, size=n)


AUDIT_PARAMETERS = {
    "epsilon": positive_real_bad(),
    "delta": delta_bad(),
    "alpha": unit_open_bad(),
    "samples": int_bad(10),
    "seed": int_bad(0),
    "train_fraction": unit_open_bad().filter(lambda v: v is not None),
    "test_events": int_bad(1, 4),
    "chunk_size": int_bad(1).filter(lambda v: v is not None),
    "pilot_samples": int_bad(10).filter(lambda v: v is not None),
    "output_kind": st.one_of(st.text(max_size=8).filter(
        lambda s: s not in ("auto", "discrete", "continuous")), st.integers()),
}


@_settings(300)
@given(st.sampled_from(sorted(AUDIT_PARAMETERS)).flatmap(
    lambda name: st.tuples(st.just(name), AUDIT_PARAMETERS[name])))
def test_fuzz_audit_parameters(case) -> None:
    name, value = case
    kwargs = {name: value}
    if name == "pilot_samples":
        kwargs["pairs"] = [(0.0, 1.0), (0.0, 2.0)]
        _expect_clear("audit() parameters", lambda: audit(_lap, samples=1_000, **kwargs), name)
        return
    _expect_clear("audit() parameters",
                  lambda: audit(_lap, 0.0, 1.0, **{"samples": 1_000, **kwargs}), name)


def _bad_output(kind: str, position: int, n: int, rng) -> np.ndarray:
    x = rng.laplace(size=n)
    i = position % n
    if kind in ("nan", "inf", "-inf"):
        x[i] = float(kind)
        return x
    if kind in ("object-nan", "object-none", "object-inf"):
        x = x.astype(object)
        x[i] = {"object-nan": math.nan, "object-none": None, "object-inf": math.inf}[kind]
        return x
    if kind == "float32-nan":
        x = x.astype(np.float32)
        x[i] = np.nan
        return x
    if kind == "vector-nan":
        x = rng.normal(size=(n, 3))
        x[i, 1] = np.nan
        return x
    raise AssertionError(kind)


@_settings(150)
@given(kind=st.sampled_from(["nan", "inf", "-inf", "object-nan", "object-none", "object-inf",
                             "float32-nan", "vector-nan"]),
       on=st.sampled_from([0, 1]), call=st.integers(0, 6), position=st.integers(0, 10**6))
def test_fuzz_mechanism_outputs(kind, on, call, position) -> None:
    # The bad value appears on one input, in the call-th call of the mechanism on that input
    # (the probe is call 0), at a random row: every chunk is checked, not only the probe.
    calls = [0, 0]

    def broken(d, n, rng):
        k = calls[d]
        calls[d] += 1
        if d == on and k == call:
            return _bad_output(kind, position, n, rng)
        return rng.normal(size=(n, 3)) if kind == "vector-nan" else rng.laplace(size=n)

    _expect_clear("mechanism outputs", lambda: audit(broken, 0, 1, samples=6_000, chunk_size=500),
                  "broken", f"data{on}", "in run")


WRONG_SHAPES = [
    lambda d, n, rng: rng.normal(size=n + 1),
    lambda d, n, rng: rng.normal(size=max(n - 1, 0)),
    lambda d, n, rng: 0.5,
    lambda d, n, rng: np.zeros((n, 0)),
    lambda d, n, rng: rng.normal(size=n) + 1j,
    lambda d, n, rng: rng.normal(size=(n, 1 + (n % 2))),
    lambda d, n, rng: rng.normal(size=(n, 2 if d == 0 else 3)),
    lambda d, n: np.zeros(n),
    lambda d: np.zeros(3),
    lambda: np.zeros(3),
]


@_settings(60)
@given(i=st.integers(0, len(WRONG_SHAPES) - 1))
def test_fuzz_mechanism_contract(i) -> None:
    _expect_clear("mechanism contract", lambda: audit(WRONG_SHAPES[i], 0, 1, samples=1_000),
                  "mechanism")


CONSTRUCTORS = {
    "LaplaceMechanism(sensitivity)": (lambda v: LaplaceMechanism(v, 1.0), positive_real_bad(),
                                      "sensitivity"),
    "LaplaceMechanism(scale)": (lambda v: LaplaceMechanism(1.0, v), positive_real_bad(), "scale"),
    "LaplaceMechanism.from_epsilon(epsilon)": (lambda v: LaplaceMechanism.from_epsilon(1.0, v),
                                               st.one_of(positive_real_bad(),
                                                         st.just(1e-320)), "epsilon"),
    "GaussianMechanism(sigma)": (lambda v: GaussianMechanism(1.0, v), positive_real_bad(),
                                 "sigma"),
    "classical_sigma(delta)": (lambda v: classical_sigma(1.0, 1.0, v),
                               unit_open_bad(), "delta"),
    "classical_sigma(epsilon)": (lambda v: classical_sigma(1.0, v, 1e-5), positive_real_bad(),
                                 "epsilon"),
    "ExponentialMechanism.from_epsilon(epsilon)": (
        lambda v: ExponentialMechanism.from_epsilon(1.0, v), positive_real_bad(), "epsilon"),
    "NodeNoise.laplace(scale)": (lambda v: NodeNoise.laplace(v), positive_real_bad(), "scale"),
    "sample_laplace(size)": (lambda v: sample_laplace(1.0, v, np.random.default_rng(0)),
                             st.one_of(st.integers(max_value=-1), st.floats(), junk.filter(
                                 lambda x: x is not None)), "size"),
    "sample_laplace(rng)": (lambda v: sample_laplace(1.0, 3, v),
                            st.one_of(junk, st.integers()), "rng"),
    "LaplaceMechanism(noise)": (lambda v: LaplaceMechanism(1.0, 1.0, noise=v, granularity=0.5),
                                st.one_of(st.text(max_size=8).filter(
                                    lambda x: x not in ("float", "discrete")), junk), "noise"),
    "LaplaceMechanism(granularity)": (
        lambda v: LaplaceMechanism(1.0, 1.0, noise="discrete", granularity=v),
        st.one_of(positive_real_bad(), st.floats(1e-300, 1e-6)), "granularity"),
    "GaussianMechanism(granularity)": (
        lambda v: GaussianMechanism(1.0, 1.0, noise="discrete", granularity=v),
        st.one_of(positive_real_bad(), st.floats(1e-300, 1e-6)), "granularity"),
    "NodeNoise.discrete_laplace(granularity)": (
        lambda v: NodeNoise.discrete_laplace(1.0, v), positive_real_bad(), "granularity"),
    "audit_float_laplace(scale)": (lambda v: audit_float_laplace(0.0, 1.0, v),
                                   positive_real_bad(), "scale"),
}


@_settings(300)
@given(st.sampled_from(sorted(CONSTRUCTORS)).flatmap(
    lambda key: st.tuples(st.just(key), CONSTRUCTORS[key][1])))
def test_fuzz_mechanism_constructors(case) -> None:
    key, value = case
    make, _, word = CONSTRUCTORS[key]
    _expect_clear("mechanism constructors", lambda: make(value), word)


# ------------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------------

FAKE = "fuzz-colt/a"


@pytest.fixture
def fake_registry(monkeypatch):
    claim = PrivacyClaim(FAKE, 1.0, 0.0, Provenance("fake.txt", "v1", "Theorem 1"))
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded", True)
    registry.register(claim, lambda ctx: ClaimAudit(
        claim, [GridPoint({"epsilon": 1.0}, 1.0, 0.0, 1.0, 1.0, 0.5)]))


BAD_OPTIONS = st.one_of(
    st.tuples(st.just("--seed"), st.sampled_from(["-1", "x", "1.5", "", "nan"])),
    st.tuples(st.just("--alpha"), st.sampled_from(["0", "1", "-0.1", "2", "nan", "x", ""])),
    st.tuples(st.just("--jobs"), st.sampled_from(["0", "-3", "x", "1.5"])),
    st.tuples(st.just("--budget"), st.text(min_size=1, max_size=6).filter(
        lambda s: s not in ("quick", "standard", "thorough") and not s.startswith("-"))),
    st.tuples(st.just("--out"), st.sampled_from(["", " ", "/proc/self", "{file}",
                                                 "{file}/sub"])),
)
CORRUPT_CLAIM = st.one_of(st.binary(max_size=40), st.sampled_from(
    [b"[]", b"{}", b"null", b"{\"schema\": \"dpaudit.claim/1\"}", b"{\"schema\": 1}"]))


@_settings(40)
@given(option=st.sampled_from(["--f0", "--f1", "--scale"]),
       value=st.sampled_from(["nan", "inf", "-inf", "x", "", "1e999", "0x1p1"]))
def test_fuzz_cli_float_audit(fake_registry, capsys, option, value) -> None:
    if option == "--scale" or value not in ("0x1p1",):
        _expect_cli(["float-audit", option, value], capsys)


@_settings(80)
@given(command=st.sampled_from(["audit", "audit-claims"]), option=BAD_OPTIONS,
       claim=st.sampled_from([FAKE, "nope/x", "no-slash", "../x/y"]))
def test_fuzz_cli_bad_options(tmp_path_factory, fake_registry, capsys, command, option,
                              claim) -> None:
    base = tmp_path_factory.mktemp("cli")
    (base / "afile").write_text("x")
    flag, value = option
    value = value.format(file=base / "afile")
    argv = [command, claim, "--budget", "quick", flag, value]
    if command == "audit-claims" and flag != "--out":
        argv += ["--out", str(base / "out")]
    elif command == "audit" and flag != "--out":
        argv += ["--out", str(base / "out")]
    _expect_cli(argv, capsys)


_TEMPLATE: dict[str, Path] = {}


def _audited_copy(tmp_path_factory) -> Path:
    """A fresh copy of one audited report directory (audited once per session: rendering the
    figures is what costs time)."""
    if "dir" not in _TEMPLATE:
        template = tmp_path_factory.mktemp("template")
        assert cli.main(["audit-claims", FAKE, "--budget", "quick", "--quiet", "--out",
                         str(template)]) == 0
        _TEMPLATE["dir"] = template
    out = tmp_path_factory.mktemp("rep") / "out"
    shutil.copytree(_TEMPLATE["dir"], out)
    return out


@_settings(60)
@given(data=CORRUPT_CLAIM)
def test_fuzz_cli_corrupt_saved_claim(tmp_path_factory, fake_registry, capsys, data) -> None:
    out = _audited_copy(tmp_path_factory)
    capsys.readouterr()
    index = (out / "index.json").read_bytes()
    (out / "fuzz-colt/a.json").write_bytes(data)
    _expect_cli(["report", str(out)], capsys, "fuzz-colt/a.json")
    assert (out / "index.json").read_bytes() == index


def _expect_cli(argv: list[str], capsys, *words: str) -> None:
    COUNTS["CLI commands", "tried"] += 1
    status = cli.main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    ok = (status == cli.EXIT_USAGE and len(lines) == 1 and "Traceback" not in err
          and all(w in err for w in words))
    COUNTS["CLI commands", "clear" if ok else "other"] += 1
    assert ok, (argv, status, err)


# ------------------------------------------------------------------------------------------------
# Campaign: the same properties at thousands of examples
# ------------------------------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=3_000, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(AUDIT_PARAMETERS)).flatmap(
    lambda name: st.tuples(st.just(name), AUDIT_PARAMETERS[name])))
def test_fuzz_audit_parameters_campaign(case) -> None:
    test_fuzz_audit_parameters.hypothesis.inner_test(case)


@pytest.mark.slow
@settings(max_examples=2_000, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(CONSTRUCTORS)).flatmap(
    lambda key: st.tuples(st.just(key), CONSTRUCTORS[key][1])))
def test_fuzz_mechanism_constructors_campaign(case) -> None:
    test_fuzz_mechanism_constructors.hypothesis.inner_test(case)


@pytest.mark.slow
@settings(max_examples=1_000, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["nan", "inf", "-inf", "object-nan", "object-none", "object-inf",
                             "float32-nan", "vector-nan"]),
       on=st.sampled_from([0, 1]), call=st.integers(0, 6), position=st.integers(0, 10**6))
def test_fuzz_mechanism_outputs_campaign(kind, on, call, position) -> None:
    test_fuzz_mechanism_outputs.hypothesis.inner_test(kind, on, call, position)

