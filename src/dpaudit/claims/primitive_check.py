"""What the claim driver does with named primitives (``Claim(primitives=[...])``).

At every grid point each declared pair's inputs are run once with the primitives recorded
(:func:`dpaudit.greybox.primitives.record_release`, one seed for both), and four checks follow:
the same sequence of calls on both inputs (:data:`INVARIANCE_STATEMENT`); the values reaching each
call within its declared sensitivity (:data:`SENSITIVITY_STATEMENT`); every primitive reached
(:data:`REACHED_STATEMENT`); and the release a post-processing of the primitives' outputs, tested
by a served replay (:data:`POSTPROCESSING_STATEMENT`; one replay per input at one seed, so a rare
branch the seed does not take is not seen). A failure blocks ``holds`` and never decides
``violated`` on its own. The release is accounted from the primitives' own laws (Laplace
``D_k / b_k``, Gaussian noise multiplier ``sigma_k / D_k``, discrete Laplace as dp-accounting's
event), composed by :func:`dpaudit.formal.noise_schedules.compose`, the largest over every recorded
input, and labelled :data:`TRUSTED`: the laws are taken on trust, and the served replay tests the
post-processing on the pairs.

The four checks and the accounting in full: docs/greybox-notes.md#primitive-check
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from dpaudit.claims.evidence import (EvidenceOrigin, EvidenceOrigins, LemmaCheck, NoiseFamily,
                                     PointEvidence, PrimitivesRecord)
from dpaudit.claims.verdict import format_parameters
from dpaudit.greybox.primitives import Primitive, PrimitiveCall, Recording, record_release

__all__ = ["primitive_evidence", "with_primitives", "primitive_checks", "accounted_epsilon",
           "point_primitives",
           "TRUSTED", "TRUSTED_SOURCE", "INVARIANCE_STATEMENT", "SENSITIVITY_STATEMENT",
           "REACHED_STATEMENT", "POSTPROCESSING_STATEMENT"]

#: The evidence origin of an accountant computed from the named primitives.
TRUSTED = ("trusted primitives: accounted from the named primitives' laws, not read from their "
           "code")
#: ``PointEvidence.accountant_source.origin`` of such an accountant.
TRUSTED_SOURCE = EvidenceOrigin.TRUSTED_PRIMITIVES.value

INVARIANCE_STATEMENT = ("the named primitives are called in the same sequence (path, family, "
                        "scale, shape, declared sensitivity) on neighbouring inputs given the "
                        "same seed")
SENSITIVITY_STATEMENT = ("the values reaching each named primitive move by at most its declared "
                         "sensitivity between neighbouring inputs (l1 for Laplace, l2 for "
                         "Gaussian)")
POSTPROCESSING_STATEMENT = ("the release's output is a post-processing of the named primitives' "
                            "outputs: with every primitive call answered by the other input's "
                            "values (same seed), each input of a declared pair gives the other "
                            "input's output")
REACHED_STATEMENT = ("every named primitive is called by the release, with a numeric value, "
                     "scale and sensitivity")

#: Relative slack of the comparisons (floating-point order).
RTOL = 1e-9
#: Findings kept per point.
MAX_FINDINGS = 5


def _short(site: str) -> str:
    path, _, line = site.rpartition(":")
    return "/".join(path.split("/")[-2:]) + ":" + line


def _arr_text(a: np.ndarray | None) -> str:
    if a is None:
        return "none"
    if a.size and np.all(a == a.reshape(-1)[0]):
        return f"{float(a.reshape(-1)[0]):.6g}"
    return np.array2string(a.reshape(-1)[:6], precision=6) + ("..." if a.size > 6 else "")


def _distance(c0: PrimitiveCall, c1: PrimitiveCall) -> float:
    d = (np.asarray(c0.value, float) - np.asarray(c1.value, float)).reshape(-1)
    return float(np.sqrt(np.sum(d * d)) if c0.family == "gaussian" else np.abs(d).sum())


def _finding(kind: str, site: str, what: str, v0: str, v1: str) -> dict[str, Any]:
    return {"kind": kind, "site": site, "what": what, "data0": v0, "data1": v1}


def _compare(r0: Recording, r1: Recording, primitives: Sequence[Primitive]
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """(invariance findings, sensitivity findings, largest distance/declared ratio) of a pair."""
    inv: list[dict[str, Any]] = []
    sens: list[dict[str, Any]] = []
    worst = 0.0
    a, b = r0.calls, r1.calls
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b):
            c, on = (b[i], "data1") if i >= len(a) else (a[i], "data0")
            inv.append(_finding(
                "call", c.site, f"primitive call {i + 1} ({c.path}) at {_short(c.site)} is made "
                f"on {on} only ({len(a)} calls on data0, {len(b)} on data1): the control flow "
                "depends on the data", c.path if on == "data0" else "no call",
                c.path if on == "data1" else "no call"))
            break
        c0, c1 = a[i], b[i]
        if c0.path != c1.path:
            inv.append(_finding("call", c0.site, f"primitive call {i + 1} is {c0.path} at "
                                f"{_short(c0.site)} on data0 and {c1.path} at {_short(c1.site)} "
                                "on data1: the control flow depends on the data",
                                c0.path, c1.path))
            break
        if c0.problem or c1.problem:
            continue  # said by the reach check
        if c0.shape != c1.shape:
            inv.append(_finding("shape", c0.site, f"primitive call {i + 1} ({c0.path}) at "
                                f"{_short(c0.site)} gets a value of shape {c0.shape} on data0 and "
                                f"{c1.shape} on data1: its shape depends on the data",
                                str(c0.shape), str(c1.shape)))
            break
        s0, s1 = np.asarray(c0.scale, float), np.asarray(c1.scale, float)
        if s0.shape != s1.shape or not np.allclose(s0, s1, rtol=RTOL, atol=0.0):
            inv.append(_finding("scale", c0.site, f"primitive call {i + 1} ({c0.path}) at "
                                f"{_short(c0.site)} has scale {_arr_text(s0)} on data0 and "
                                f"{_arr_text(s1)} on data1: its noise scale depends on the data",
                                _arr_text(s0), _arr_text(s1)))
        assert c0.sensitivity is not None and c1.sensitivity is not None
        if not math.isclose(c0.sensitivity, c1.sensitivity, rel_tol=RTOL, abs_tol=0.0):
            inv.append(_finding("declared sensitivity", c0.site, f"primitive call {i + 1} "
                                f"({c0.path}) at {_short(c0.site)} declares sensitivity "
                                f"{c0.sensitivity:.6g} on data0 and {c1.sensitivity:.6g} on "
                                "data1: the declared sensitivity depends on the data",
                                f"{c0.sensitivity:.6g}", f"{c1.sensitivity:.6g}"))
        declared = min(c0.sensitivity, c1.sensitivity)
        dist = _distance(c0, c1)
        ratio = dist / declared if declared > 0 else (math.inf if dist > 0 else 0.0)
        worst = max(worst, ratio)
        if dist > declared * (1 + RTOL) + 1e-12:
            norm = primitives[c0.index].norm
            sens.append(_finding(
                "sensitivity", c0.site, f"the values reaching primitive call {i + 1} "
                f"({c0.path}) at {_short(c0.site)} are {_arr_text(c0.value)} on data0 and "
                f"{_arr_text(c1.value)} on data1: they move by {dist:.6g} ({norm}), above the "
                f"declared sensitivity {declared:.6g}", f"{dist:.6g}", f"{declared:.6g}"))
    return inv, sens, worst


def _flat(x: Any) -> tuple[list[float] | None, list[str]]:
    """A release's output as numbers (``None`` with its text when it has non-numbers)."""
    nums: list[float] = []
    texts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k in sorted(v, key=repr):
                texts.append(repr(k))
                walk(v[k])
            return
        if isinstance(v, (list, tuple)):
            texts.append(f"<{len(v)}>")
            for e in v:
                walk(e)
            return
        if hasattr(v, "detach") and hasattr(v, "numpy"):  # a torch tensor, without importing it
            v = v.detach().cpu().numpy()
        arr = np.asarray(v)
        texts.append(str(arr.shape))
        if arr.dtype.kind in "biuf":
            nums.extend(arr.astype(float).ravel().tolist())
        else:
            texts.append(repr(arr.tolist()))
    walk(x)
    return nums, texts


