"""The noise-site check of a user claim: what the data moves over all of a release's draws.

At every grid point whose accountant is a :mod:`dpaudit.noise` schedule,
:func:`dpaudit.greybox.noise_sites.pair_calibration` records, under a common seed on neighbouring
inputs, how far the value each noise draw is added to moves, and holds the whole against the
schedule's calibration: exactly, through the pair's law derived from the code, where it is
derivable, otherwise as the composition of the per-draw distances (an upper bound). A Hypothesis
search (:func:`~dpaudit.formal.lemma_search.search_lemma`) looks for the pair that maximises the
whole ratio; a ratio above 1 fails the check like a failed sensitivity lemma (it blocks
``holds``). A site above its per-draw share while the whole is within is a note, not a failure; a
whole within 1 that rests on a composition that is not a proven bound is "not checked", never a
``holds``.

The rule in full (the ratios, the search's seeds, the notes): docs/greybox-notes.md#noise-site-check
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from dpaudit.claims.evidence import LemmaCheck
from dpaudit.formal.noise_schedules import distance_factor

__all__ = ["SITE_STATEMENT", "noise_site_check"]

SITE_STATEMENT = ("what the data moves over all of the release's noise draws is within the "
                  "calibration of its schedule (recorded from the code under a common seed)")

#: What the search is handed for an infinite ratio (its quantity must be finite); the record
#: keeps the infinity.
_INFINITE = 1e300


def _short(site: str) -> str:
    path, _, line = site.rpartition(":")
    return "/".join(path.split("/")[-2:]) + ":" + line


def _fmt(x: Any) -> str:
    return "inf" if x == "inf" or (isinstance(x, float) and math.isinf(x)) else f"{x:.4g}"


def _at(params: Mapping[str, Any]) -> str:
    return "(" + (", ".join(f"{k}={v}" for k, v in params.items()) or "no parameters") + ")"


def _above_share(sites: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted((s for s in sites if s.get("ratio") is not None and s["ratio"] > 1.0 + 1e-9),
                  key=lambda s: -s["ratio"])


def _site_words(sites: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(f"noise site {_short(s['site'])} ({s['draws']} draw(s), scale "
                     f"{s['scale']:.4g}) moves its input by {s['distance']:.4g} where one "
                     f"release's calibration assumes {s['assumed']:.4g} (ratio {s['ratio']:.3g})"
                     for s in sites)


def _whole_words(whole: Mapping[str, Any]) -> str:
    return (f"the pair's {whole['quantity']} is {_fmt(whole['observed'])} against the "
            f"schedule's {whole['allowed']:.4g} (whole ratio {_fmt(whole['ratio'])}, by "
            f"{whole['method']})")


def noise_site_check(user: Any, ctx: Any, claim_id: str, points: Sequence[Mapping[str, Any]],
                     per_point: int) -> tuple[list[LemmaCheck], list[str]]:
    """The check over ``points`` (``user``: the :class:`~dpaudit.claims.user_claims.Claim`);
    ``([], [])`` when no point has both declared pairs or a pair strategy and a Gaussian or
    Laplace schedule. Returns the check and its finding sentences (module docstring)."""
    from hypothesis import strategies as st

    from dpaudit.formal.lemma_search import search_lemma
    from dpaudit.greybox.derivation import NotDerivable
    from dpaudit.greybox.noise_sites import pair_calibration, schedule_budget

    examples = 0
    worst: tuple[float, Mapping[str, Any], dict[str, Any]] | None = None
    failed = None
    reason = ""
    methods: dict[str, int] = {}
    unproven = [0]  # pairs judged by a composition that is not a proven bound
    for j, params in enumerate(points):
        if user.accountant is None:
            return [], []
        sched = user.accountant(params)
        factor = distance_factor(user.neighbours)
        if schedule_budget(sched, factor) is None:
            return [], []
        mechanism = user.release(params)
        seeds = [tuple(p) for p in (user.pairs(params) if user.pairs is not None else [])]
        strategy = (user.pair_search(params) if user.pair_search is not None
                    else user.lemmas[0].strategy(params) if user.lemmas
                    else st.sampled_from(seeds) if seeds else None)
        if strategy is None:
            return [], []
        seed = ctx.seed_for(claim_id, "noise-sites", j)
        last: dict[str, Any] = {}

        def quantity(d0: Any, d1: Any, mechanism: Any = mechanism, sched: Any = sched,
                     seed: int = seed, last: dict[str, Any] = last) -> float:
            res = pair_calibration(mechanism, d0, d1, seed=seed, schedule=sched, factor=factor)
            if isinstance(res, NotDerivable):
                last["reason"] = res.reason
                return 0.0
            if isinstance(res.whole, NotDerivable):
                last["reason"] = res.whole.reason
                return 0.0
            methods[res.whole.method] = methods.get(res.whole.method, 0) + 1
            if not res.whole.proven:
                unproven[0] += 1
            r = res.whole.ratio
            if r >= last.get("ratio", -1.0):
                last.update(ratio=r, sites=[s.to_dict() for s in res.sites],
                            whole=res.whole.to_dict())
            return min(r, _INFINITE)

        res = search_lemma(SITE_STATEMENT, strategy, quantity, 1.0, examples=per_point,
                           seed=seed, seeds=seeds)
        examples += res.examples
        if "reason" in last and "sites" not in last:
            reason = last["reason"]
            continue
        if worst is None or last.get("ratio", 0.0) > worst[0]:
            worst = (last.get("ratio", 0.0), params, last)
        if not res.holds:
            failed = (res, params, last)
            break
    if worst is None:
        return ([LemmaCheck(SITE_STATEMENT, "not checked", note="no noise site could be traced: "
                            + reason)] if reason else []), []

    def details(rec: Mapping[str, Any], note: str = "") -> dict[str, Any]:
        out = {"kind": "noise sites traced in the code", "sites": rec.get("sites"),
               "whole": rec.get("whole"), "pairs_by_method": dict(sorted(methods.items())),
               "unproven_pairs": unproven[0]}
        if note:
            out["note"] = note
        return out

    def ratio_of(r: float) -> float:
        return math.inf if r >= _INFINITE else r

    if failed is None and unproven[0]:
        _, params, rec = worst
        note = (f"the whole ratio stayed at or below 1 (largest {_fmt(ratio_of(worst[0]))} at "
                f"{_at(params)}), but on {unproven[0]} searched pair(s) no law was derived and a "
                "value a noise draw is added to contains earlier draws, where the composition of "
                "the draws is not a proven bound on what the data moves")
        return [LemmaCheck(SITE_STATEMENT, "not checked", worst_ratio=ratio_of(worst[0]),
                           examples=examples, details=details(rec), note=note)], \
            [f"The noise-site check could not certify the calibration: {note}."]
    if failed is None:
        _, params, rec = worst
        above = _above_share(rec.get("sites") or [])
        note = ""
        if above:
            note = (f"At {_at(params)} "
                    f"{_site_words(above)}, above its per-draw share, but the calibration as a "
                    f"whole covers the release on the largest pair found: "
                    f"{_whole_words(rec['whole'])}.")
        return [LemmaCheck(SITE_STATEMENT, "holds", worst_ratio=ratio_of(worst[0]),
                           examples=examples, details=details(rec, note))], \
            ([note] if note else [])
    res, params, rec = failed
    cex = dict(res.counterexample or {}, parameters=dict(params))
    if isinstance(cex.get("observed"), float) and cex["observed"] >= _INFINITE:
        cex["observed"] = cex["ratio"] = "inf"
    whole = rec.get("whole") or {}
    above = _above_share(rec.get("sites") or [])
    where = (f"; the site(s) above their per-draw share: {_site_words(above)}" if above
             else "; no single site is above its per-draw share: the draws together are")
    finding = (f"The noise calibration as a whole does not cover what the data moves at "
               f"{_at(params)}: on the largest pair "
               f"found {_whole_words(whole)}{where}; shrunk pair data0={cex.get('data0')}, "
               f"data1={cex.get('data1')}.")
    return [LemmaCheck(SITE_STATEMENT, "violated", worst_ratio=ratio_of(res.worst_ratio),
                       examples=examples, counterexample=cex, details=details(rec))], [finding]
