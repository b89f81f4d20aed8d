"""Whether the noise reaches the output as drawn: no clip, comparison or other non-linear
operation applied to a draw before it is added to the value it noises.

An additive-noise accountant (``GaussianNoise``, ``LaplaceNoise``, trees) describes a release whose
draws are added, as drawn and possibly rescaled or summed, to data-dependent values; whatever the
code does *after* that addition is post-processing and keeps the guarantee. Clipping the draw itself
(``np.clip(z, -4 sigma, 4 sigma)``) or branching on it (``np.where(z > c, raw, x + z)``) is not
post-processing: it puts atoms or a raw value into the output with small probability, which no
accountant of the noise covers and which a law derived from a few replays may not see. Tracing the
draws (:class:`~dpaudit.greybox.replay.TracedNoise`) shows every ufunc applied to a draw before it
is combined with anything else; :func:`noise_transforms` lists the non-linear ones by site. The
trace follows numpy ufuncs on the draw: a draw turned into a plain array first (``np.asarray(z)``)
or into a Python float leaves the trace, and what is done to it then is not seen.
"""

from __future__ import annotations

from typing import Any

from dpaudit.greybox.replay import Mechanism, ReplayGenerator
from dpaudit.greybox.sources import run_release

__all__ = ["noise_transforms"]


def noise_transforms(mechanism: Mechanism, data: Any, *, seed: int) -> list[str] | None:
    """The non-linear operations applied to the release's draws before they are added to
    anything, as ``"clip at file:line"`` (empty: none seen), from one traced run on ``data``;
    None when the traced run fails (the trace then shows nothing)."""
    g = ReplayGenerator(seed, trace=True)
    try:
        run_release(mechanism, data, 1, g)
    except Exception:
        return None
    out: list[str] = []
    for index, name in g.transforms:
        site = g.draws[index].site if 0 <= index < len(g.draws) else "<unknown>"
        text = f"{name} on the draw made at {site}"
        if text not in out:
            out.append(text)
    return out
