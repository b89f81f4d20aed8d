"""numpy's global functions as a draw source (``np.random.normal``, ``laplace``,
``standard_normal``, ``randn``, seeded by ``np.random.seed``).

Inside :func:`dpaudit.greybox.sources.intercepting` the attributes of :mod:`numpy.random` are
replaced: the noise functions go through the replay (record: drawn from a private
``RandomState`` that ``np.random.seed`` seeds, so a seeded release draws the same values as it
would outside; substitute; trace), every other global draw (``random_sample``, ``uniform``,
``choice``, ...) is served from that private state and listed as foreign, and ``get_state`` /
``set_state`` are guarded accesses (code that saves and restores the state can replay its own
noise). The real global state is never drawn from under replay, so a change in it on leaving the
context is a draw the patch did not see (a function bound before the audit, ``from numpy.random
import normal``, or compiled code using the global state, such as ``scipy.stats`` without a
``random_state``): it is a guarded access (the replay does not own that randomness, like bits
consumed behind the rng's guard), so no law is derived and no accountant decides.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpaudit.greybox.replay import INTERNAL_MODULES, ReplayGenerator
from dpaudit.greybox.sources.base import consume_seed

__all__ = ["NumpyGlobal", "NAME", "NOISE", "FOREIGN"]

INTERNAL_MODULES.add(__name__)

NAME = "numpy's global RNG"
#: The patched noise functions.
NOISE = ("normal", "laplace", "standard_normal", "randn")
#: Global draws served from the private state and listed as foreign.
FOREIGN = ("random_sample", "random", "ranf", "sample", "rand", "uniform", "randint",
           "random_integers", "choice", "permutation", "shuffle", "binomial", "poisson",
           "exponential", "standard_exponential", "gamma", "standard_gamma", "beta", "chisquare",
           "geometric", "gumbel", "logistic", "lognormal", "multinomial", "negative_binomial",
           "noncentral_chisquare", "noncentral_f", "pareto", "rayleigh", "standard_cauchy",
           "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf", "hypergeometric",
           "dirichlet", "logseries", "power", "f", "bytes", "multivariate_normal")


def _global_state() -> Any:
    return np.random.mtrand._rand._bit_generator.state


def same_state(a: Any, b: Any) -> bool:
    """Whether two bit-generator states (nested dicts of ints and arrays) are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


class NumpyGlobal:
    """The draw source of numpy's global functions (module docstring)."""

    name = NAME

    def open(self, g: ReplayGenerator) -> None:
        bits = np.random.Generator.bit_generator.__get__(g)
        seed = int(bits.seed_seq.generate_state(1)[0]) if hasattr(bits, "seed_seq") else 0
        self._private = np.random.RandomState(seed)
        self._saved = {name: getattr(np.random, name) for name in
                       NOISE + FOREIGN + ("seed", "get_state", "set_state")
                       if hasattr(np.random, name)}
        self._before = _global_state()
        private = self._private

        def noise(method: str) -> Callable[..., Any]:
            def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
                return g.source_draw(NAME, method, loc, scale, size,
                                     lambda: getattr(private, method)(loc, scale, size))
            return normal

        def standard_normal(size: Any = None) -> Any:
            return g.source_draw(NAME, "standard_normal", 0.0, 1.0, size,
                                 lambda: private.standard_normal(size))

        def randn(*shape: int) -> Any:
            return standard_normal(shape if shape else None)

        def seed(value: Any = None) -> None:
            consume_seed(g, NAME, value)
            private.seed(value)

        def get_state(*args: Any, **kwargs: Any) -> Any:
            g._guard(f"np.random.get_state ({NAME})")
            return private.get_state(*args, **kwargs)

        def set_state(state: Any) -> None:
            g._guard(f"np.random.set_state ({NAME})")
            private.set_state(state)

        def foreign(name: str) -> Callable[..., Any]:
            def served(*args: Any, **kwargs: Any) -> Any:
                g.foreign.append(f"np.random.{name} ({NAME})")
                return getattr(private, name)(*args, **kwargs)
            return served

        patch = {"normal": noise("normal"), "laplace": noise("laplace"),
                 "standard_normal": standard_normal, "randn": randn, "seed": seed,
                 "get_state": get_state, "set_state": set_state}
        patch.update({name: foreign(name) for name in FOREIGN if name in self._saved})
        for name, fn in patch.items():
            setattr(np.random, name, fn)

    def close(self, g: ReplayGenerator) -> None:
        for name, fn in self._saved.items():
            setattr(np.random, name, fn)
        if not same_state(self._before, _global_state()):
            g._guard(f"a draw from {NAME} the replay did not see (its state moved "
                             "outside np.random's functions: a function bound before the audit, "
                             "such as `from numpy.random import normal`, or compiled code on the "
                             "global state)")
            np.random.mtrand._rand._bit_generator.state = self._before
