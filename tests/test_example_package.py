"""The example user package (examples/own-learner), installed and used as a user would.

It is installed (without dependencies: they are dpaudit's) into a folder of its own, so the real
``dpaudit`` console script finds its claims through the package's ``dpaudit.claims`` entry point.
Expected verdicts come from the exact laws by hand (see the package's claims module): the correct
calibration has exact epsilon 0.751 < 1 at every point; the add/remove calibration doubles the
shift (mu 0.413, exact 1.61 > 1); redrawn node noise makes the T releases independent, release t
carrying popcount(t) fresh node noises, so the pair (+C vs -C at round 1) has
``mu^2 = sum_t (2C)^2 / (popcount(t) sigma^2)`` (:func:`redraw_mu`): exact 1.07 > 1 at T = 16.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "own-learner"
SCRIPTS = Path(sys.executable).parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    target = tmp_path_factory.mktemp("own-learner-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(EXAMPLE)],
                   check=True, capture_output=True, text=True, timeout=600)
    env = dict(os.environ, PYTHONPATH=str(target))
    return env


def redraw_mu(T: int, epsilon: float, delta: float = 1e-5, clip: float = 1.0) -> float:
    """The redraw variant's Gaussian shift on the pair +C vs -C at round 1, derived by hand."""
    depth = math.ceil(math.log2(T)) + 1
    sigma = 2 * clip * math.sqrt(depth) * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return math.sqrt(sum((2 * clip) ** 2 / (bin(t).count("1") * sigma ** 2)
                         for t in range(1, T + 1)))


def dpaudit(env: dict[str, str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPTS / "dpaudit"), *argv], env=env, capture_output=True,
                          text=True, timeout=900, cwd=cwd)


def test_the_real_console_script_lists_the_example_claims(installed) -> None:
    proc = dpaudit(installed, "list", "--json")
    assert proc.returncode == 0, proc.stderr
    claims = {c["id"]: c for c in json.loads(proc.stdout)["claims"]}
    for variant in ("correct", "addremove", "noclip", "redraw"):
        origin = claims[f"own-learner/dpftrl-{variant}"]["origin"]
        assert origin == {"kind": "entry point", "module": "own_learner.claims",
                          "distribution": "own-learner"}


@pytest.mark.parametrize("variant,code,verdict", [("correct", 0, "holds"),
                                                  ("redraw", 1, "violated")])
def test_audit_exit_codes_and_verdicts(installed, tmp_path, variant, code, verdict) -> None:
    proc = dpaudit(installed, "audit", f"own-learner/dpftrl-{variant}", "--budget", "quick",
                   "--out", str(tmp_path), "--quiet")
    assert proc.returncode == code, proc.stderr
    record = json.loads((tmp_path / "own-learner" / f"dpftrl-{variant}.json").read_text())
    assert record["verdict"] == verdict
    if variant == "redraw":
        # dpaudit's own exact value (not the user's) decides it, and the design doc's accountant
        # sitting below it is reported as an inversion.
        worst = record["worst_case"]
        assert worst["exact_kind"] == "exact"
        assert worst["parameters"] == {"epsilon": 1.0, "T": 16}
        delta_at_exact = (norm.cdf(-worst["epsilon_exact"] / redraw_mu(16, 1.0) + redraw_mu(16, 1.0) / 2)
                          - math.exp(worst["epsilon_exact"])
                          * norm.cdf(-worst["epsilon_exact"] / redraw_mu(16, 1.0) - redraw_mu(16, 1.0) / 2))
        assert delta_at_exact == pytest.approx(1e-5, rel=1e-6)  # Balle & Wang's closed form
        assert worst["epsilon_exact"] > 1.0
        assert any(f.startswith("INCONSISTENCY") for f in record["findings"])
    # The reproduce command works when pasted.
    words = shlex.split(record["reproduce"])
    # ... and names the installed package's module its claims need (the command runs as pasted).
    assert words[words.index("--plugin") + 1] == "own_learner.claims"
    again = dpaudit(installed, *words[1:], "--out", str(tmp_path), "--quiet")
    assert again.returncode == code


def test_the_examples_own_tests_pass(installed) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(EXAMPLE / "tests")], env=installed, capture_output=True,
                          text=True, timeout=900, cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "7 passed" in proc.stdout
