"""The limit for the papers' learners at their audited pairs (issue 36, item 1).

``benchmarks/oracle_ratio.py`` measures dpaudit against an oracle on DP-Sniper's suite and the
engine's zoo; this script does the same for papers' algorithms whose output law at an audited
pair is known exactly. Five rows are **linear-Gaussian releases**: on both inputs the output is
``m_b + A z`` with ``z`` i.i.d. standard Gaussian and one map ``A``, so the privacy loss is a
function of the whitened mean difference alone and its law is that of the Gaussian shift
``mu = ||(A A^T)^{+1/2} (m_1 - m_0)||`` (Dong, Roth & Su 2022, Cor. 3.3): the oracle's
Neyman-Pearson events are halfspaces along that direction, ``P = Phibar(t)``, ``Q = Phibar(t + mu)``
(``oracle_laws.gaussian_shift(mu)``, slices of width 0.01 on [-12, 12] plus two tails).

``mu`` is taken twice and must agree (to 1e-6 relative, else the script stops):

* **derived from the code** by ``dpaudit.greybox.derive_pair`` (controlled replay of the learner's
  rng: noise-free output, unit impulses, random replays that check the output is affine in the
  draws) -- the law of the code as it runs;
* **hand-derived** in the paper's module (``papers/<paper>/exact.py`` or the audit plan's
  ``mu_pair``) -- the law the audit plan reasons with.

The oracle is ``oracle_ratio.oracle_cp`` unchanged: all ``N`` runs per input on the test, the
one best event, the engine's exact one-sided Clopper-Pearson ends at ``1 - sqrt(1 - alpha)``,
and (delta > 0, a symmetric law) the pooled mirrored pair. dpaudit's side: ``dpaudit.audit``
with its defaults on the learner's release at that pair, same ``N``, alpha, claimed
``(epsilon, delta)``, over ``--seeds`` seeds.

Rows (the papers' audited grid points, ``papers/<paper>/audit.py``):

* AFKT23 Alg. 3 (DP-FTRL, ``learners.dp_ftrl.DpFtrl``), ``_ftrl_grid``'s points eps 1 (both
  sensitivity readings) and eps 4 (reading L), delta 1e-5, T 64, d 2, D 1e4. With D = 1e4 the
  projection onto the ball never binds on the pair (the plan's union bound: the slack is over
  3000 noise standard deviations, a probability that underflows to 0), so the release is
  exactly linear-Gaussian; the replay checks this on the runs it makes.
* PFCOCO Lemma 3 (window tree with Gaussian node noise, eq. (13), ``mechanisms.window_tree``),
  ``grid``'s points W 8, T 8, d 1, eps 10, delta 1e-2, log_power 1, strict reading (the claim
  holds, the leaf's exact epsilon 1.6-2.0 against the claimed 10) and W 4, T 4 alike.

One **Laplace tree counter**: ST13 Algorithm 2 (``st13/tree-aggregation``, App. A) at its grid
point T 8, d 1, eps 1, mu 1 on ``st13.pairs.tree_worst_pair`` (``z_1 = +mu`` against ``-mu``).
Line 9's node noise at d = 1 is l2-Laplace with ``|n| ~ Gamma(1, s) = Exp(s)`` and a uniform sign,
i.e. exactly ``Lap(s)``, ``s = mu (ceil(log2 T) + 1) / eps = 4``; every completed node is noised
once, and ``v_t`` (lines 12-17) sums the nodes of the set bits of ``t``: one new node per step, so
the eight releases are an injective linear image of eight independently noised nodes, and leaf 1
lies in four of them ([1], [1,2], [1..4], [1..8]), each moved by ``2 mu = 2``. That is exactly
``oracle_laws.laplace_product([2.0] * 4, 4.0)`` (the law of the engine zoo's "tree-correct (T 8)"
with shift 2 instead of 1), whose epsilon ``4 * 2 / 4 = 2`` is ``st13.exact.pair_epsilon`` (the
script checks it). The replay of ``dpaudit.greybox`` does not derive this law (Gamma magnitude
times a random sign is not a linear map of one draw); the test checks it against runs instead.

Usage (the committed table)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/oracle_learners.py --samples 200000 --seeds 20 \\
        --write-docs

It rewrites the block between the ``oracle-learners`` markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

import dpaudit
from dpaudit.greybox import NotDerivable, derive_pair

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_laws as L  # noqa: E402
from oracle_ratio import DOC, _f, law_epsilon, oracle_cp, write_docs  # noqa: E402

BEGIN, END = "<!-- oracle-learners:begin -->", "<!-- oracle-learners:end -->"
#: Largest relative gap between the code-derived and the hand-derived mu.
MU_RTOL = 1e-6


@dataclass(frozen=True)
class LearnerRow:
    """A paper's learner on an audited pair: its release, the claim, the hand-derived mu."""

    paper: str
    name: str
    mechanism: Callable[[Any, int, np.random.Generator], np.ndarray]
    data0: Any
    data1: Any
    claim: float
    delta: float
    mu_hand: float
    alpha: float = 0.05
    #: an exact law other than a Gaussian shift (``mu_hand`` is then the pair's hand-derived
    #: epsilon, checked against the law's)
    law: Callable[[], L.Law] | None = None


