"""torch as a draw source: ``torch.normal``, ``torch.randn``, ``torch.randn_like``,
``Tensor.normal_`` and ``torch.distributions.Normal`` / ``Laplace`` ``.sample`` / ``.rsample``, on
torch's global generator or a ``torch.Generator`` made in the release, CPU tensors only.

Imported by :mod:`dpaudit.greybox.sources` only when torch is already in ``sys.modules``: dpaudit
never imports torch on its own. Inside :func:`dpaudit.greybox.sources.intercepting` the noise
functions go through the replay (recording the real torch draw), seeds are noted as the numpy
sources note them, generator state accesses are guarded and every other torch draw is listed as
foreign. Draws the patches cannot see (a function bound before the audit, compiled code, a state
written back) are caught by lockstep generator states: a guarded access, so no law is derived.
Out of reach, and answered conservatively: CUDA / MPS generators, compiled code, and tracing of
torch arithmetic. Versions: written against torch 2.14.

What is patched, the lockstep check and what is out of reach:
docs/greybox-notes.md#torch-draw-source.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from dpaudit.greybox.replay import INTERNAL_MODULES, ReplayGenerator
from dpaudit.greybox.sources.base import active, consume_seed

__all__ = ["TorchSource", "ReplayTorchGenerator", "NAME", "GENERATOR_NAME", "NOISE", "FOREIGN"]

INTERNAL_MODULES.add(__name__)

NAME = "torch's global generator"
GENERATOR_NAME = "torch.Generator (made in the release)"
#: The intercepted noise entry points.
NOISE = ("torch.normal", "torch.randn", "torch.randn_like", "Tensor.normal_",
         "torch.distributions.Normal.sample", "torch.distributions.Normal.rsample",
         "torch.distributions.Laplace.sample", "torch.distributions.Laplace.rsample")
#: torch functions served and listed as foreign when they draw.
FOREIGN = ("rand", "rand_like", "randint", "randint_like", "randperm", "bernoulli", "multinomial",
           "poisson", "binomial", "normal_like")
#: ``Tensor`` methods served and listed as foreign when they draw.
TENSOR_FOREIGN = ("uniform_", "bernoulli_", "random_", "exponential_", "cauchy_", "log_normal_",
                  "geometric_", "bernoulli", "multinomial")
#: ``torch.nn.functional`` functions served and listed as foreign when they draw.
FUNCTIONAL_FOREIGN = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                      "feature_alpha_dropout", "rrelu", "gumbel_softmax")

#: How the noise-as-drawn check names a torch draw (:mod:`dpaudit.greybox.noise_transforms`).
UNTRACED = ("torch arithmetic, which dpaudit does not trace (a clip or a branch on the draw "
            "cannot be ruled out),")

_BASE = torch.Generator
_CPU = torch.device("cpu")


class _Meta(type(_BASE)):  # type: ignore[misc]
    """``isinstance(x, torch.Generator)`` holds for a generator made before the audit while the
    name is patched."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _BASE)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _BASE)


