"""Are two declared inputs neighbours under the claim's relation?

A user's :class:`dpaudit.Claim` hands dpaudit explicit pairs ``(data0, data1)``; the values computed
on them refute a claim only if the inputs really are neighbours. Where the data's shape says it
(lists, tuples or arrays: sequences of records along the first axis) the pair is checked, records
compared in order: ``replace-one``, the same length and at most one position differs;
``add-remove``, the longer input is the shorter with one record inserted anywhere. Inputs of other
types are not checked; data whose neighbours the shape does not describe opt out with
``Claim(..., neighbour_check=False)``, and the report says the pairs were trusted as declared.

Why the order counts, and which data opt out: docs/claim-api.md#neighbour-check
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["neighbour_violation"]


def _records(x: Any) -> list[Any] | None:
    """The records of ``x`` along its first axis, or None when its type does not say."""
    if isinstance(x, np.ndarray):
        return None if x.ndim == 0 else list(x)
    if isinstance(x, (list, tuple)):
        return list(x)
    return None


def _holds_nan(record: Any) -> bool:
    try:
        arr = np.asarray(record)
        return arr.dtype.kind in "fc" and bool(np.isnan(arr).any())
    except (TypeError, ValueError):
        return False


def _key(record: Any) -> Any:
    """A hashable identity of one record (numbers compare by value: 1 and 1.0 are one record)."""
    try:
        arr = np.asarray(record)
        if arr.dtype.kind in "biuf":
            return ("number", arr.shape, tuple(arr.astype(float).ravel().tolist()))
    except (TypeError, ValueError):
        pass
    return ("object", repr(record))


#: Why outputs of an add/remove pair may differ in shape, and what to declare instead: appended to
#: the black box's shape error (``runner.relation_hint``) and to the finding of a derived law whose
#: output shape depends on the data.
ADD_REMOVE_SHAPE_HINT = (
    "the claim's relation is add-remove, so the two inputs of a pair hold different numbers of "
    "records: a release whose output has one row per record (a fixed-length stream) gives "
    "them outputs of different shapes, and the shape alone reveals which input ran. If a removed record is a zero row of a stream of fixed length, declare pairs "
    "of equal length that differ in one zeroed record and pass Claim(..., neighbour_check=False); "
    "if a record is replaced, declare neighbours=\"replace-one\"")


def neighbour_violation(data0: Any, data1: Any, relation: str) -> str | None:
    """Why ``(data0, data1)`` are not neighbours under ``relation`` (``"replace-one"`` or
    ``"add-remove"``), or None when they are, or when their types do not say (module docstring)."""
    r0, r1 = _records(data0), _records(data1)
    if r0 is None or r1 is None:
        return None
    for name, records in (("data0", r0), ("data1", r1)):
        for i, rec in enumerate(records):
            if _holds_nan(rec):
                return (f"record {i} of {name} holds NaN, which equals no record, so no "
                        "neighbouring relation can be read from the pair; give finite records")
    k0, k1 = [_key(r) for r in r0], [_key(r) for r in r1]
    if relation == "replace-one":
        if len(k0) != len(k1):
            return (f"they hold {len(k0)} and {len(k1)} records; replace-one neighbours hold "
                    "the same number of records")
        positional = sum(a != b for a, b in zip(k0, k1))
        if positional <= 1:
            return None
        return (f"{positional} positions differ; replace-one neighbours differ in one record, "
                "the others in the same order")
    if relation == "add-remove":
        if abs(len(k0) - len(k1)) != 1:
            return (f"they hold {len(k0)} and {len(k1)} records; add-remove neighbours differ by "
                    "exactly one record (one more or one less)")
        short, long_ = (k0, k1) if len(k0) < len(k1) else (k1, k0)
        # Remove record j of the longer input; the fewest mismatches over j, in O(n): mismatches
        # before j (aligned as they are) plus after j (the longer one shifted by one).
        n = len(short)
        before = np.concatenate([[0], np.cumsum([a != b for a, b in zip(short, long_)])])
        after = np.concatenate([np.cumsum([a != b for a, b in
                                           zip(short[::-1], long_[::-1])])[::-1], [0]])
        moved = int(min(before[j] + after[j] for j in range(n + 1)))
        if moved == 0:
            return None
        return (f"besides the added or removed record, {moved} record(s) differ or are out of "
                "order; add-remove neighbours agree on every other record, in the same order")
    return None