def _ftrl_row(reading: str, epsilon: float = 1.0) -> LearnerRow:
    """AFKT23 Alg. 3 at the audit plan's pair (``afkt23.mechanism_plans.ftrl_plan``): linear losses
    ``g = L e1`` every round against ``-L e1`` at round 1; ``mu = 2 L sqrt(#nodes containing
    leaf 1) / sigma`` (the noisy tree nodes over [1, 2^j] are the only ones the pair shifts)."""
    from dpaudit.learners.dp_ftrl import DpFtrl, dp_ftrl_parameters
    from dpaudit.learners.losses import LinearLoss
    from dpaudit.mechanisms.tree_aggregation import nodes_containing

    p = dp_ftrl_parameters(epsilon, 1e-5, 64, 2, D=1e4, sensitivity_reading=reading)
    used = len(nodes_containing(1, p.T - 1))
    g = np.zeros(p.d)
    g[0] = p.L
    s0 = [LinearLoss(g) for _ in range(p.T)]
    s1 = list(s0)
    s1[0] = LinearLoss(-g)
    return LearnerRow("afkt23", f"DP-FTRL (Alg. 3) eps {epsilon:g} T 64 d 2, Delta = {reading}", DpFtrl(p), s0, s1,
                      p.epsilon, p.delta, 2.0 * p.L * math.sqrt(used) / p.sigma)


def _window_row(W: int, T: int, boundary: str) -> LearnerRow:
    """PFCOCO Lemma 3, eq. (13) with ``ln(2/delta)`` (log_power 1) at the oldest protected leaf;
    ``mu`` from ``pfcoco.exact.gaussian_release_mu`` (``shift sqrt(a^T (B B^T)^+ a) / sigma``)."""
    from dpaudit.claims import WindowScope
    from dpaudit.mechanisms.window_tree import paper_gaussian_noise
    from dpaudit.papers.pfcoco import exact as ex
    from dpaudit.papers.pfcoco.plans import window_tree_mechanism
    from dpaudit.papers.pfcoco.pairs import tree_pair

    eps, delta = 10.0, 1e-2
    scope = WindowScope(boundary=boundary)
    d0, d1 = tree_pair(scope, W, T, 1, 1.0)
    i = scope.protected_positions(T, W)[0]
    noise = paper_gaussian_noise(eps, delta, 1.0, W, log_power=1)
    return LearnerRow("pfcoco", f"window tree Gaussian (Lemma 3) W {W} T {T} {boundary}",
                      window_tree_mechanism(W, noise), d0, d1, eps, delta,
                      ex.gaussian_release_mu(W, T, i, 1.0, noise.scale))


def st13_tree_row() -> LearnerRow:
    """ST13 Algorithm 2 at T 8, d 1, eps 1, mu 1 (module docstring: exactly the product law of
    four Laplace(4) nodes shifted by 2); ``mu_hand`` here is ``st13.exact.pair_epsilon``."""
    from dpaudit.mechanisms.st13_tree_aggregation import st13_node_scale
    from dpaudit.mechanisms.tree_aggregation import max_nodes_per_leaf
    from dpaudit.papers.st13.exact import pair_epsilon
    from dpaudit.papers.st13.pairs import tree_mechanism, tree_worst_pair

    T, eps, mu = 8, 1.0, 1.0
    s = st13_node_scale(mu, eps, T)
    count = max_nodes_per_leaf(T)
    z0, z1 = tree_worst_pair(T, 1, mu)
    return LearnerRow("st13", "tree aggregation (Alg. 2) T 8 d 1", tree_mechanism(T, 1, mu, eps),
                      z0, z1, eps, 0.0, pair_epsilon(count, 2 * mu, s),
                      law=lambda: L.laplace_product([2 * mu] * count, s))


def rows() -> list[LearnerRow]:
    return [_ftrl_row("L"), _ftrl_row("2L"), _ftrl_row("L", 4.0), _window_row(8, 8, "strict"),
            _window_row(4, 4, "strict"), st13_tree_row()]