class ReplayTorchGenerator(_BASE, metaclass=_Meta):
    """A ``torch.Generator`` made in the release under replay: its seed is noted, its state
    accesses are guarded; outside a replay it is a plain generator
    (docs/greybox-notes.md#torch-draw-source)."""

    def __init__(self, device: Any = "cpu") -> None:  # torch.Generator.__new__ takes the device
        self._g = active()
        src = _OPEN[-1] if _OPEN else None
        if src is not None and self._g is not None:
            src._owned[id(self)] = (self, _BASE.get_state(self))

    def _replay(self) -> ReplayGenerator | None:
        g = active()
        return g if g is not None and g is self._g else None

    def _guarded(self, what: str) -> None:
        g = self._replay()
        if g is not None:
            g._guard(f"Generator.{what} ({GENERATOR_NAME})")

    def manual_seed(self, seed: Any) -> "ReplayTorchGenerator":  # noqa: D102
        g = self._replay()
        if g is not None:
            consume_seed(g, GENERATOR_NAME, seed)
        _BASE.manual_seed(self, seed)
        _resync(self)
        return self

    def seed(self) -> int:  # noqa: D102
        g = self._replay()
        if g is not None:
            g.foreign.append(f"Generator.seed, a seed from the operating system ({GENERATOR_NAME})")
        out = _BASE.seed(self)
        _resync(self)
        return out

    def get_state(self) -> Any:  # noqa: D102
        self._guarded("get_state")
        return _BASE.get_state(self)

    def set_state(self, state: Any) -> "ReplayTorchGenerator":  # noqa: D102
        self._guarded("set_state")
        _BASE.set_state(self, state)
        return self

    def graphsafe_get_state(self) -> Any:  # noqa: D102
        self._guarded("graphsafe_get_state")
        return _BASE.graphsafe_get_state(self)

    def graphsafe_set_state(self, state: Any) -> Any:  # noqa: D102
        self._guarded("graphsafe_set_state")
        return _BASE.graphsafe_set_state(self, state)

    def clone_state(self) -> Any:  # noqa: D102
        self._guarded("clone_state")
        return _BASE.clone_state(self)

    def __reduce__(self) -> Any:
        self._guarded("a copy or pickle of the generator")
        return _BASE.__reduce__(self)

    def __deepcopy__(self, memo: Any) -> Any:
        self._guarded("a copy of the generator")
        return _BASE.__deepcopy__(self, memo)  # type: ignore[attr-defined]


#: The sources now open (the innermost last).
_OPEN: list["TorchSource"] = []


def _resync(gen: Any) -> None:
    src = _OPEN[-1] if _OPEN else None
    if src is not None and id(gen) in src._owned:
        src._owned[id(gen)] = (gen, _BASE.get_state(gen))