def _postprocessing(mechanism: Any, d: tuple[Any, Any], r: tuple[Recording, Recording],
                    primitives: Sequence[Primitive], seed: int) -> list[dict[str, Any]]:
    """Check (d) of the module docstring on one pair whose two inputs made the same calls."""
    out: list[dict[str, Any]] = []
    for this, other in ((1, 0), (0, 1)):
        if r[other].failure or r[this].failure:
            return out
        served = record_release(mechanism, d[this], primitives, seed=seed,
                                serve=r[other].returns)
        if served.failure:
            out.append(_finding("post-processing", "<output>", f"data{this} under a served "
                                f"replay of data{other}'s primitive outputs: {served.failure}",
                                "", ""))
            break
        got, want = _flat(served.output), _flat(r[other].output)
        same = got[1] == want[1] and len(got[0]) == len(want[0]) and bool(
            np.allclose(got[0], want[0], rtol=RTOL, atol=1e-12))
        if same:
            continue
        if got[1] != want[1] or len(got[0]) != len(want[0]):
            where, a, b = "its structure", str(want[1])[:60], str(got[1])[:60]
        else:
            i = int(np.argmax(~np.isclose(got[0], want[0], rtol=RTOL, atol=1e-12)))
            where, a, b = f"output number {i + 1}", f"{want[0][i]:.6g}", f"{got[0][i]:.6g}"
        out.append(_finding(
            "post-processing", "<output>", f"with every named primitive returning data{other}'s "
            f"values, data{this} gives a different output from data{other} ({where}: {a} on "
            f"data{other}, {b} on data{this}): the data reaches the output outside the named "
            "primitives, so their laws do not account the release", a, b))
        break
    return out


