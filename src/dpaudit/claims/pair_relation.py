"""Are two declared inputs neighbours under the claim's relation? (issue 32, item 4)

A user's :class:`dpaudit.Claim` hands dpaudit explicit pairs ``(data0, data1)``; the exact values
and the empirical bounds computed on them refute a claim only if the two inputs really are
neighbours under the declared relation. Where the data's shape says it (both inputs are lists,
tuples or arrays, read as sequences of records along their first axis), the pair is checked:

* ``replace-one``: same number of records, and one record replaced: at most one position differs,
  or (datasets as multisets) the records are the same up to one replaced record and their order;
* ``add-remove``: one record more or less: the longer input is the shorter one with one record
  inserted (anywhere), again up to order.

Inputs of other types (a number, a dict, a custom object) say nothing about records and are not
checked. Data whose neighbours the shape does not describe (zero-out neighbours, where a removed
record is a zero row of a fixed-length stream; a record spread over several rows) opt out with
``Claim(..., neighbour_check=False)``; the report then says the pairs were trusted as declared.
"""

from __future__ import annotations

from collections import Counter
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


def _key(record: Any) -> Any:
    """A hashable identity of one record (numbers compare by value: 1 and 1.0 are one record)."""
    try:
        arr = np.asarray(record)
        if arr.dtype.kind in "biuf":
            return ("number", arr.shape, tuple(arr.astype(float).ravel().tolist()))
    except (TypeError, ValueError):
        pass
    return ("object", repr(record))


def neighbour_violation(data0: Any, data1: Any, relation: str) -> str | None:
    """Why ``(data0, data1)`` are not neighbours under ``relation`` (``"replace-one"`` or
    ``"add-remove"``), or None when they are, or when their types do not say (module docstring)."""
    r0, r1 = _records(data0), _records(data1)
    if r0 is None or r1 is None:
        return None
    k0, k1 = [_key(r) for r in r0], [_key(r) for r in r1]
    c0, c1 = Counter(k0), Counter(k1)
    only0, only1 = sum((c0 - c1).values()), sum((c1 - c0).values())
    if relation == "replace-one":
        if len(k0) != len(k1):
            return (f"they hold {len(k0)} and {len(k1)} records; replace-one neighbours hold "
                    "the same number of records")
        positional = sum(a != b for a, b in zip(k0, k1))
        if positional <= 1 or only0 <= 1:
            return None
        return (f"{min(positional, only0)} records differ; replace-one neighbours differ in one "
                "record")
    if relation == "add-remove":
        if abs(len(k0) - len(k1)) != 1:
            return (f"they hold {len(k0)} and {len(k1)} records; add-remove neighbours differ by "
                    "exactly one record (one more or one less)")
        if min(only0, only1) == 0:
            return None
        return (f"besides the added or removed record, {min(only0, only1)} record(s) differ; "
                "add-remove neighbours agree on every other record")
    return None
