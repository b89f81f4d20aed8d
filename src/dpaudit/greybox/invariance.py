"""Invariance: a release's noise calls and public values must not depend on the data.

Record the release on ``data0`` (its draws ``z``), then replay the same standardised draws on the
neighbour ``data1``, both under one seed. For an additive-noise accountant to describe the release,
the sequence of noise calls must be the same on both: same site (the line that draws), draw source,
family, shape and scale, call by call; and every value the code marks public
(:func:`dpaudit.greybox.same`) must be equal. A call made on one input only (control flow that
branches on the data), a scale or shape that depends on the data (a noise scale of
``1 / len(data)``; a histogram over ``np.unique(data)``) or a public value that differs is a
**finding** naming the site and both values. The accountant assumes a fixed noise schedule, so no
``holds`` can rest on it after such a finding (dp-recorder's invariance check, PETS 2026).

Soundness notes. A finding blocks ``holds``; it never decides ``violated`` (that needs an epsilon).
The check is conservative for code whose control flow branches on *noisy* values (the sparse
vector technique stops at a noisy threshold crossing, which the same draws may reach at another
step on the neighbour): such code is flagged though it may be private, never the reverse. An
output whose shape differs between the inputs is reported here too (the shape alone reveals which
input ran).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.greybox.replay import Draw, Mechanism, ReplayGenerator
from dpaudit.greybox.sources import run_release

__all__ = ["InvarianceFinding", "Invariance", "check_invariance", "INVARIANCE_STATEMENT"]

#: The statement of the invariance check.
INVARIANCE_STATEMENT = ("the release's noise calls (site, source, family, shape, scale) and the "
                        "values it marks public are the same on neighbouring inputs given the "
                        "same draws")

#: Relative slack of a scale comparison (floating-point order).
RTOL = 1e-9
#: Findings kept per pair.
MAX_FINDINGS = 5


@dataclass(frozen=True)
class InvarianceFinding:
    """One difference between the two inputs: ``kind`` (``"call"``, ``"shape"``, ``"scale"``,
    ``"family"``, ``"public"``, ``"output shape"``), ``site``, ``what`` (a sentence naming both
    values), ``value0`` and ``value1`` (as text)."""

    kind: str
    site: str
    what: str
    value0: str
    value1: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "site": self.site, "what": self.what,
                "data0": self.value0, "data1": self.value1}


@dataclass(frozen=True)
class Invariance:
    """The check on one pair: ``findings`` (empty: invariant), ``calls`` compared, ``failure``
    (why the replay could not run, else ``""``; a failure is not a finding)."""

    findings: tuple[InvarianceFinding, ...] = ()
    calls: int = 0
    public: int = 0
    failure: str = ""
    sources: tuple[str, ...] = field(default=())

    @property
    def invariant(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "calls": self.calls, "public_values": self.public,
                "failure": self.failure, "sources": list(self.sources),
                "findings": [f.to_dict() for f in self.findings]}


def _short(site: str) -> str:
    path, _, line = site.rpartition(":")
    return "/".join(path.split("/")[-2:]) + ":" + line


def _scale_text(d: Draw) -> str:
    s = np.asarray(d.scale, dtype=float)
    if s.size and np.all(s == s.reshape(-1)[0]):
        return f"{float(s.reshape(-1)[0]):.6g}"
    return np.array2string(s.reshape(-1)[:6], precision=6) + ("..." if s.size > 6 else "")


def _call_text(d: Draw) -> str:
    return f"{d.family} {d.method} of shape {d.shape} at scale {_scale_text(d)}"


def _equal(a: Any, b: Any) -> bool:
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.shape(a) == np.shape(b) and np.array_equal(a, b))
        out = a == b
        return bool(np.all(out)) if not isinstance(out, bool) else out
    except Exception:
        return repr(a) == repr(b)


def _text(v: Any) -> str:
    t = repr(v) if not isinstance(v, np.ndarray) else np.array2string(v, threshold=8)
    return t if len(t) <= 80 else t[:77] + "..."


def _compare_calls(d0: list[Draw], d1: list[Draw]) -> list[InvarianceFinding]:
    out: list[InvarianceFinding] = []
    for i in range(max(len(d0), len(d1))):
        if len(out) >= MAX_FINDINGS:
            break
        if i >= len(d0) or i >= len(d1):
            d, on, off = (d1[i], "data1", "data0") if i >= len(d0) else (d0[i], "data0", "data1")
            out.append(InvarianceFinding(
                "call", d.site, f"noise call {i + 1} ({_call_text(d)}, {d.source}) at "
                f"{_short(d.site)} is made on {on} only ({len(d0)} calls on data0, {len(d1)} on "
                f"data1): the control flow depends on the data",
                _call_text(d) if on == "data0" else "no call", _call_text(d) if on == "data1"
                else "no call"))
            break
        a, b = d0[i], d1[i]
        if (a.site, a.source) != (b.site, b.source):
            out.append(InvarianceFinding(
                "call", a.site, f"noise call {i + 1} is made at {_short(a.site)} ({a.source}) on "
                f"data0 and at {_short(b.site)} ({b.source}) on data1: the control flow depends "
                "on the data", a.site, b.site))
            break
        if a.family != b.family or a.method != b.method:
            out.append(InvarianceFinding(
                "family", a.site, f"noise call {i + 1} at {_short(a.site)} draws {a.family} "
                f"({a.method}) on data0 and {b.family} ({b.method}) on data1", str(a.family),
                str(b.family)))
            break
        if a.shape != b.shape:
            out.append(InvarianceFinding(
                "shape", a.site, f"noise call {i + 1} at {_short(a.site)} has shape {a.shape} on "
                f"data0 and {b.shape} on data1: its shape depends on the data (a domain read from "
                "the data)", str(a.shape), str(b.shape)))
            break
        sa, sb = np.asarray(a.scale, float), np.asarray(b.scale, float)
        if not np.allclose(sa, sb, rtol=RTOL, atol=0.0):
            out.append(InvarianceFinding(
                "scale", a.site, f"noise call {i + 1} at {_short(a.site)} has scale "
                f"{_scale_text(a)} on data0 and {_scale_text(b)} on data1: its noise scale "
                "depends on the data", _scale_text(a), _scale_text(b)))
    return out


def _compare_public(p0: list[tuple[str, Any, str]], p1: list[tuple[str, Any, str]]
                    ) -> list[InvarianceFinding]:
    out: list[InvarianceFinding] = []
    for i in range(max(len(p0), len(p1))):
        if len(out) >= MAX_FINDINGS:
            break
        if i >= len(p0) or i >= len(p1):
            name, value, site = p1[i] if i >= len(p0) else p0[i]
            on = "data1" if i >= len(p0) else "data0"
            out.append(InvarianceFinding(
                "public", site, f"the public value '{name}' at {_short(site)} is declared on {on} "
                f"only ({_text(value)})", _text(value) if on == "data0" else "absent",
                _text(value) if on == "data1" else "absent"))
            break
        (n0, v0, s0), (n1, v1, s1) = p0[i], p1[i]
        if n0 != n1:
            out.append(InvarianceFinding(
                "public", s0, f"the public values declared differ: '{n0}' at {_short(s0)} on "
                f"data0, '{n1}' at {_short(s1)} on data1", n0, n1))
            break
        if not _equal(v0, v1):
            out.append(InvarianceFinding(
                "public", s0, f"the public value '{n0}' at {_short(s0)} is {_text(v0)} on data0 "
                f"and {_text(v1)} on data1: it depends on the data", _text(v0), _text(v1)))
    return out


def _output_shape(raw: Any) -> tuple[int, ...] | str:
    try:
        from dpaudit.greybox.run_layouts import as_runs
        return tuple(as_runs(raw, 1).shape)
    except Exception:
        return str(np.shape(raw)) if not isinstance(raw, dict) else "structured"


def check_invariance(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int) -> Invariance:
    """Record ``mechanism`` on ``data0``, replay its draws on ``data1`` (module docstring).

    Parameters
    ----------
    mechanism
        ``mechanism(data, n, rng)``, the release (run with ``n = 1``).
    data0, data1
        The neighbouring inputs.
    seed
        The seed of both runs.
    """
    g0 = ReplayGenerator(seed)
    try:
        raw0 = run_release(mechanism, data0, 1, g0)
    except Exception as exc:
        return Invariance(failure=f"the release failed on data0 ({type(exc).__name__}: "
                                  f"{str(exc)[:100]})")
    z = np.zeros(g0.scalars)
    for d in g0.draws:
        z[d.offset:d.offset + d.size] = np.asarray(d.z, dtype=float).reshape(-1)

    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        have = z[offset:offset + n] if offset < z.size else np.zeros(0)
        # draws beyond data0's (a call on data1 only): zeros, the comparison names the call
        return np.concatenate([have, np.zeros(n - have.size)]).reshape(shape)

    g1 = ReplayGenerator(seed, supply)
    try:
        raw1 = run_release(mechanism, data1, 1, g1)
    except Exception as exc:
        return Invariance(failure=f"the release failed on data1 replaying data0's draws "
                                  f"({type(exc).__name__}: {str(exc)[:100]})")
    findings = _compare_calls(list(g0.draws), list(g1.draws))
    findings += _compare_public(list(g0.public), list(g1.public))
    s0, s1 = _output_shape(raw0), _output_shape(raw1)
    if s0 != s1:
        findings.append(InvarianceFinding(
            "output shape", "<output>", f"the output has shape {s0} on data0 and {s1} on data1: "
            "its shape depends on the data, so the shape alone reveals which input ran",
            str(s0), str(s1)))
    sources = tuple(dict.fromkeys(d.source for d in list(g0.draws) + list(g1.draws)))
    return Invariance(tuple(findings[:MAX_FINDINGS]), max(len(g0.draws), len(g1.draws)),
                      max(len(g0.public), len(g1.public)), "", sources)