def derived_mu(row: LearnerRow) -> float:
    """``mu`` of the law derived from the code (greybox replay); ValueError if not derivable."""
    pair = derive_pair(row.mechanism, row.data0, row.data1, seed=0)
    if isinstance(pair, NotDerivable):
        raise ValueError(f"{row.name}: no law derived from the code: {pair.reason}")
    if pair.family != "gaussian":
        raise ValueError(f"{row.name}: derived a {pair.family} law, expected gaussian")
    A = pair.law0.A
    diff = pair.law1.mean - pair.law0.mean
    # mu^2 = diff^T (A A^T)^+ diff = ||v||^2 for the minimum-norm v with A v = diff
    v, *_ = np.linalg.lstsq(A, diff, rcond=None)
    if not np.allclose(A @ v, diff, atol=1e-9 * max(1.0, float(np.abs(diff).max()))):
        return math.inf
    return float(np.linalg.norm(v))


def measure(row: LearnerRow, samples: int, seeds: int) -> dict[str, Any]:
    if row.law is None:
        mu_code: float | None = derived_mu(row)
        if not math.isclose(mu_code, row.mu_hand, rel_tol=MU_RTOL):
            raise SystemExit(f"{row.name}: mu derived from the code {mu_code!r} != hand-derived "
                             f"{row.mu_hand!r}")
        law = L.gaussian_shift(mu_code)
    else:
        mu_code, law = None, row.law()
    rec: dict[str, Any] = {"row": row, "mu_code": mu_code,
                           "pair_eps": law_epsilon(law, row.delta)}
    if row.law is not None and not math.isclose(rec["pair_eps"], row.mu_hand, rel_tol=1e-6):
        raise SystemExit(f"{row.name}: the law's epsilon {rec['pair_eps']!r} != the paper "
                         f"module's {row.mu_hand!r}")
    # the Gaussian shift is symmetric (the pooled mirrored pair, delta > 0 only, as oracle_ratio)
    rec["oracle"], rec["p"], rec["q"] = oracle_cp(law, samples, row.alpha, row.delta,
                                                  row.law is None)
    t0 = time.perf_counter()
    rec["bounds"] = np.array([
        dpaudit.audit(row.mechanism, row.data0, row.data1, epsilon=row.claim, delta=row.delta,
                      samples=samples, alpha=row.alpha, seed=s).epsilon_lower_bound
        for s in range(seeds)])
    rec["seconds"] = time.perf_counter() - t0
    return rec


def _mu(mu: float | None) -> str:
    return "Laplace product law" if mu is None else f"{mu:.4g}"


def table(recs: list[dict[str, Any]], samples: int, seeds: int, seconds: float) -> str:
    lines = [f"Generated by `OPENBLAS_NUM_THREADS=1 python benchmarks/oracle_learners.py "
             f"--samples {samples} --seeds {seeds} --write-docs` ({time.strftime('%Y-%m-%d')}, "
             f"dpaudit {dpaudit.__version__}, {seconds / 60:.1f} min on the shared 2-core "
             f"machine). {samples:.0e} runs per input, dpaudit's defaults on the learner's whole "
             f"release, seeds 0-{seeds - 1}, alpha 0.05; oracle as in the table above (the best "
             "halfspace of the exact Gaussian-shift law, all runs on the test, the same "
             "Clopper-Pearson test and pooled mirrored pair, mean over 2000 simulated test "
             "splits). `mu` is derived from the code by `dpaudit.greybox.derive_pair` and equals "
             "the paper module's hand-derived value to 1e-6 relative; the ST13 row's law is "
             "`oracle_laws.laplace_product([2] * 4, 4)` (the script's docstring says why it is "
             "exactly Algorithm 2's at this pair; its epsilon equals `st13.exact.pair_epsilon`).",
             "",
             "| paper | learner at its audited pair | claim (eps, delta) | mu | pair epsilon | "
             "oracle mean | dpaudit mean (min) | ratio | best event P, Q |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rec in recs:
        row, b = rec["row"], rec["bounds"]
        mean = float(np.mean(b))
        ratio = mean / rec["oracle"] if rec["oracle"] > 0 else math.nan
        lines.append(f"| {row.paper} | {row.name} | ({_f(row.claim)}, {_f(row.delta)}) | "
                     f"{_mu(rec['mu_code'])} | {_f(rec['pair_eps'])} | {_f(rec['oracle'])} | "
                     f"{_f(mean)} ({_f(float(b.min()))}) | {ratio:.3f} | "
                     f"{rec['p']:.3g}, {rec['q']:.3g} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=None, help="substrings of row names")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    recs = []
    for row in rows():
        if args.only and not any(s in row.name for s in args.only):
            continue
        rec = measure(row, args.samples, args.seeds)
        recs.append(rec)
        print(f"{row.name}: mu {_mu(rec['mu_code'])} oracle {_f(rec['oracle'])} dpaudit mean "
              f"{_f(float(np.mean(rec['bounds'])))} ({rec['seconds']:.0f} s)", flush=True)
    block = table(recs, args.samples, args.seeds, time.perf_counter() - t0)
    print(block)
    if args.write_docs:
        if BEGIN not in DOC.read_text():
            raise SystemExit(f"{DOC}: markers {BEGIN} / {END} not found")
        write_docs(block, BEGIN, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
