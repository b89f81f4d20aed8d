"""The noise-site check of a user claim: what reaches each noise call, against the calibration.

For every grid point whose accountant is a :mod:`dpaudit.noise` schedule (its noise scale and the
sensitivity it assumes), :func:`dpaudit.greybox.noise_sites.site_distances` records, under a common
seed on neighbouring inputs, how far the value each noise draw is added to moves, and a Hypothesis
search (:func:`~dpaudit.formal.lemma_search.search_lemma`) looks for the pair that maximises the
ratio to the sensitivity the calibration assumes at that site, seeded with the declared pairs and
searching ``Claim.pair_search`` (else the pairs of the claim's first lemma). A ratio above 1 fails
the check like a failed sensitivity lemma (it blocks ``holds``), with the shrunk pair and the site
named; no user-written lemma is needed (issue 34, item 3).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dpaudit.claims.evidence import LemmaCheck
from dpaudit.formal.noise_schedules import distance_factor

__all__ = ["SITE_STATEMENT", "noise_site_check"]

SITE_STATEMENT = ("each noise draw's input moves by at most the sensitivity its calibration "
                  "assumes (recorded from the code under a common seed)")


def _short(site: str) -> str:
    path, _, line = site.rpartition(":")
    return "/".join(path.split("/")[-2:]) + ":" + line


def noise_site_check(user: Any, ctx: Any, claim_id: str, points: Sequence[Mapping[str, Any]],
                     per_point: int) -> tuple[list[LemmaCheck], list[str]]:
    """The check over ``points`` (``user``: the :class:`~dpaudit.claims.user_claims.Claim`);
    ``([], [])`` when no point has both declared pairs or a pair strategy and a schedule."""
    from hypothesis import strategies as st

    from dpaudit.formal.lemma_search import search_lemma
    from dpaudit.greybox.derivation import NotDerivable
    from dpaudit.greybox.noise_sites import calibration_ratio, site_distances, worst_ratio

    examples = 0
    worst: tuple[float, Mapping[str, Any], Any] | None = None
    failed = None
    reason = ""
    for j, params in enumerate(points):
        if user.accountant is None:
            return [], []
        sched = user.accountant(params)
        per_unit = calibration_ratio(sched, distance_factor(user.neighbours))
        if per_unit is None:
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

        def quantity(d0: Any, d1: Any, mechanism: Any = mechanism, per_unit: Any = per_unit,
                     seed: int = seed, last: dict[str, Any] = last) -> float:
            sites = site_distances(mechanism, d0, d1, seed=seed, per_unit=per_unit)
            if isinstance(sites, NotDerivable):
                last["reason"] = sites.reason
                return 0.0
            if not any(x.ratio is not None for x in sites):
                last["reason"] = ("no noise draw of the schedule's kind is added to a value "
                                  "dpaudit can see (the noise may reach the output through a "
                                  "matrix product)")
                return 0.0
            r = worst_ratio(sites)
            if r >= last.get("ratio", -1.0):
                last.update(ratio=r, sites=[s.to_dict() for s in sites])
            return r

        res = search_lemma(SITE_STATEMENT, strategy, quantity, 1.0, examples=per_point,
                           seed=seed, seeds=seeds)
        examples += res.examples
        if "reason" in last and "sites" not in last:
            reason = last["reason"]
            continue
        if worst is None or res.worst_ratio > worst[0]:
            worst = (res.worst_ratio, params, last.get("sites"))
        if not res.holds:
            failed = (res, params, last.get("sites"))
            break
    if worst is None:
        return ([LemmaCheck(SITE_STATEMENT, "not checked", note="no noise site could be traced: "
                            + reason)] if reason else []), []
    if failed is None:
        return [LemmaCheck(SITE_STATEMENT, "holds", worst_ratio=worst[0], examples=examples,
                           details={"kind": "noise sites traced in the code",
                                    "sites": worst[2]})], []
    res, params, sites = failed
    cex = dict(res.counterexample or {}, parameters=dict(params))
    bad = max((s for s in sites or [] if s.get("ratio") is not None),
              key=lambda s: s["ratio"], default=None)
    where = ""
    if bad is not None:
        where = (f" at noise site {_short(bad['site'])} (scale {bad['scale']:.4g}): its input "
                 f"moves by {bad['distance']:.4g} where the calibration assumes "
                 f"{bad['assumed']:.4g} (ratio {bad['ratio']:.3g}; the largest pair found)")
    finding = (f"The noise calibration does not cover what reaches the noise calls at "
               f"({', '.join(f'{k}={v}' for k, v in params.items())}){where}; shrunk pair "
               f"data0={cex.get('data0')}, data1={cex.get('data1')}.")
    return [LemmaCheck(SITE_STATEMENT, "violated", worst_ratio=res.worst_ratio,
                       examples=examples, counterexample=cex,
                       details={"kind": "noise sites traced in the code", "sites": sites})], \
        [finding]