def _pieces(calls: Sequence[PrimitiveCall], factor: float
            ) -> tuple[list[Any], list[dict[str, Any]]]:
    """The noise schedules (``dpaudit.noise``) of ``calls`` (identical calls grouped as
    releases) and their rows for the record."""
    from dpaudit.formal.noise_schedules import GaussianNoise, LaplaceNoise

    groups: Counter[tuple[str, float, float]] = Counter()
    for c in calls:
        if c.problem or c.sensitivity is None or c.sensitivity == 0.0:
            continue  # a problem is the reach check's; sensitivity 0: no privacy cost
        groups[(c.family, float(np.min(c.scale)), float(c.sensitivity))] += 1
    pieces, rows = [], []
    for (family, scale, sens), k in groups.items():
        if family == NoiseFamily.DISCRETE_LAPLACE:  # accounted by accounted_epsilon, as its own event
            s = math.ceil(sens - 1e-12)
            rows.append({"family": family, "scale": scale, "sensitivity": sens, "calls": k,
                         "integer_sensitivity": s, "per_call": s / scale,
                         "noise_multiplier": None})
            continue
        kind = LaplaceNoise if family == NoiseFamily.LAPLACE else GaussianNoise
        arg = {"scale": scale} if family == NoiseFamily.LAPLACE else {"sigma": scale}
        pieces.append(kind(**arg, sensitivity=sens / factor, releases=k))
        rows.append({"family": family, "scale": scale, "sensitivity": sens, "calls": k,
                     "per_call": (sens / scale) if family == NoiseFamily.LAPLACE else None,
                     "noise_multiplier": (scale / sens) if family == NoiseFamily.GAUSSIAN
                     else None})
    return pieces, rows


def accounted_epsilon(calls: Sequence[PrimitiveCall], delta: float, neighbours: str
                      ) -> tuple[float | None, list[dict[str, Any]], str]:
    """epsilon(delta) of ``calls`` composed from the primitives' laws (module docstring), the
    pieces, and a description; ``None`` when no call carries a privacy cost."""
    from dpaudit.formal.noise_schedules import compose, distance_factor

    bad = [c for c in calls if not c.problem and np.any(np.asarray(c.scale) <= 0)]
    if bad:
        return math.inf, [], (f"a non-positive noise scale {_arr_text(bad[0].scale)} at "
                              f"{_short(bad[0].site)}: no privacy")
    pieces, rows = _pieces(calls, distance_factor(neighbours))
    discrete = [r for r in rows if r["family"] == NoiseFamily.DISCRETE_LAPLACE]
    if not pieces and not discrete:
        return None, rows, "no primitive call carries a privacy cost"
    if not discrete:
        eps = float(compose(pieces).epsilon(delta, neighbours=neighbours))
    else:
        eps = _with_discrete(pieces, discrete, delta, neighbours)
    text = ("; ".join(f"{r['calls']} {r['family']} call(s) at scale {r['scale']:.6g}, declared "
                      f"sensitivity {r['sensitivity']:.6g}" for r in rows)
            + f", composed by dpaudit (dp-accounting) under {neighbours}")
    return eps, rows, text