def _numpy(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().to(device=_CPU, dtype=torch.float64).numpy()
    return x


def _float_like(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class TorchSource:
    """The draw source of torch's CPU generators (docs/greybox-notes.md#torch-draw-source)."""

    name = NAME

    # -- generators: which one a call draws from, and the lockstep check ---------------------

    def _target(self, g: ReplayGenerator, gen: Any, what: str) -> tuple[Any, str] | None:
        """``(generator, source name)`` a call draws from, after the lockstep check; None when
        it is not one the replay owns (listed as foreign)."""
        if gen is None:
            gen, name = torch.default_generator, NAME
        elif id(gen) in self._owned and self._owned[id(gen)][0] is gen:
            name = GENERATOR_NAME
        else:
            g.foreign.append(f"{what} on a torch.Generator made before the audit, whose seeding "
                             "dpaudit does not see (torch)")
            return None
        if getattr(gen, "device", _CPU).type != "cpu":
            g.foreign.append(f"{what} on a {gen.device} generator (torch: only CPU draws are "
                             "intercepted)")
            return None
        self._check(g, gen)
        return gen, name

    def _expected(self, gen: Any) -> Any:
        return self._global if gen is torch.default_generator else self._owned[id(gen)][1]

    def _check(self, g: ReplayGenerator, gen: Any) -> None:
        if not torch.equal(_BASE.get_state(gen), self._expected(gen)):
            self._unseen(g, gen)
            self._sync(gen)

    def _sync(self, gen: Any) -> None:
        state = _BASE.get_state(gen)
        if gen is torch.default_generator:
            self._global = state
        else:
            self._owned[id(gen)] = (gen, state)

    def _unseen(self, g: ReplayGenerator, gen: Any) -> None:
        which = NAME if gen is torch.default_generator else GENERATOR_NAME
        g._guard(f"a draw from {which} the replay did not see (its state moved outside torch's "
                 "patched functions: a function bound before the audit, such as `from torch "
                 "import normal`, compiled code, or a state saved and written back through "
                 "torch.default_generator)")

    # -- noise ------------------------------------------------------------------------------

    def _noise(self, what: str, method: str, loc: Any, scale: Any, shape: tuple[int, ...],
               dtype: Any, gen: Any, real: Callable[[Any], Any], devices: tuple[Any, ...] = ()
               ) -> Any:
        """A noise call through the replay, as a CPU tensor of ``dtype`` and ``shape``;
        ``real(gen)`` makes torch's own draw from ``gen`` (record mode, or a call not owned)."""
        g = active()
        if g is None or g is not self._g:
            return real(gen)
        for dev in devices:
            if dev is not None and torch.device(dev).type != "cpu":
                g.foreign.append(f"{what} on device {dev} (torch: only CPU draws are "
                                 "intercepted)")
                return real(gen)
        target = self._target(g, gen, what)
        if target is None:
            return real(gen)
        gen_t, name = target
        if not (dtype.is_floating_point and dtype.itemsize <= 8):
            g.foreign.append(f"{what} of dtype {dtype} (torch)")
            return real(gen)
        if dtype != torch.float64:  # the code's arithmetic rounds at this dtype's level
            rec = g._record
            rec.precision = max(rec.precision, float(torch.finfo(dtype).eps))
        value = g.source_draw(name, method, _numpy(loc), _numpy(scale), shape,
                              lambda: _numpy(real(gen)))
        self._sync(gen_t)
        if g.trace:
            # torch arithmetic is not traced: what the code does to this draw before adding it
            # is unseen, so the noise-as-drawn check must not pass on it
            g.transforms.append((len(g.draws) - 1, UNTRACED))
        return torch.as_tensor(np.asarray(value), dtype=dtype)

    def open(self, g: ReplayGenerator) -> None:
        self._g = g
        self._owned: dict[int, tuple[Any, Any]] = {}
        self._user_state = _BASE.get_state(torch.default_generator)
        bits = np.random.Generator.bit_generator.__get__(g)
        seed = int(bits.seed_seq.generate_state(1)[0]) if hasattr(bits, "seed_seq") else 0
        _BASE.manual_seed(torch.default_generator, seed)
        self._global = _BASE.get_state(torch.default_generator)
        dists = torch.distributions
        self._saved: list[tuple[Any, str, Any]] = []
        for owner, names in ((torch, ("normal", "randn", "randn_like", "manual_seed", "seed",
                                      "get_rng_state", "set_rng_state", "Generator") + FOREIGN),
                             (torch.random, ("manual_seed", "seed", "get_rng_state",
                                             "set_rng_state")),
                             (torch.Tensor, ("normal_",) + TENSOR_FOREIGN),
                             (F, FUNCTIONAL_FOREIGN),
                             (dists.Normal, ("sample", "rsample")),
                             (dists.Laplace, ("sample", "rsample"))):
            for nm in names:
                if nm in vars(owner) or hasattr(owner, nm):
                    self._saved.append((owner, nm, getattr(owner, nm)))
        orig = {(o, n): f for o, n, f in self._saved}
        t_normal, t_randn = orig[(torch, "normal")], orig[(torch, "randn")]
        t_randn_like, n_ = orig[(torch, "randn_like")], orig[(torch.Tensor, "normal_")]
        t_seed = orig[(torch, "manual_seed")]
        src = self

        def normal(*args: Any, **kw: Any) -> Any:
            names = ("mean", "std", "size")
            given = dict(zip(names, args))
            if len(args) > 3 or any(k in kw for k in given):
                return src._unparsed("torch.normal", t_normal, args, kw)
            given.update({k: kw[k] for k in names if k in kw})
            mean, std, size = given.get("mean", 0.0), given.get("std", 1.0), given.get("size")
            gen, out = kw.get("generator"), kw.get("out")
            rest = {k: v for k, v in kw.items() if k not in names + ("generator",)}
            tensors = [x for x in (mean, std) if isinstance(x, torch.Tensor)]
            if size is not None and not tensors and _float_like(mean) and _float_like(std):
                shape = tuple(int(s) for s in size)
                dtype = kw.get("dtype") or torch.get_default_dtype()
                devices: tuple[Any, ...] = (kw.get("device"),)
            elif size is None and tensors and all(isinstance(x, torch.Tensor) or _float_like(x)
                                                  for x in (mean, std)):
                shape = tuple(torch.broadcast_shapes(*[x.shape for x in tensors]))
                dtype = tensors[0].dtype if len(tensors) == 1 else torch.promote_types(
                    mean.dtype, std.dtype)
                devices = tuple(x.device for x in tensors)
            else:
                return src._unparsed("torch.normal", t_normal, args, kw)

            def real(gn: Any) -> Any:
                return t_normal(*args, **{**kw, "generator": gn}) if gn is not None else \
                    t_normal(*args, **kw)
            t = src._noise("torch.normal", "normal", mean, std, shape, dtype, gen, real, devices)
            return src._finish(t, out, rest)

        def randn(*size: Any, **kw: Any) -> Any:
            if "size" in kw:
                size = (kw["size"],)
            dims = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) \
                else size
            try:
                shape = tuple(int(s) for s in dims)
            except (TypeError, ValueError):
                return src._unparsed("torch.randn", t_randn, size, kw)
            gen = kw.get("generator")
            dtype = kw.get("dtype") or torch.get_default_dtype()
            rest = {k: v for k, v in kw.items() if k not in ("size", "generator")}

            def real(gn: Any) -> Any:
                return t_randn(*size, **{**kw, "generator": gn}) if gn is not None else \
                    t_randn(*size, **kw)
            t = src._noise("torch.randn", "standard_normal", 0.0, 1.0, shape, dtype, gen, real,
                           (kw.get("device"),))
            return src._finish(t, kw.get("out"), rest)

        def randn_like(input: Any, **kw: Any) -> Any:  # noqa: A002
            gen = kw.get("generator")
            dtype = kw.get("dtype") or input.dtype

            def real(gn: Any) -> Any:
                return t_randn_like(input, **{**kw, "generator": gn}) if gn is not None else \
                    t_randn_like(input, **kw)
            t = src._noise("torch.randn_like", "standard_normal", 0.0, 1.0, tuple(input.shape),
                           dtype, gen, real, (kw.get("device"), input.device))
            return src._finish(t, None, kw)

        def normal_(self: Any, mean: Any = 0.0, std: Any = 1.0, *, generator: Any = None) -> Any:
            if not (_float_like(mean) and _float_like(std)):
                return src._unparsed("Tensor.normal_", n_, (self, mean, std),
                                     {"generator": generator})

            def real(gn: Any) -> Any:
                return n_(self.detach().clone(), mean, std, generator=gn)
            t = src._noise("Tensor.normal_", "normal", mean, std, tuple(self.shape), self.dtype,
                           generator, real, (self.device,))
            return self.copy_(t)

        def manual_seed(seed: Any) -> Any:
            g2 = active()
            if g2 is src._g:
                consume_seed(g2, NAME, seed)
            out = t_seed(seed)
            src._sync(torch.default_generator)
            return out

        def os_seed() -> int:
            g.foreign.append(f"torch.seed, a seed from the operating system ({NAME})")
            out = orig[(torch, "seed")]()
            src._sync(torch.default_generator)
            return out

        def get_rng_state() -> Any:
            g._guard(f"torch.get_rng_state ({NAME})")
            return _BASE.get_state(torch.default_generator)

        def set_rng_state(state: Any) -> None:
            g._guard(f"torch.set_rng_state ({NAME})")
            _BASE.set_state(torch.default_generator, state)
            src._sync(torch.default_generator)

        uniform_ = orig[(torch.Tensor, "uniform_")]

        def dist(family: str, kind: str) -> Callable[..., Any]:
            method = "normal" if family == "Normal" else "laplace"
            what = f"torch.distributions.{family}.{kind}"

            def sample(self: Any, sample_shape: Any = torch.Size()) -> Any:
                shape = tuple(self._extended_shape(sample_shape))
                loc, scale = self.loc.expand(shape), self.scale.expand(shape)

                def real(gn: Any) -> Any:  # torch's own construction, on the unpatched calls
                    with torch.no_grad():
                        if family == "Normal":
                            return t_normal(loc, scale)
                        u = uniform_(self.loc.new(shape), torch.finfo(self.loc.dtype).eps - 1, 1)
                        return loc - scale * u.sign() * torch.log1p(-u.abs())
                with torch.no_grad():
                    t = src._noise(what, method, loc, scale, shape, self.loc.dtype, None, real,
                                   (self.loc.device,))
                if kind == "sample" or active() is not src._g:
                    return t
                # rsample: the same value, differentiable in loc and scale
                zs = (t.to(torch.float64) - loc.detach().to(torch.float64)) / torch.where(
                    scale.detach() != 0, scale.detach(), torch.ones_like(scale)).to(torch.float64)
                return self.loc + zs.to(self.loc.dtype) * self.scale
            sample.__name__ = kind
            return sample

        def foreign(owner: Any, nm: str, label: str) -> Callable[..., Any]:
            f = orig[(owner, nm)]

            def served(*args: Any, **kw: Any) -> Any:
                g2 = active()
                if g2 is not src._g:
                    return f(*args, **kw)
                gen = kw.get("generator")
                if gen is not None and id(gen) not in src._owned:
                    g2.foreign.append(f"{label} on a torch.Generator made before the audit "
                                      "(torch)")
                    return f(*args, **kw)
                target = torch.default_generator if gen is None else gen
                src._check(g2, target)
                out = f(*args, **kw)
                if not torch.equal(_BASE.get_state(target), src._expected(target)):
                    g2.foreign.append(f"{label} (torch)")
                    src._sync(target)
                return out
            served.__name__ = nm
            return served

        patch: list[tuple[Any, str, Any]] = [
            (torch, "normal", normal), (torch, "randn", randn), (torch, "randn_like", randn_like),
            (torch.Tensor, "normal_", normal_), (torch, "manual_seed", manual_seed),
            (torch.random, "manual_seed", manual_seed), (torch, "seed", os_seed),
            (torch.random, "seed", os_seed), (torch, "get_rng_state", get_rng_state),
            (torch.random, "get_rng_state", get_rng_state),
            (torch, "set_rng_state", set_rng_state),
            (torch.random, "set_rng_state", set_rng_state),
            (torch, "Generator", ReplayTorchGenerator)]
        for fam in ("Normal", "Laplace"):
            for kind in ("sample", "rsample"):
                patch.append((getattr(dists, fam), kind, dist(fam, kind)))
        for nm in FOREIGN:
            if (torch, nm) in orig:
                patch.append((torch, nm, foreign(torch, nm, f"torch.{nm}")))
        for nm in TENSOR_FOREIGN:
            if (torch.Tensor, nm) in orig:
                patch.append((torch.Tensor, nm, foreign(torch.Tensor, nm, f"Tensor.{nm}")))
        for nm in FUNCTIONAL_FOREIGN:
            if (F, nm) in orig:
                patch.append((F, nm, foreign(F, nm, f"torch.nn.functional.{nm}")))
        _OPEN.append(self)
        for owner, nm, fn in patch:
            setattr(owner, nm, fn)

    def _unparsed(self, what: str, f: Callable[..., Any], args: Any, kw: Any) -> Any:
        g = active()
        if g is self._g and g is not None:
            g.foreign.append(f"{what} called in a form dpaudit does not parse (torch)")
        return f(*args, **kw)

    @staticmethod
    def _finish(t: Any, out: Any, kw: dict[str, Any]) -> Any:
        if kw.get("requires_grad"):
            t.requires_grad_(True)
        if out is not None:
            out.resize_(t.shape).copy_(t)
            return out
        return t

    def close(self, g: ReplayGenerator) -> None:
        for owner, nm, fn in reversed(self._saved):
            setattr(owner, nm, fn)
        if _OPEN and _OPEN[-1] is self:
            _OPEN.pop()
        gens = [torch.default_generator] + [gen for gen, _ in self._owned.values()]
        for gen in gens:
            if not torch.equal(_BASE.get_state(gen), self._expected(gen)):
                self._unseen(g, gen)
                break
        _BASE.set_state(torch.default_generator, self._user_state)
