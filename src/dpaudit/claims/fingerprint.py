"""A behavioural fingerprint of a claim declaration: what its code *does*, for the resume key.

A saved audit may be reused only while the code that produced it is unchanged.
Hashing files misses code with no file (a notebook, ``python -c``, stdin), a release re-registered
under the same id by a running script, and behaviour that lives in modules nobody hashed. The
fingerprint hashes what the declaration yields at every grid point: the claimed values, the
accountant, the exact values, the evidence text, the declared pairs, the lemma bounds and the
release's outputs on each audited pair (:data:`FINGERPRINT_PAIRS` of them, including the first
pairs of a declared strategy) for a fixed small seed and :data:`FINGERPRINT_RUNS` runs, with
numpy's and Python's global RNGs seeded too (and restored after). A release that draws from a
generator of its own gives other outputs every time, so its fingerprint never matches: such a
claim is never resumed, which is the safe side.

Outputs cannot see what the grid never runs (a lemma's quantity, ``samples``, a statistic, the
neighbour check), so the user's declaration itself is hashed too: every field of the
:class:`~dpaudit.Claim`, callables by their code (bytecode, constants, names, nested functions),
their defaults and the values their closures capture; reprs lose memory addresses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import types
from typing import Any

import numpy as np

from dpaudit.evidence_records import ExactKind

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


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: How deep captured values are followed (a closure over a function over a dataclass ...).
_MAX_DEPTH = 6


def _code_bytes(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr((code.co_names, code.co_varnames, code.co_freevars)).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if isinstance(const, types.CodeType)
                     else _ADDRESS.sub("", repr(const)).encode())
    return b"\x00".join(parts)


def declaration_bytes(value: Any, depth: int = 0) -> bytes:
    """What ``value`` (a field of a user's claim) is, as bytes: a callable by its code, defaults
    and captured values; a dataclass, list, tuple or dict by its items; numbers and arrays by
    value; anything else by its repr without memory addresses."""
    if depth > _MAX_DEPTH:
        return type(value).__qualname__.encode()
    nxt = depth + 1
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return repr(value).encode()
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return _bytes(value)
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(declaration_bytes(v, nxt) for v in value) + b"]"
    if isinstance(value, dict):
        return b"{" + b",".join(repr(k).encode() + b":" + declaration_bytes(v, nxt)
                                for k, v in value.items()) + b"}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__qualname__.encode() + declaration_bytes(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, nxt)
    func = getattr(value, "__func__", value)  # a bound method: its function
    code = getattr(func, "__code__", None)
    if isinstance(code, types.CodeType):
        parts = [_code_bytes(code), declaration_bytes(getattr(func, "__defaults__", None), nxt)]
        for cell in getattr(func, "__closure__", None) or ():
            try:
                parts.append(declaration_bytes(cell.cell_contents, nxt))
            except ValueError:  # an empty cell
                parts.append(b"<empty>")
        return b"fn(" + b";".join(parts) + b")"
    if callable(value) and hasattr(type(value), "__call__"):
        inner = getattr(value, "func", None)  # functools.partial
        if inner is not None:
            return declaration_bytes((inner, getattr(value, "args", ()),
                                      getattr(value, "keywords", {})), nxt)
    return _ADDRESS.sub("", repr(value)).encode()


def behaviour_fingerprint(declaration: Any) -> str:
    """SHA-256 of what ``declaration`` (an object with ``grid``, ``plan`` and ``claim``, see
    :mod:`dpaudit.claims.driver`) yields under a fixed quick context (module docstring).
    Exceptions of the user's code propagate: the caller treats them as "no fingerprint"."""
    from dpaudit.blackbox.pair_search import is_strategy, search_pairs
    from dpaudit.claims.context import BUDGETS, AuditContext

    ctx = AuditContext(BUDGETS["quick"], 0, 0.05)
    digest = hashlib.sha256(repr(declaration.claim).encode())
    user = getattr(declaration, "user", None)
    if user is not None:
        digest.update(declaration_bytes(user))
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        for params in declaration.grid(ctx):
            plan = declaration.plan(params, ctx)
            # the kind by its JSON word (a plain str), so the key does not depend on the
            # enum's repr
            digest.update(repr((sorted(plan.parameters.items()), plan.claimed_epsilon,
                                plan.claimed_delta, plan.exact, plan.exact_upper,
                                ExactKind(plan.exact_kind).value, plan.accountant,
                                sorted((k, repr(v)) for k, v in plan.evidence.items()))).encode())
            if plan.user_lower_bound is not None:  # only when given: other keys stay as they were
                digest.update(repr(("user_lower_bound", plan.user_lower_bound)).encode())
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