def _with_discrete(pieces: list[Any], discrete: list[dict[str, Any]], delta: float,
                   neighbours: str) -> float:
    """epsilon(delta) of the pieces plus discrete Laplace calls: dp-accounting's
    ``DiscreteLaplaceDpEvent(1 / t, s)`` (integer distance ``s``, read as a distance) composed
    with the other pieces' distance events by the guarded accountant, capped by the pure
    composition (the sum of the pure pieces' epsilons) when no piece is Gaussian."""
    import dp_accounting

    from dpaudit.formal.accounting import epsilon_of_event
    from dpaudit.formal.noise_schedules import GaussianNoise, compose

    events = [compose(pieces).dp_event(neighbours=neighbours)] if pieces else []
    for r in discrete:
        event = dp_accounting.dp_event.DiscreteLaplaceDpEvent(1.0 / r["scale"],
                                                              r["integer_sensitivity"])
        events += [event] * r["calls"]
    eps = float(epsilon_of_event(dp_accounting.ComposedDpEvent(events), delta))
    if not any(isinstance(p, GaussianNoise) for p in pieces):
        pure = sum(r["calls"] * r["per_call"] for r in discrete) + sum(
            p.epsilon(0.0, neighbours=neighbours) for p in pieces)
        eps = min(eps, float(pure))
    return eps


def primitive_evidence(primitives: Sequence[Primitive], mechanism: Any,
                       pairs: Sequence[tuple[Any, Any]], *, neighbours: str, delta: float,
                       seed: int) -> PrimitivesRecord:
    """The record of one grid point (module docstring): ``pairs`` checked, ``calls`` recorded per
    input, ``called`` (indices of the named primitives reached), ``invariance`` / ``sensitivity`` /
    ``reach`` findings, ``worst_ratio`` (largest distance / declared sensitivity), ``epsilon``
    (accounted, or None), ``pieces`` and ``accountant`` (its description)."""
    described = [p.describe() for p in primitives]
    if not pairs:
        return PrimitivesRecord(primitives=described, pairs=0, origin=TRUSTED, epsilon=None,
                                failure="no declared pairs: the values reaching the primitives "
                                "cannot be compared, nothing is accounted from them")
    inv: list[dict[str, Any]] = []
    sens: list[dict[str, Any]] = []
    reach: list[dict[str, Any]] = []
    post: list[dict[str, Any]] = []
    worst = 0.0
    eps_max: float | None = None
    text, rows = "", []
    called: set[int] = set()
    calls_per_input = []
    for k, (d0, d1) in enumerate(pairs):
        r0 = record_release(mechanism, d0, primitives, seed=seed)
        r1 = record_release(mechanism, d1, primitives, seed=seed)
        for label, r in (("data0", r0), ("data1", r1)):
            calls_per_input.append(len(r.calls))
            if r.failure:
                reach.append(_finding("failure", "<release>", f"{r.failure} on {label} of "
                                      f"declared pair {k + 1} under the recording", label, ""))
            for c in r.calls:
                called.add(c.index)
                if c.problem and len(reach) < MAX_FINDINGS:
                    reach.append(_finding("non-numeric", c.site, f"primitive {c.path} called at "
                                          f"{_short(c.site)} on {label} of declared pair {k + 1}: "
                                          f"{c.problem}", label, ""))
            eps, r_rows, r_text = accounted_epsilon(r.calls, delta, neighbours)
            if eps is not None and (eps_max is None or eps > eps_max):
                eps_max, rows, text = eps, r_rows, r_text
        i, s, w = _compare(r0, r1, primitives)
        worst = max(worst, w)
        same_calls = not any(f["kind"] in ("call", "shape") for f in i)
        pp = (_postprocessing(mechanism, (d0, d1), (r0, r1), primitives, seed)
              if same_calls and len(r0.calls) else [])
        for f in i + s + pp:
            f["pair"] = k
        inv += i
        sens += s
        post += pp
    missing = [p.path for j, p in enumerate(primitives) if j not in called]
    return PrimitivesRecord(primitives=described, pairs=len(pairs), origin=TRUSTED,
                            calls=calls_per_input, called=sorted(called), missing=missing,
                            invariance=inv[:MAX_FINDINGS], sensitivity=sens[:MAX_FINDINGS],
                            reach=reach[:MAX_FINDINGS], postprocessing=post[:MAX_FINDINGS],
                            worst_ratio=worst, epsilon=eps_max, pieces=rows, accountant=text)


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def with_primitives(acc: float | None, source: str, text: str,
                    rec: PrimitivesRecord | Mapping[str, Any]) -> tuple[float | None, str, str]:
    """The point's accountant given the primitives' record: theirs when the claim has none, else
    the larger of the two (each must be at or below the claim for ``holds``)."""
    rec = PrimitivesRecord.of(rec)
    eps = rec.epsilon
    if eps is None:
        return acc, source, text
    mine = f"{TRUSTED}: {rec.accountant or ''}"
    if acc is None or eps > acc:
        extra = (f" (the claim's accountant gives {acc:.4g})" if acc is not None else "")
        return float(eps), TRUSTED_SOURCE, mine + extra
    return acc, source, text + f" (the named primitives' laws give {eps:.4g})"


