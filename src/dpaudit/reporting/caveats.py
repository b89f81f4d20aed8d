"""The caveats every claim report prints (AUDIT-METHOD sections 3 and 5), and the one that
depends on the release: the floating-point caveat names the release's dtype when it is not
float64 (a float32 jax or torch release is not one in IEEE-754 doubles)."""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.evidence import PointEvidence

__all__ = ["CAVEATS", "caveats_for", "release_dtypes"]

#: Caveats printed in every report (AUDIT-METHOD sections 3 and 5).
CAVEATS: tuple[str, ...] = (
    "Floating-point samplers are not exactly differentially private (Mironov 2012, \"On "
    "significance of the least significant bits for differential privacy\", CCS 2012): the "
    "mechanisms audited here draw noise in IEEE-754 doubles, so every epsilon on this page is that "
    "of the idealised real-valued mechanism; an attacker who sees the raw bits of the outputs can "
    "do better. No claim in the audited papers addresses this.",
    "Exact and accountant epsilons are computed in floating point; an exact epsilon counts as a "
    "counterexample only when it exceeds the claim by more than a relative 1e-6.",
    "An empirical lower bound is a one-sided (1 - alpha) Clopper-Pearson bound with the event chosen "
    "on a training split and evaluated on a fresh split (Bonferroni-corrected). It is valid for the "
    "implementation as run, and a claim can fail in ways a finite sample does not reveal: a bound "
    "at or below the claim is not evidence that the claim holds.",
    "Gaussian-DP (mu) summaries, where shown, assume a Gaussian trade-off curve and are never used "
    "to declare a claim violated.",
)

def release_dtypes(record: Mapping[str, Any]) -> list[str]:
    """The floating-point dtypes other than float64 the audited release returned (from the
    points' empirical evidence, ``release_dtype``), sorted; empty for float64 releases."""
    found = {str(emp.release_dtype or "") for p in record.get("points", []) or []
             if (emp := PointEvidence.saved(p).empirical) is not None}
    return sorted(d for d in found if d)


def caveats_for(record: Mapping[str, Any]) -> tuple[str, ...]:
    """:data:`CAVEATS`, with the floating-point caveat naming the release's dtype when it is not
    float64 (a jax or torch release in float32 rounds its noise to 24-bit significands)."""
    dtypes = release_dtypes(record)
    if not dtypes:
        return CAVEATS
    names = " and ".join(dtypes)
    first = CAVEATS[0].replace(
        "the mechanisms audited here draw noise in IEEE-754 doubles",
        f"the release audited here returns {names}, not IEEE-754 doubles (its noise is rounded "
        f"to a much shorter significand than float64's)")
    return (first,) + CAVEATS[1:]
