"""The privacy claims of own_learner's DP-FTRL, stated with dpaudit's public claim API.

Importing this module registers one claim per variant (the package's ``dpaudit.claims`` entry
point names it, so an installed own-learner shows them in ``dpaudit list``). Each claim says: the
released trajectory x_1..x_T is (eps, 1e-5)-DP under replace-one neighbours (one gradient replaced
by any other), for eps in {0.5, 1} and T in {4, 16}, d = 2, clip C = 1.

Evidence each claim gives dpaudit:

* the release (the learner itself) for the empirical test, on declared neighbouring pairs
  (one gradient +C e1 vs -C e1, the worst case of a clipped learner; and +10C e1 vs -10C e1,
  which only a learner that fails to clip notices);
* the noise schedule the design doc accounts for (Gaussian tree aggregation, sensitivity C per
  record), which dpaudit's accountant evaluates under replace-one;
* the law of the code (a linear map of the gradients plus Gaussian noise with the variant's
  covariance), from which dpaudit computes the exact epsilon of every declared pair;
* the per-node sensitivity lemma of the design doc, checked by a Hypothesis search.

Two more claims show what dpaudit reads from the code itself (it passes the learner its own rng,
replays the draws and derives the release's law, issue 34):

* ``dpftrl-redraw-design-law``: the redraw bug declared with the *design doc's* law (the correct
  variant's covariance), as a user who believes the design doc would. dpaudit tests that law
  against runs of the code and rejects it (the rounds are uncorrelated in the code), and the law
  derived from the code gives the exact epsilon (1.07 > 1 at T = 16);
* ``dpftrl-nolaw``: the correct learner with no law at all: the exact epsilon of every pair comes
  from the law derived from the code (0.751, as by hand).
"""

from __future__ import annotations

import dpaudit
import numpy as np
from dpaudit import Claim, Lemma, Source
from hypothesis import strategies as st

from own_learner.dpftrl import (VARIANTS, decomposition, dp_ftrl, noise_free, release_covariance,
                                sigma_for)

DELTA = 1e-5
CLIP = 1.0
ETA = 0.1
D = 2
GRID = [{"epsilon": eps, "T": T} for eps in (0.5, 1.0) for T in (4, 16)]

SOURCE = Source(title="own-learner DP-FTRL design doc", kind="design doc", version="v1.2",
                location="Sec. 3, 'Privacy'",
                quote="The released iterates are (eps, 1e-5)-DP for eps <= 1 under replace-one "
                      "neighbours, with sigma = 2C sqrt(depth) sqrt(2 ln(1.25/delta)) / eps.")


def _pair(T: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    d0 = np.zeros((T, D))
    d1 = np.zeros((T, D))
    d0[0, 0], d1[0, 0] = scale * CLIP, -scale * CLIP
    return d0, d1


def _node_sensitivity(variant: str):
    def quantity(g0, g1, params) -> float:
        a = noise_free(g0, clip=CLIP, eta=1.0, variant=variant)
        b = noise_free(g1, clip=CLIP, eta=1.0, variant=variant)
        diff = a - b  # -(prefix sums) differ; node sums are differences of prefix sums
        prefix = np.vstack([np.zeros((1, D)), -diff])
        worst = 0.0
        for t in range(1, params["T"] + 1):
            for level, j in decomposition(t):
                node = prefix[(j + 1) << level] - prefix[j << level]
                worst = max(worst, float(np.linalg.norm(node)))
        return worst
    return quantity


def _replace_one_pairs(params):
    T = params["T"]
    vec = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=D, max_size=D)
    return st.tuples(st.lists(vec, min_size=T, max_size=T), st.integers(0, T - 1), vec).map(
        lambda x: (np.array(x[0]), np.array(x[0][:x[1]] + [x[2]] + x[0][x[1] + 1:])))


def make_claim(variant: str, law: str | None = "variant", name: str | None = None) -> Claim:
    """The claim of ``variant``; ``law``: ``"variant"`` (the code's own law), ``"design"`` (the
    design doc's, i.e. the correct variant's) or None (no law: dpaudit derives it)."""
    def release(params):
        eps, T = params["epsilon"], params["T"]

        def mechanism(grads, n, rng):
            return dp_ftrl(grads, n, rng, epsilon=eps, delta=DELTA, clip=CLIP, eta=ETA,
                           variant=variant)
        return mechanism

    declared = variant if law == "variant" else "correct"

    def exact(params):
        sigma = sigma_for(params["epsilon"], DELTA, CLIP, params["T"], declared)
        return dpaudit.exact.LinearGaussian(
            mean=lambda g: noise_free(g, clip=CLIP, eta=ETA, variant=declared),
            covariance=release_covariance(params["T"], D, sigma=sigma, eta=ETA, variant=declared))

    def accountant(params):
        # What the design doc accounts for: Gaussian tree aggregation, a record contributing at
        # most C to each node on its path (dpaudit doubles it under replace-one).
        sigma = sigma_for(params["epsilon"], DELTA, CLIP, params["T"], variant)
        return dpaudit.noise.gaussian_tree(sigma=sigma, sensitivity=CLIP, T=params["T"])

    return Claim(
        id=f"own-learner/dpftrl-{name or variant}",
        statement="The DP-FTRL iterates x_1..x_T are (eps, 1e-5)-DP under replace-one neighbours"
                  + ("" if variant == "correct" else f" (variant with the '{variant}' bug)"),
        source=SOURCE,
        claimed=lambda p: (p["epsilon"], DELTA),
        neighbours="replace-one",
        grid=GRID,
        release=release,
        pairs=lambda p: [_pair(p["T"], 1.0), _pair(p["T"], 10.0)],
        accountant=accountant,
        exact=exact if law is not None else None,
        lemmas=[Lemma(statement="each tree node's sum of clipped gradients moves by <= 2C "
                                "when one gradient is replaced",
                      pairs=_replace_one_pairs, quantity=_node_sensitivity(variant),
                      bound=2 * CLIP)],
        parameter_range={"epsilon": "(0, 1]", "T": ">= 1", "d": "2 (this audit)"},
        calibration="sigma = 2C sqrt(ceil(log2 T) + 1) sqrt(2 ln(1.25/delta)) / eps per node",
        formula="(eps, 1e-5)",
        kind="learner",
    )


CLAIMS = {variant: make_claim(variant) for variant in VARIANTS}
CLAIMS["redraw-design-law"] = make_claim("redraw", law="design", name="redraw-design-law")
CLAIMS["nolaw"] = make_claim("correct", law=None, name="nolaw")
for _claim in CLAIMS.values():
    dpaudit.register_claim(_claim)