def primitive_checks(plans: Sequence[Any], findings: list[str]) -> list[LemmaCheck]:
    """The three checks of the module docstring over every point with a primitives record
    (``PointEvidence.primitives``); none when no point has one."""
    recs = [(p, p.evidence.primitives) for p in plans if p.evidence.primitives is not None]
    if not recs:
        return []
    kind = "named primitives recorded on both inputs of each declared pair (same seed)"
    checked = [(p, r) for p, r in recs if r.pairs]
    if not checked:
        findings.append("Named primitives were given but the claim declares no pairs: nothing "
                        "is checked or accounted from them.")
        return []
    out: list[LemmaCheck] = []
    calls = sum(sum(r.calls or []) for _, r in checked)
    called = set().union(*(set(r.called or []) for _, r in checked))
    names = checked[0][1].primitives or []
    never = [names[j] for j in range(len(names)) if j not in called]
    reach_hit = [(p, r) for p, r in checked if r.reach]
    if never or reach_hit:
        if never:
            detail = (f"{len(never)} named primitive(s) never called at any audited point: "
                      + "; ".join(never) + " (a wrong path, or a function bound before the audit "
                      "such as `from module import function`)")
            at: dict[str, Any] = {}
        else:
            p, r = reach_hit[0]
            detail = "; ".join(f["what"] for f in (r.reach or [])[:3])
            at = {"parameters": dict(p.parameters)}
        findings.append(f"Named primitives: {detail}. Nothing can be accounted from a primitive "
                        "that is not reached with numbers, so no holds can rest on them.")
        out.append(LemmaCheck(REACHED_STATEMENT, "violated", examples=calls,
                              counterexample=dict(at, detail=detail),
                              details={"kind": kind, "points": len(checked)}))
    else:
        out.append(LemmaCheck(REACHED_STATEMENT, "holds", examples=calls,
                              details={"kind": kind, "points": len(checked)}))
    for statement, key, tail in (
            (INVARIANCE_STATEMENT, "invariance", "A fixed noise schedule does not describe such "
             "a release, so no holds can rest on an accountant."),
            (SENSITIVITY_STATEMENT, "sensitivity", "The primitives' declared sensitivity does "
             "not cover what the data moves, so their accounting certifies nothing."),
            (POSTPROCESSING_STATEMENT, "postprocessing", "The named primitives' laws account "
             "only what passes through them, so their accounting certifies nothing here.")):
        hit = [(p, r) for p, r in checked if getattr(r, key)]
        if not hit:
            out.append(LemmaCheck(statement, "holds", examples=calls,
                                  worst_ratio=(max(_or(r.worst_ratio, 0.0) for _, r in checked)
                                               if key == "sensitivity" else None),
                                  details={"kind": kind, "points": len(checked)}))
            continue
        p, r = hit[0]
        found = getattr(r, key)
        words = "; ".join(f["what"] for f in found[:3])
        findings.append(f"At ({format_parameters(p.parameters)}), declared pair "
                        f"{int(found[0].get('pair', 0)) + 1}: {words}. {tail}")
        out.append(LemmaCheck(statement, "violated", examples=calls,
                              worst_ratio=(r.worst_ratio if key == "sensitivity" else None),
                              counterexample={"parameters": dict(p.parameters), "detail": words,
                                              "findings": list(found)},
                              details={"kind": kind, "points": len(hit)}))
    return out


def point_primitives(primitives: Sequence[Primitive], mechanism: Any,
                     pairs: Sequence[tuple[Any, Any]], accountant: tuple[float | None, str, str],
                     evidence: PointEvidence, *, neighbours: str, delta: float, seed: int
                     ) -> tuple[tuple[float | None, str, str], PointEvidence]:
    """The hook of a user claim's point plan: record and account the named primitives (module
    docstring) and return the point's accountant ``(epsilon, source, text)``
    (:func:`with_primitives`) with ``evidence`` carrying the record (``primitives``) and its
    origin (``origins``)."""
    rec = primitive_evidence(primitives, mechanism, pairs, neighbours=neighbours, delta=delta,
                             seed=seed)
    evidence = evidence.with_(primitives=rec)
    out = with_primitives(*accountant, rec)
    if rec.epsilon is not None:
        origins = evidence.origins or EvidenceOrigins()
        which = "accountant" if out[1] == TRUSTED_SOURCE else "primitives"
        evidence = evidence.with_(origins=origins.with_(**{which: TRUSTED}))
    return out, evidence
