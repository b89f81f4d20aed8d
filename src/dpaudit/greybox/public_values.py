"""Values the code declares public: ``dpaudit.greybox.same(name, value)``.

A release's parameters that must not depend on the data (a noise multiplier, a class domain, a
number of steps, a clipping bound) can be marked where the code uses them::

    scale = same("noise scale", 1.0 / epsilon)

Outside dpaudit's replay ``same`` returns ``value`` and does nothing else. Under replay it records
``(name, value, site)``, and the invariance check (:mod:`dpaudit.greybox.invariance`) requires the
same names with equal values, in the same order, on both inputs of every neighbouring pair: a value
that differs is a finding naming it, its site and both values (dp-recorder's declared parameters,
PETS 2026).
"""

from __future__ import annotations

import copy
import sys
from typing import Any, TypeVar

from dpaudit.greybox.sources.base import active

__all__ = ["same"]

T = TypeVar("T")


def same(name: str, value: T) -> T:
    """Mark ``value`` as public (the same on neighbouring inputs) and return it unchanged.

    Parameters
    ----------
    name
        What the value is, in words (it names the finding).
    value
        The value; compared with ``==`` (arrays element-wise, exactly) between the two inputs.
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"same(name, value): name must be a non-empty string, got {name!r}")
    g = active()
    if g is not None:
        frame = sys._getframe(1)
        try:
            kept = copy.deepcopy(value)
        except Exception:  # an uncopyable value is compared by its repr
            kept = repr(value)
        g._record.public.append((name, kept, f"{frame.f_code.co_filename}:{frame.f_lineno}"))
    return value
