"""Asi, Feldman, Koren & Talwar, *Near-Optimal Algorithms for Private Online Optimization in the
Realizable Regime*, ICML 2023 (PMLR 202, appendices A-D; ``afkt23.txt``): nine privacy claims.
Modules, in the order every paper package lists them (``README.md`` beside this file gives the
claims, the reading choices, how each number is obtained, the verdicts and the limits):

* ``claims``: the published privacy claims exactly as printed, as data (relation, release, lemmas).
* ``ranges``: the stated range of every grid parameter, with the sentence of the paper it rests on.
* ``pairs``: the neighbouring streams the audits use, and why each is the worst case.
* ``exact``: the exact or certified epsilon of the release on those pairs, and the accountants.
* ``lemmas``: sampled checks (Hypothesis, exact evaluation) of the lemmas the proofs rely on.
* ``smt_lemmas``: SMT encodings of the same lemmas; counterexamples replay through the code.
* ``plans``: the audited grid of every claim and what the claim driver runs at each point.
* ``audit``: the declarations for the claim driver; importing the module registers the claims.

Modules of this paper only (why each is its own: docs/paper-readings.md#afkt23-package-modules):
* ``mechanism_plans``: ``plans`` for DP-FTRL and the two mechanisms (closed forms of the noise).
* ``gamma``: Algorithm 5's calibration at any gamma of Theorems 6 and 7, and its phase jumps.
* ``lower_bound``: Theorem 5 as a utility-based privacy alarm (evidence from regret, no pair).
* ``severity``: how much a verdict matters, from the same witnesses as the evidence.
* ``statistics``: row-wise statistics of released index sequences for the empirical tests.
"""
