"""The README's own-claim example runs as written, and its two verdicts are right.

The block after the marker comment in README.md is executed unchanged (in a scratch folder, since
it writes ``dpaudit-reports/``). Its numbers are checked against an independent derivation, the
analytic Gaussian mechanism (Balle & Wang, ICML 2018, Theorem 8): a Gaussian release whose two
means lie ``Delta`` apart at noise ``sigma`` is (eps, delta)-DP exactly for

    delta(eps) = Phi(mu / 2 - eps / mu) - e^eps Phi(-mu / 2 - eps / mu),   mu = Delta / sigma.

The README's pair ``[1, 0, 1]`` vs ``[1, 0, -1]`` (one record replaced) has clipped sums 2 and 0,
so ``Delta = 2``: the factor 2.0 in ``sigma`` is the replace-one doubling, and with 1.0 instead the
exact epsilon is above the claim (the classic relation bug), so the claim is violated.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dpaudit.claims import registry

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- tests/test_readme_example.py runs this block as written. -->"


def readme_block() -> str:
    text = README.read_text(encoding="utf-8")
    assert MARKER in text, "the README's own-claim example lost its marker"
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)\n```", after, re.S)
    assert match is not None
    return match.group(1)


def analytic_gaussian_epsilon(mu: float, delta: float) -> float:
    def excess(eps: float) -> float:
        return (norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)
                - delta)
    return brentq(excess, 0.0, 50.0, xtol=1e-12)


def _run(code: str, folder: Path, monkeypatch) -> dict:
    monkeypatch.chdir(folder)
    scope: dict = {"__name__": "readme_example"}
    try:
        exec(compile(code, str(README), "exec"), scope)
    finally:
        registry.unregister("mine/noisy-sum")
    return scope


def _sigma(factor: float, epsilon: float) -> float:
    return factor * math.sqrt(2 * math.log(1.25 / 1e-5)) / epsilon


def test_the_readme_example_runs_as_written_and_holds(tmp_path, monkeypatch, capsys) -> None:
    scope = _run(readme_block(), tmp_path, monkeypatch)
    result = scope["result"]
    assert capsys.readouterr().out.strip() == "holds"
    assert (tmp_path / "dpaudit-reports" / "mine" / "noisy-sum.html").is_file()
    for point in result.points:
        eps = point.parameters["epsilon"]
        expected = analytic_gaussian_epsilon(2.0 / _sigma(2.0, eps), 1e-5)
        # The law is derived from the code and its epsilon computed exactly: agreement to 1e-6
        # relative (PLD discretisation is far finer than that at one Gaussian release).
        assert point.epsilon_exact == pytest.approx(expected, rel=1e-6)
        assert point.epsilon_exact < eps
        assert point.evidence.get("exact_source") == "derived from the code"


def test_the_readmes_halved_calibration_is_violated(tmp_path, monkeypatch, capsys) -> None:
    code = readme_block()
    assert "return 2.0 * np.sqrt" in code
    scope = _run(code.replace("return 2.0 * np.sqrt", "return 1.0 * np.sqrt"), tmp_path,
                 monkeypatch)
    result = scope["result"]
    assert capsys.readouterr().out.strip() == "violated"
    worst = result.worst_point()
    eps = worst.parameters["epsilon"]
    expected = analytic_gaussian_epsilon(2.0 / _sigma(1.0, eps), 1e-5)
    assert worst.epsilon_exact == pytest.approx(expected, rel=1e-6)
    assert worst.epsilon_exact > worst.claimed_epsilon
    assert np.isfinite(worst.epsilon_exact)
