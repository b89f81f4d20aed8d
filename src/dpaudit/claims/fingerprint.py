"""A behavioural fingerprint of a claim declaration: what its code *does*, for the resume key.

A saved audit may be reused only while the code that produced it is unchanged (issue 32, item 3).
Hashing files misses code with no file (a notebook, ``python -c``, stdin), a release re-registered
under the same id by a running script, and behaviour that lives in modules nobody hashed. The
fingerprint hashes what the declaration yields at every grid point: the claimed values, the
accountant, the exact values, the evidence text, the declared pairs, the lemma bounds and the
release's outputs on each audited pair (:data:`FINGERPRINT_PAIRS` of them, including the first
pairs of a declared strategy) for a fixed small seed and :data:`FINGERPRINT_RUNS` runs, with
numpy's and Python's global RNGs seeded too (and restored after). A release that draws from a
generator of its own gives other outputs every time, so its fingerprint never matches: such a
claim is never resumed, which is the safe side.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import numpy as np

__all__ = ["behaviour_fingerprint", "FINGERPRINT_RUNS", "FINGERPRINT_PAIRS"]

#: Runs of the release per input, and audited pairs per grid point, the fingerprint draws.
FINGERPRINT_RUNS = 8
FINGERPRINT_PAIRS = 4


def _bytes(value: Any) -> bytes:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return repr(value).encode()
    if arr.dtype.kind in "biufc":
        return f"{arr.dtype.str}{arr.shape}".encode() + np.ascontiguousarray(arr).tobytes()
    return repr(arr.tolist() if arr.dtype.kind != "V" else value).encode()


def behaviour_fingerprint(declaration: Any) -> str:
    """SHA-256 of what ``declaration`` (an object with ``grid``, ``plan`` and ``claim``, see
    :mod:`dpaudit.claims.driver`) yields under a fixed quick context (module docstring).
    Exceptions of the user's code propagate: the caller treats them as "no fingerprint"."""
    from dpaudit.blackbox.pair_search import is_strategy, search_pairs
    from dpaudit.claims.context import BUDGETS, AuditContext

    ctx = AuditContext(BUDGETS["quick"], 0, 0.05)
    digest = hashlib.sha256(repr(declaration.claim).encode())
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        for params in declaration.grid(ctx):
            plan = declaration.plan(params, ctx)
            digest.update(repr((sorted(plan.parameters.items()), plan.claimed_epsilon,
                                plan.claimed_delta, plan.exact, plan.exact_upper,
                                plan.exact_kind, plan.accountant,
                                sorted((k, repr(v)) for k, v in plan.evidence.items()))).encode())
            user = getattr(declaration, "user", None)
            for lemma in getattr(user, "lemmas", ()):
                digest.update(repr((lemma.statement, lemma.bound_at(params))).encode())
            emp = plan.empirical
            if emp is None:
                continue
            pairs = list(emp.pair_seeds or [])
            if is_strategy(emp.pairs):
                pairs += search_pairs(emp.pairs, lambda d0, d1: 0.0, FINGERPRINT_PAIRS, 0,
                                      vacuous=True)
            else:
                pairs += list(emp.pairs)
            for k, (d0, d1) in enumerate(pairs[:FINGERPRINT_PAIRS]):
                digest.update(repr((k, d0, d1)).encode())
                for j, data in enumerate((d0, d1)):
                    np.random.seed(1000 + 2 * k + j)
                    random.seed(1000 + 2 * k + j)
                    out = emp.mechanism(data, FINGERPRINT_RUNS,
                                        np.random.default_rng([0x5EED, k, j]))
                    digest.update(_bytes(out))
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    return digest.hexdigest()
