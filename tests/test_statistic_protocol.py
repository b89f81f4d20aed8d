"""The black-box statistics' protocol: every fitter and scorer inherits it, the engine calls its
hooks directly, and a user's statistic enters through the one adapter.

The expected values are the protocol's own definitions (a default hook changes nothing), and a
duck-typed user statistic must give the same audit as the plain function it wraps.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest

import dpaudit.blackbox as blackbox
from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.learned_statistics import STATISTIC_NAMES, candidates_for
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.mechanisms.laplace import LaplaceMechanism

_HOOKS = ("events_fixed_on_fit", "numerator", "mirrored_pair", "score_sorted", "to_dict",
          "in_sample", "configure", "prepare")


def _blackbox_classes() -> list[type]:
    out = []
    for info in pkgutil.iter_modules(blackbox.__path__):
        module = importlib.import_module(f"dpaudit.blackbox.{info.name}")
        out += [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                if obj.__module__ == module.__name__]
    return out


def test_every_fitter_and_scorer_class_inherits_the_protocol() -> None:
    classes = _blackbox_classes()
    scorers = [c for c in classes if c.__name__.endswith("Scorer")]
    fitters = [c for c in classes if c.__name__.endswith("Fitter")]
    # The walk must see the tree's statistics (20 scorers and 18 fitters, the two bases
    # included, when this was written).
    assert len(scorers) >= 15 and len(fitters) >= 15
    assert [c.__name__ for c in scorers if not issubclass(c, Scorer)] == []
    assert [c.__name__ for c in fitters if not issubclass(c, Fitter)] == []


@pytest.mark.parametrize("dimension", [1, 5])
def test_every_family_member_is_a_fitter(dimension: int) -> None:
    family = candidates_for(dimension, STATISTIC_NAMES)
    assert family and all(isinstance(c.fitter, Fitter) for c in family)


def test_the_engine_probes_no_hook() -> None:
    probe = re.compile(r"(getattr|hasattr)\([^)]*[\"'](" + "|".join(_HOOKS) + r")[\"']")
    src = Path(blackbox.__file__).parent
    hits = [f"{p.name}: {m.group(0)}" for p in sorted(src.glob("*.py"))
            for m in probe.finditer(p.read_text())]
    assert hits == []


class _Shift(Scorer):
    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)[:, 0] + 1.0


class _Counter(Fitter):
    def __init__(self) -> None:
        self.n = [0, 0]

    def update(self, outputs: np.ndarray, label: int) -> None:
        self.n[label] += len(outputs)

    def finish(self) -> list[Scorer]:
        return [_Shift()] if min(self.n) else []


def test_default_hooks_change_nothing() -> None:
    x = np.sort(np.random.default_rng(0).normal(size=50))
    s = _Shift()
    assert s.score_sorted(x).tobytes() == s(x).tobytes()
    assert s.mirrored_pair(x, x, n_test=10, alpha=0.05, delta=0.0) is None
    assert s.fixed_numerator() is None and s.events_fixed_on_fit is False
    assert s.to_dict() == {"name": repr(s)}
    f = _Counter()
    f.configure(n_test=10, alpha=0.05, delta=0.0, pooled=True)
    f.prepare(x[:5], x[:5])
    assert f.n == [0, 0] and f.in_sample is False  # prepare and configure are no-ops
    f.update(x, 0)
    assert f.finish() == []
    f.update(x, 1)
    assert len(f.finish()) == 1


def test_the_essentials_are_abstract() -> None:
    class NoCall(Scorer):
        pass

    class NoFinish(Fitter):
        def update(self, outputs: np.ndarray, label: int) -> None:
            pass

    with pytest.raises(TypeError):
        NoCall()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        NoFinish()  # type: ignore[abstract]


def test_fixed_direction_scorers_report_their_numerator() -> None:
    # A scorer that stores the direction its fit fixed must give it to the engine through the
    # hook (choose() drops a candidate whose selection counts reverse it).
    stored = [c for c in _blackbox_classes() if issubclass(c, Scorer)
              and "numerator" in getattr(c, "__dataclass_fields__", {})]
    assert stored
    assert [c.__name__ for c in stored if c.fixed_numerator is Scorer.fixed_numerator] == []


class _DuckStatistic:
    """A user's statistic as a callable object, with attributes named like the protocol's hooks:
    the adapter must use only its call."""

    events_fixed_on_fit = True
    in_sample = True

    def mirrored_pair(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a user statistic's attributes are not hooks")

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.asarray(outputs, dtype=np.float64).ravel()


def test_a_duck_typed_user_statistic_goes_through_the_one_adapter() -> None:
    mech = LaplaceMechanism(1.0, 1.0)
    # delta > 0: the audit pools mirrored pairs, where a scorer's mirrored_pair hook is asked.
    kw = dict(epsilon=1.0, delta=1e-6, samples=20_000, seed=3)
    duck = audit(mech, 0.0, 1.0, statistic=_DuckStatistic(), **kw)
    plain = audit(mech, 0.0, 1.0, statistic=lambda o: np.asarray(o, dtype=np.float64).ravel(),
                  **kw)
    assert duck.output_kind == "user" and duck.event is not None
    assert duck.epsilon_lower_bound == plain.epsilon_lower_bound
    assert duck.evaluated_events == plain.evaluated_events
