"""One package per paper: everything a paper contributes to dpaudit.

Each ``dpaudit.papers.<paper>`` holds the paper's published claims as data (``claims.py``), its
neighbouring streams (``pairs.py``), exact or certified epsilon computations (``exact.py``), its
sensitivity-lemma checks (``lemmas.py``), the declarations that plug those into the engine's one
claim driver (``audit.py``) and a short ``README.md``. A reviewer of one paper reads one folder.

Imports flow one way: a paper may import mechanisms, learners and the audit engine; nothing outside
``dpaudit.papers`` imports a paper (the registry discovers them by module name).
"""
