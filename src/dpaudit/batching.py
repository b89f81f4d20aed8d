"""Turn a one-draw-per-call sampler into the batch mechanism dpaudit audits.

Library releases are usually written as ``sampler(data) -> one output`` (OpenDP's measurements,
diffprivlib's ``randomise``, a jax-privacy privatizer step), while :func:`dpaudit.audit` and a
:class:`dpaudit.Claim`'s ``release`` want ``mechanism(data, n, rng) -> n outputs`` (leading axis
``n``). :func:`batch` makes one from the other::

    mechanism = dpaudit.batch(lambda x: meas(x))             # the sampler ignores rng
    mechanism = dpaudit.batch(my_sampler, takes_rng=True)    # my_sampler(data, rng)

``takes_rng=True`` passes the audit's generator to every call (the run is then reproducible from
the seed). Without it the sampler draws from wherever it does (numpy's global RNG, Python's
``random``, its own generator, the operating system): the audit's probe reports that
(``rng_ignored``, "not reproducible from the seed"), reseeds numpy's and Python's global RNGs in
every chunk from the chunk's own seed, and refuses parallel executors when the randomness comes
from a generator it cannot reseed. Calling a sampler once per run costs a Python call per run:
measure the runs per second (``AuditResult.sampling_seconds``) before choosing ``samples``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["batch"]


class _Batched:
    """``mechanism(data, n, rng)`` calling ``sampler`` once per run and stacking the outputs."""

    def __init__(self, sampler: Callable[..., Any], takes_rng: bool,
                 dtype: Any | None) -> None:
        self.sampler = sampler
        self.takes_rng = takes_rng
        self.dtype = dtype
        name = getattr(sampler, "__qualname__", None) or type(sampler).__name__
        self.__qualname__ = self.__name__ = f"batch({name})"

    def __call__(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.takes_rng:
            outs = [self.sampler(data, rng) for _ in range(n)]
        else:
            outs = [self.sampler(data) for _ in range(n)]
        return np.asarray(outs, dtype=self.dtype)

    def __repr__(self) -> str:
        return self.__qualname__


def batch(sampler: Callable[..., Any], *, takes_rng: bool = False,
          dtype: Any | None = None) -> Callable[[Any, int, np.random.Generator], np.ndarray]:
    """The batch mechanism ``mechanism(data, n, rng)`` of a one-draw sampler.

    Parameters
    ----------
    sampler : callable
        ``sampler(data) -> one release`` (a number, a vector, a label), or with
        ``takes_rng=True`` ``sampler(data, rng) -> one release`` drawing from ``rng``.
    takes_rng : bool
        Pass the audit's ``numpy.random.Generator`` to every call.
    dtype : numpy dtype, optional
        dtype of the stacked outputs (default: numpy's choice).

    Returns
    -------
    callable
        ``mechanism(data, n, rng) -> array`` with leading axis ``n`` (one row per call). It is
        picklable when ``sampler`` is (for the process and Dask executors).
    """
    if not callable(sampler):
        raise TypeError(f"batch() needs a callable sampler(data), got {type(sampler).__name__}")
    return _Batched(sampler, bool(takes_rng), dtype)
