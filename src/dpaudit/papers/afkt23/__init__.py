"""Asi, Feldman, Koren & Talwar, "Near-Optimal Algorithms for Private Online Optimization in the
Realizable Regime", ICML 2023 (``afkt23.txt``): claims, pairs, exact laws, lemma checks, the
Theorem 5 lower-bound alarm. See ``README.md`` in this folder."""
