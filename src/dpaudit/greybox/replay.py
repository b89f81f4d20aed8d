"""A numpy Generator that records every noise draw of a mechanism and can substitute the draws.

The grey-box hook of issue 34: dpaudit passes every mechanism its own ``rng``, so a
:class:`ReplayGenerator` passed there sees each Gaussian and Laplace draw the code makes (which
method, at which line, at which location and scale, of which shape). It can

* **record**: draw from its bit generator as a plain ``Generator`` would (same values for the same
  seed) and log each draw;
* **substitute**: return ``loc + scale * z`` with the standardised draws ``z`` supplied by the
  caller (zeros give the noise-free output, a unit impulse one column of the map from noise to
  output; see :mod:`dpaudit.greybox.derivation`);
* **trace**: return the draws as :class:`TracedNoise` arrays that record the value each draw is
  added to (see :mod:`dpaudit.greybox.noise_sites`).

Any other randomness the code asks of it (``uniform``, ``integers``, ``choice``, ``spawn``, ...) is
served from the bit generator and listed in :attr:`ReplayGenerator.foreign`: a release that draws
it is not a function of the recorded noise alone, so no law is derived from it.

The approach is dp-recorder's (PETS 2026: record the noise draws and the values passed to noise
primitives, replay them), applied to the numpy ``Generator`` interface instead of a library's own
noise primitives.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["Draw", "ReplayGenerator", "TracedNoise", "STANDARD_FAMILY"]

#: The standardised law of each substitutable method's ``z`` (``loc + scale * z``).
STANDARD_FAMILY = {"normal": "gaussian", "standard_normal": "gaussian", "laplace": "laplace",
                   "multivariate_normal": "gaussian"}

#: Generator methods that draw randomness dpaudit does not substitute (served, and listed).
_FOREIGN = ("random", "uniform", "integers", "choice", "permutation", "permuted", "shuffle",
            "binomial", "poisson", "exponential", "standard_exponential", "gamma",
            "standard_gamma", "beta", "chisquare", "geometric", "gumbel", "logistic",
            "lognormal", "multinomial", "negative_binomial",
            "noncentral_chisquare", "noncentral_f", "pareto", "rayleigh", "standard_cauchy",
            "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf", "hypergeometric",
            "dirichlet", "logseries", "power", "f", "bytes", "spawn")

#: A supplier of standardised draws: ``supply(offset, shape, family) -> array of that shape``
#: (``offset``: how many scalars were drawn before this call).
Supply = Callable[[int, tuple[int, ...], str], np.ndarray]


@dataclass(frozen=True)
class Draw:
    """One noise call: ``method`` (``"normal"``, ``"standard_normal"``, ``"laplace"``), its standard
    ``family`` (``"gaussian"`` / ``"laplace"``), ``offset`` (scalars drawn before it), ``shape``,
    ``loc`` and ``scale`` (broadcast to ``shape``), ``site`` (``file:line`` of the calling code)
    and ``z`` (the standardised values returned)."""

    method: str
    family: str
    offset: int
    shape: tuple[int, ...]
    loc: np.ndarray
    scale: np.ndarray
    site: str
    z: np.ndarray

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def _caller_site() -> str:
    frame = sys._getframe(2)  # the frame that called the Generator method
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class TracedNoise(np.ndarray):
    """A noise draw that records what it is added to (``np.add`` / ``np.subtract``) and follows
    scalar rescaling (``c * z`` keeps the trace with ``scale * |c|``). The first arithmetic result
    is a plain ndarray: tracing stops there."""

    _draw_index: int
    _factor: float
    _log: list

    def __array_finalize__(self, obj: Any) -> None:
        self._draw_index = getattr(obj, "_draw_index", -1)
        self._factor = getattr(obj, "_factor", 1.0)
        self._log = getattr(obj, "_log", [])

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        traced = [x for x in inputs if isinstance(x, TracedNoise)]
        plain = tuple(np.asarray(x) if isinstance(x, TracedNoise) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, TracedNoise) else o
                                  for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if method != "__call__" or len(traced) != 1 or len(inputs) != 2:
            return result
        me = traced[0]
        other = inputs[1] if inputs[0] is me else inputs[0]
        if ufunc in (np.add, np.subtract):
            value = np.asarray(other, dtype=np.float64)
            me._log.append((me._draw_index, me._factor, value.copy()))
        elif ufunc is np.multiply and np.ndim(other) == 0 and isinstance(result, np.ndarray):
            out = result.view(TracedNoise)
            out._draw_index, out._log = me._draw_index, me._log
            out._factor = me._factor * abs(float(other))
            return out
        return result


class ReplayGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` (``isinstance`` holds) whose ``normal``, ``standard_normal``
    and ``laplace`` draws are logged in :attr:`draws` and, when ``supply`` is given, replaced by
    ``loc + scale * supply(offset, shape, family)``; ``trace=True`` returns :class:`TracedNoise`
    draws whose additions are logged in :attr:`added` as ``(draw index, factor, value)``."""

    def __init__(self, seed: int, supply: Supply | None = None, trace: bool = False) -> None:
        super().__init__(np.random.PCG64(seed))
        self.supply = supply
        self.trace = trace
        self.draws: list[Draw] = []
        self.foreign: list[str] = []
        self.added: list[tuple[int, float, np.ndarray]] = []
        self._offset = 0

    def _draw(self, method: str, loc: Any, scale: Any, size: Any, real: Callable[[], Any]) -> Any:
        family = STANDARD_FAMILY[method]
        loc_a = np.asarray(loc, dtype=np.float64)
        scale_a = np.asarray(scale, dtype=np.float64)
        if size is None:
            shape = np.broadcast_shapes(loc_a.shape, scale_a.shape)
        else:
            shape = tuple(int(s) for s in np.atleast_1d(size))
        site = _caller_site()
        if self.supply is None:
            value = np.asarray(real(), dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(scale_a != 0, (value - loc_a) / np.where(scale_a != 0, scale_a, 1),
                             0.0)
            z = np.broadcast_to(z, shape).copy()
        else:
            z = np.asarray(self.supply(self._offset, shape, family), dtype=np.float64)
            if z.shape != shape:
                raise ValueError(f"supply returned shape {z.shape} for a draw of shape {shape}")
            value = loc_a + scale_a * z
        self.draws.append(Draw(method, family, self._offset, shape,
                               np.broadcast_to(loc_a, shape).copy(),
                               np.broadcast_to(scale_a, shape).copy(), site, z))
        self._offset += int(np.prod(shape, dtype=np.int64))
        if self.trace:
            if np.any(loc_a != 0):  # rng.normal(value, scale): the draw is added to its loc
                self.added.append((len(self.draws) - 1, 1.0, np.broadcast_to(loc_a, shape).copy()))
            out = np.array(value, dtype=np.float64).view(TracedNoise)
            out._draw_index, out._factor, out._log = len(self.draws) - 1, 1.0, self.added
            return out
        return value if size is not None or np.ndim(value) else float(value)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._draw("normal", loc, scale, size,
                          lambda: super(ReplayGenerator, self).normal(loc, scale, size))

    def standard_normal(self, size: Any = None, dtype: Any = np.float64,
                        out: Any = None) -> Any:  # noqa: D102
        if out is not None or np.dtype(dtype) != np.float64:
            self.foreign.append("standard_normal(out=/dtype=)")
            return super().standard_normal(size, dtype=dtype, out=out)
        return self._draw("standard_normal", 0.0, 1.0, size,
                          lambda: super(ReplayGenerator, self).standard_normal(size))

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._draw("laplace", loc, scale, size,
                          lambda: super(ReplayGenerator, self).laplace(loc, scale, size))


def _multivariate_normal(self: ReplayGenerator, mean: Any, cov: Any, size: Any = None,
                         check_valid: str = "warn", tol: float = 1e-8, *,
                         method: str = "svd") -> Any:
    """``mean + z @ F`` with ``z`` standard normal and ``F = sqrt(s) V^T`` from the SVD of ``cov``
    (numpy's own construction for ``method="svd"``); ``z`` is recorded or substituted like any
    other draw."""
    if method != "svd":
        self.foreign.append(f"multivariate_normal(method={method!r})")
        return np.random.Generator.multivariate_normal(self, mean, cov, size, check_valid, tol,
                                                       method=method)
    mean_a = np.asarray(mean, dtype=np.float64)
    cov_a = np.asarray(cov, dtype=np.float64)
    _, s, vh = np.linalg.svd(cov_a)
    factor = np.sqrt(s)[:, None] * vh
    lead = () if size is None else tuple(int(x) for x in np.atleast_1d(size))
    shape = lead + (mean_a.shape[-1],)
    site = _caller_site()
    if self.supply is None:
        z = np.asarray(np.random.Generator.standard_normal(self, shape), dtype=np.float64)
    else:
        z = np.asarray(self.supply(self._offset, shape, "gaussian"), dtype=np.float64)
    value = mean_a + z @ factor
    self.draws.append(Draw("multivariate_normal", "gaussian", self._offset, shape,
                           np.broadcast_to(mean_a, shape).copy(),
                           np.broadcast_to(np.sqrt(np.diag(cov_a)), shape).copy(), site, z))
    self._offset += int(np.prod(shape, dtype=np.int64))
    if self.trace:
        out = np.array(value, dtype=np.float64).view(TracedNoise)
        out._draw_index, out._factor, out._log = len(self.draws) - 1, 1.0, self.added
        return out
    return value


ReplayGenerator.multivariate_normal = _multivariate_normal  # type: ignore[method-assign]


def _foreign_method(name: str) -> Callable[..., Any]:
    def method(self: ReplayGenerator, *args: Any, **kwargs: Any) -> Any:
        self.foreign.append(name)
        return getattr(np.random.Generator, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"``Generator.{name}``, served and listed in ``foreign``."
    return method


for _name in _FOREIGN:
    if hasattr(np.random.Generator, _name):
        setattr(ReplayGenerator, _name, _foreign_method(_name))
