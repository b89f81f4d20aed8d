"""Formal evidence: exact and accountant epsilons, sensitivity lemmas, SMT proofs, floating point.

What belongs here: privacy accounting of noise schedules (:mod:`.accounting`: closed forms and the
guarded dp-accounting bridge), property-based sensitivity checks and their Hypothesis strategies
(:mod:`.sensitivity`, :mod:`.strategies`), symbolic lemma checks with z3 (:mod:`.smt`) and the
exact floating-point support audit of Laplace samplers (:mod:`.floating_point`).

Who may import it: the claim driver, the papers, user code. It imports the mechanisms and
learners (the loss classes its strategies draw from), the evidence records of
:mod:`dpaudit.evidence` and dpaudit's base modules; never :mod:`dpaudit.claims` (which imports
this package), the black-box statistics, the papers, the reports or the CLI.
"""
