"""One package per paper: everything a paper contributes to dpaudit.

Every ``dpaudit.papers.<paper>`` has the same parts in the same places: ``claims`` (the published
claims as data), ``ranges`` (the stated range of every grid parameter), ``pairs`` (neighbouring
streams), ``exact`` (exact or certified epsilons and the accountants), ``lemmas`` (sampled checks
of the proofs' lemmas), ``smt_lemmas`` (their SMT encodings), ``audit`` (the declarations that plug
these into the engine's one claim driver) and ``README.md`` (claims, reading choices, evidence,
verdicts, limits, under the same headings in every paper). A module only one paper needs is listed
in that package's docstring with the reason. A reviewer of one paper reads one folder.

Imports flow one way: a paper may import mechanisms, learners and the audit engine; nothing outside
``dpaudit.papers`` imports a paper (the registry discovers them by module name).
"""
