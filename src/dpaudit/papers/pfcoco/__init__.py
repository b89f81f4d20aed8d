"""Projection-free window-DP constrained online convex optimisation with a window tree mechanism,
Web Intelligence 2020 (conference version, OCR; ``pfcoco-window-tree.txt``): ten claims, the
window tree and the learners under window DP (Def. 6).

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
"""
