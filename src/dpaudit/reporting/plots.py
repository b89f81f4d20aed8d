"""Figures of a claim report, drawn with matplotlib's Agg canvas into PNG bytes.

Each figure is drawn only when the audit saved the data for it (``ClaimAudit.figures`` conventions
in :mod:`dpaudit.claims.record`); the evidence chart is drawn from the audited grid points.
Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``, so
rendering touches no global state and works in worker processes and without a display. PNGs are
written without a software/version stamp, so re-rendering the same JSON gives the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from dpaudit.evidence import CERTIFIED, EXACT
from dpaudit.reporting.view import as_float, format_parameters, format_value, varying_parameters

__all__ = ["Plot", "PlotError", "render_plots", "evidence_png", "histogram_png",
           "privacy_curve_png", "sensitivity_png", "regret_png", "data_uri"]

# Colour-blind-safe palette (Okabe-Ito).
_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY = ("#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                "#CC79A7", "#555555")
_DPI = 110
#: Relative tolerance when a figure's value is held against the table's.
FIGURE_RTOL = 1e-6
_SIZE = (6.2, 3.6)
#: Widest PNG a figure may be, in pixels. Pages show images at their natural size (1 PNG pixel =
#: 1 CSS pixel) up to the width of their section; at an 800 px wide window a section is about
#: 740 px wide, so a figure no wider than this is never scaled down and its text keeps its size.
FIGURE_MAX_PX = 690
#: Legend font size in points: 8 pt at _DPI is 12.2 px, above the 10 px floor for legible text.
LEGEND_PT = 8.0
#: Smallest font of any text a figure draws, in points (10.3 px at _DPI).
MIN_TEXT_PT = 6.75


class PlotError(ValueError):
    """The saved data for a figure is malformed (reports say so instead of drawing it)."""


@dataclass(frozen=True)
class Plot:
    """One drawn figure: ``name`` (also its file suffix), ``title``, ``caption``, PNG bytes and
    ``data``: the values actually drawn (series by name), so tests can hold every figure against
    the JSON its table is rendered from."""

    name: str
    title: str
    caption: str
    png: bytes
    data: Mapping[str, Any] = field(default_factory=dict)


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for embedding a PNG in a standalone HTML page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _new_figure(size: tuple[float, float] = _SIZE) -> tuple[Figure, Any]:
    fig = Figure(figsize=size, dpi=_DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _to_png(fig: Figure, left: float = 0.85, right: float = 0.25, bottom: float = 0.6,
            top: float = 0.4) -> bytes:
    """PNG bytes of ``fig``. The saved area is the tight bounding box of everything drawn (plus a
    small pad), so titles, tick labels and legends outside the axes are never clipped. Legends
    requested with :func:`_legend_outside` go below the axes; when labels stick out so far that the
    PNG would be wider than :data:`FIGURE_MAX_PX`, the axes are narrowed (text keeps its size)."""
    width, height = fig.get_size_inches()
    pad = 0.12

    def layout(w: float) -> float:
        fig.set_size_inches(w, height)
        fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / height,
                            top=1 - top / height)
        _place_legends(fig)
        box = fig.get_tightbbox(fig.canvas.get_renderer())
        return (box.width + 2 * pad) * _DPI

    px = layout(width)
    if px > FIGURE_MAX_PX:  # first guess from the layout's own bounding box
        width = max(width - (px - FIGURE_MAX_PX + 4) / _DPI, left + right + 2.0)
        layout(width)
    for _ in range(4):  # then the saved PNG decides (its tight box can be a little wider)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None}, bbox_inches="tight",
                    pad_inches=pad)
        png = buf.getvalue()
        px = int.from_bytes(png[16:20], "big")  # PNG IHDR width
        if px <= FIGURE_MAX_PX or width <= left + right + 2.0:
            break
        width = max(width - (px - FIGURE_MAX_PX + 2) / _DPI, left + right + 2.0)
        layout(width)
    return png


_BELOW = "_dpaudit_legend_below"
#: Characters per line of an evidence-chart point label (at most three lines).
_LABEL_CHARS = 40


def _legend_outside(ax: Any) -> None:
    """Ask for the legend below the axes (under the axis label), never over the data; placed by
    :func:`_to_png` once the layout is final."""
    setattr(ax, _BELOW, True)


def _place_legends(fig: Figure) -> None:
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if not getattr(ax, _BELOW, False):
            continue
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        handles, labels = ax.get_legend_handles_labels()
        if not handles:
            continue
        box = ax.get_tightbbox(renderer).transformed(fig.transFigure.inverted())
        # Long entries wrap (a legend wider than the figure would widen the PNG instead).
        labels = ["\n".join(w for line in lab.split("\n")
                            for w in (textwrap.wrap(line, 64, subsequent_indent="    ",
                                                    drop_whitespace=False) or [""]))
                  for lab in labels]
        one_line = all("\n" not in lab for lab in labels)
        for ncol in ((2, 1) if len(labels) > 2 and one_line else (1,)):
            legend = ax.legend(handles, labels, fontsize=LEGEND_PT, frameon=False,
                               loc="upper left", bbox_to_anchor=(box.x0, box.y0 - 0.02),
                               bbox_transform=fig.transFigure, borderaxespad=0.0, ncol=ncol)
            if legend.get_window_extent(renderer).width <= FIGURE_MAX_PX - 40:
                break


_SUBSCRIPT = re.compile(r"([A-Za-z])_\{([^{}$]+)\}")


def _math_text(text: str) -> str:
    """``x_{2^j+1}`` as matplotlib mathtext (a real subscript) instead of raw TeX source."""
    return _SUBSCRIPT.sub(lambda m: f"${m.group(1)}_{{{m.group(2)}}}$", text)


def _title(ax: Any, text: str, width: int = 70) -> None:
    ax.set_title("\n".join(textwrap.wrap(text, width)) if text else "", fontsize=8.5,
                 color=_GREY, loc="left")


def _floats(values: Any, name: str) -> list[float | None]:
    if not isinstance(values, (list, tuple)):
        raise PlotError(f"{name} must be a list of numbers")
    out = []
    for v in values:
        f = as_float(v)
        if v is not None and f is None:
            raise PlotError(f"{name} contains a non-number {v!r}")
        out.append(f)
    return out


def _finite_pairs(xs: Sequence[float | None], ys: Sequence[float | None]) -> tuple[list[float], list[float]]:
    px, py = [], []
    for x, y in zip(xs, ys):
        if x is not None and y is not None and math.isfinite(x) and math.isfinite(y):
            px.append(x)
            py.append(y)
    return px, py


def _event_label(spec: Mapping[str, Any], threshold: float) -> str:
    tail = spec.get("event_tail")
    if tail == "pooled":
        text = "chosen event:\n  " + "\n    ".join(textwrap.wrap(str(spec.get("event") or ""), 48))
    else:
        op = "<=" if tail == "lower" else ">"
        text = f"chosen event: statistic {op} {threshold:.4g}"
    if spec.get("event_outcomes"):
        text += "\n  = " + "\n    ".join(textwrap.wrap(str(spec["event_outcomes"]), 48))
    counts = spec.get("event_test_counts")
    if isinstance(counts, Mapping) and counts.get("nobs0") and tail == "pooled":
        # Pooled counts are over the runs of both inputs (count1: the first bracket).
        text += (f"\n  in the event (test split, pooled):\n    {counts.get('count1')} of "
                 f"{counts.get('nobs1')} (first bracket),\n    {counts.get('count0')} of "
                 f"{counts.get('nobs0')} (second bracket)")
    elif isinstance(counts, Mapping) and counts.get("nobs0"):
        text += (f"\n  in the event (test split):\n    {counts.get('count0')} of {counts.get('nobs0')} "
                 f"on D,\n    {counts.get('count1')} of {counts.get('nobs1')} on D'")
    return text


def histogram_png(spec: Mapping[str, Any]) -> bytes:
    """Histograms of the audit statistic on both neighbouring inputs, the chosen event shaded.

    ``spec``: ``{"edges": [n+1], "counts0": [n], "counts1": [n], "threshold": float | None,
    "statistic": str, "parameters": {...}}``; optional ``"event_tail"`` (``"upper"``: the event
    is statistic > threshold, ``"lower"``: <=; ``"pooled"``: a pooled mirrored pair whose two
    ``[tail, threshold]`` parts are in ``"event_parts"``, both drawn), ``"event_test_counts"`` (``count0/nobs0/count1/
    nobs1`` of the event on the test split) and ``"labels"`` (two legend labels).
    """
    return _histogram(spec)[0]


def _histogram(spec: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
    edges = _floats(spec.get("edges"), "edges")
    c0 = _floats(spec.get("counts0"), "counts0")
    c1 = _floats(spec.get("counts1"), "counts1")
    if len(edges) < 2 or len(c0) != len(edges) - 1 or len(c1) != len(edges) - 1:
        raise PlotError("histogram needs len(edges) == len(counts0) + 1 == len(counts1) + 1 >= 2")
    if any(v is None for v in edges + c0 + c1):
        raise PlotError("histogram edges and counts must be numbers")
    labels = spec.get("labels") or ["input D (data0)", "neighbour D' (data1)"]
    fig, ax = _new_figure()
    ax.stairs(c0, edges, color=_BLUE, linewidth=1.6, label=str(labels[0]))
    ax.stairs(c1, edges, color=_ORANGE, linewidth=1.6, label=str(labels[1]))
    positive = [v for v in c0 + c1 if v and v > 0]
    if positive and max(positive) / min(positive) > 1e3:
        ax.set_yscale("log")
    threshold = as_float(spec.get("threshold"))
    parts = [(tail, as_float(t)) for tail, t in spec.get("event_parts") or []]
    if spec.get("event_tail") != "pooled":
        parts = [(spec.get("event_tail"), threshold)]
    for k, (tail, t) in enumerate(parts):
        if t is None or not math.isfinite(t):
            continue
        lo, hi = edges[0], edges[-1]
        span = (lo, min(max(t, lo), hi)) if tail == "lower" else (max(min(t, hi), lo), hi)
        if span[1] > span[0]:
            ax.axvspan(span[0], span[1], color=_RED, alpha=0.08, linewidth=0)
        # One legend entry for the event (a pooled pair's two lines share it).
        ax.axvline(t, color=_RED, linestyle="--", linewidth=1.4,
                   label=_event_label(spec, t) if k == 0 else None)
    xlabel = _math_text("\n".join(textwrap.wrap(
        f"score: {spec.get('statistic') or 'the audit statistic'}", 70, break_on_hyphens=False)))
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel("runs (test split)")
    params = spec.get("parameters")
    if params:
        _title(ax, format_parameters(params))
    _legend_outside(ax)
    data = {"edges": edges, "counts0": c0, "counts1": c1, "threshold": threshold,
            "parameters": dict(params or {}), "xlabel": xlabel}
    return _to_png(fig), data


def privacy_curve_png(spec: Mapping[str, Any]) -> bytes:
    """epsilon(delta): the accountant and exact curves, the claimed point and the empirical bound.

    ``spec``: ``{"deltas": [...], "epsilon_accountant": [...], "epsilon_exact": [...],
    "epsilon_noisy_sums": [...], "claimed": [eps, delta], "lower_bound": [eps_lb, delta] | None,
    "exact_kind": str, "table": {...}}`` (any curve may be absent; ``epsilon_noisy_sums`` is the
    epsilon of the noisy internal sums, an upper bound on the release's; ``table``: the table's
    values at the worst point, drawn as hollow markers at the claimed delta).

    The claim ``(eps_c, delta_c)`` says ``epsilon(delta) <= eps_c`` for every ``delta >= delta_c``,
    so it is drawn as a star with a dotted line to the right; a lower bound at ``delta_lb`` holds for
    every ``delta <= delta_lb`` (epsilon(delta) is non-increasing), so it is drawn with a dotted
    line to the left. Values a log axis cannot show (delta = 0, infinite epsilon) are drawn at the
    axis edge with a marker and listed in a note under the axes.
    """
    return _privacy_curve(spec)[0]


def _privacy_curve(spec: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
    deltas = _floats(spec.get("deltas") or [], "deltas")
    certified = spec.get("exact_kind") == CERTIFIED
    exact_name = ("certified lower bound (numerical), worst pair found" if certified
                  else "exact (worst pair found)")
    curves = []
    drawn: dict[str, Any] = {"deltas": deltas}
    for key, label, colour, style in (("epsilon_accountant", "accountant (upper bound)", _BLUE, "-"),
                                      ("epsilon_exact", exact_name, _PURPLE, "--"),
                                      ("epsilon_exact_unprojected",
                                       "without the projection (upper bound)", _GREY, "-."),
                                      ("epsilon_noisy_sums", "noisy sums (upper bound on release)",
                                       _GREY, ":")):
        ys = spec.get(key)
        if not ys:
            continue
        ys = _floats(ys, key)
        if len(ys) != len(deltas):
            raise PlotError(f"{key} must have one value per delta")
        drawn[key] = ys
        curves.append((key, ys, label, colour, style))

    def pair(key: str) -> tuple[float, float] | None:
        value = spec.get(key)
        if not value:
            return None
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise PlotError(f"{key} must be [epsilon, delta]")
        e, d = (as_float(v) for v in value)
        if e is None or d is None or not math.isfinite(e):
            return None
        return e, d

    claimed, lower = pair("claimed"), pair("lower_bound")
    if not any(any(y is not None for y in c[1]) for c in curves) and claimed is None \
            and lower is None:
        raise PlotError("privacy curve has nothing to draw")
    positive = [d for d in deltas if d is not None and d > 0]
    positive += [p[1] for p in (claimed, lower) if p is not None and p[1] > 0]
    log_x = bool(positive) and max(positive) / min(positive) > 10
    if log_x:
        lo, hi = min(positive) / 3, max(positive) * 3
    else:
        lo, hi = min([0.0] + positive), max(positive + [1e-9]) * 1.05
    finite_eps = [y for c in curves for y in c[1] if y is not None and math.isfinite(y)]
    finite_eps += [p[0] for p in (claimed, lower) if p is not None]
    top = max(finite_eps + [1e-9]) * 1.08
    fig, ax = _new_figure((6.2, 3.8))
    notes: list[str] = []
    for key, ys, label, colour, style in curves:
        xs2, ys2 = [], []
        edge = []
        for d, y in zip(deltas, ys):
            if d is None or y is None:
                continue
            if log_x and d <= 0:
                edge.append((lo, y))
                continue
            if not math.isfinite(y):
                edge.append((d, top))
                continue
            xs2.append(d)
            ys2.append(y)
        if xs2:
            ax.plot(xs2, ys2, style, color=colour, linewidth=1.8, label=label)
        for x, y in edge:
            ax.plot([x], [min(y, top) if math.isfinite(y) else top], marker="<" if x == lo else "^",
                    color=colour, markersize=8, linestyle="none", clip_on=False)
        for d, y in zip(deltas, ys):
            if d is not None and y is not None and ((log_x and d <= 0) or not math.isfinite(y)):
                notes.append(f"{label.split(' (')[0]}: epsilon {format_value(y)} at delta "
                             f"{format_value(d)} (marker at the axis edge)")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlim(lo, hi)

    def where(d: float) -> tuple[float, str]:
        if log_x and d <= 0:
            return lo, " (delta = 0, left edge)"
        return d, ""

    if claimed is not None:
        x, note = where(claimed[1])
        ax.plot([x, hi], [claimed[0], claimed[0]], ":", color=_RED, linewidth=1.2)
        ax.plot([x], [claimed[0]], marker="*", markersize=15, color=_RED, linestyle="none",
                clip_on=False, label=f"claimed ({claimed[0]:.4g}, {claimed[1]:.3g}){note}")
    table = spec.get("table") if isinstance(spec.get("table"), Mapping) else None
    if table is not None:
        td = as_float(table.get("delta"))
        te, ta = as_float(table.get("epsilon_exact")), as_float(table.get("epsilon_accountant"))
        if td is not None:
            x, _ = where(td)
            if te is not None and math.isfinite(te):
                ax.plot([x], [te], marker="o", markersize=9, markerfacecolor="none",
                        markeredgecolor=_PURPLE, linestyle="none", clip_on=False,
                        label=f"table at claimed delta: {'certified' if certified else 'exact'} "
                              f"{te:.4g}")
            if ta is not None and math.isfinite(ta):
                ax.plot([x], [ta], marker="s", markersize=9, markerfacecolor="none",
                        markeredgecolor=_BLUE, linestyle="none", clip_on=False,
                        label=f"table at claimed delta: accountant {ta:.4g}")
        drawn["table"] = {"delta": td, "epsilon_exact": te, "epsilon_accountant": ta}
    if lower is not None:
        x, note = where(lower[1])
        if x > lo:
            ax.plot([lo, x], [lower[0], lower[0]], ":", color=_GREEN, linewidth=1.2)
        ax.plot([x], [lower[0]], marker="^", markersize=10, color=_GREEN, linestyle="none",
                clip_on=False, label=f"empirical lower bound {lower[0]:.4g}"
                + (note or f" at delta {lower[1]:.3g}"))
    ax.set_xlabel("delta" + ("\n" + "\n".join(textwrap.wrap("; ".join(notes), 70))
                             if notes else ""))
    ax.set_ylabel("epsilon")
    ax.set_ylim(bottom=0, top=top)
    params = spec.get("parameters")
    if params:
        _title(ax, "at " + format_parameters(params))
    _legend_outside(ax)
    drawn["claimed"] = list(claimed) if claimed else None
    drawn["lower_bound"] = list(lower) if lower else None
    drawn["notes"] = notes
    return _to_png(fig), drawn


def sensitivity_png(spec: Mapping[str, Any]) -> bytes:
    """Observed / claimed sensitivity over rounds t (a ratio axis: 1 is the claimed bound).

    ``spec``: ``{"t", "observed", "claimed", "statement"}``.
    """
    return _sensitivity(spec)[0]


def _sensitivity_ratios(spec: Mapping[str, Any]) -> list[float]:
    """observed / claimed at every round with a positive claimed bound (what the figure draws)."""
    try:
        t = _floats(spec.get("t"), "t")
        observed = _floats(spec.get("observed"), "observed")
        claimed = _floats(spec.get("claimed"), "claimed")
    except PlotError:
        return []
    return [o / c for ti, o, c in zip(t, observed, claimed)
            if ti is not None and o is not None and c is not None and c > 0]


def _sensitivity(spec: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
    t = _floats(spec.get("t"), "t")
    observed = _floats(spec.get("observed"), "observed")
    claimed = _floats(spec.get("claimed"), "claimed")
    if not t or len(observed) != len(t) or len(claimed) != len(t):
        raise PlotError("sensitivity needs t, observed and claimed of equal, non-zero length")
    xs, ratios, zero_claim, zero_obs = [], [], [], []
    for ti, o, c in zip(t, observed, claimed):
        if ti is None or o is None or c is None:
            continue
        if c <= 0:
            zero_claim.append(ti)
            continue
        r = o / c
        if r <= 0:
            zero_obs.append(ti)
        xs.append(ti)
        ratios.append(r)
    fig, ax = _new_figure()
    pos = [r for r in ratios if r > 0 and math.isfinite(r)]
    log_y = bool(pos) and max(pos + [1.0]) / min(pos + [1.0]) > 20
    floor = min(pos + [1.0]) / 3 if log_y else 0.0
    ax.axhline(1.0, color=_RED, linestyle="--", linewidth=1.6, label="claimed bound (ratio 1)")
    shown = [(x, r) for x, r in zip(xs, ratios) if r > 0 or not log_y]
    if shown:
        ax.plot([x for x, _ in shown], [r for _, r in shown], color=_BLUE, linewidth=1.4,
                marker="o", markersize=3, label="largest observed ||x_t - x'_t|| / claimed")
    if log_y and zero_obs:
        ax.plot(zero_obs, [floor] * len(zero_obs), linestyle="none", marker="v", color=_GREY,
                markersize=5, clip_on=False, label="observed 0 (drawn at the bottom edge)")
    over = [(x, r) for x, r in zip(xs, ratios) if r > 1 + 1e-9]
    if over:
        x_w, r_w = max(over, key=lambda xr: xr[1])
        ax.plot([x_w], [r_w], marker="o", markersize=9, markerfacecolor="none",
                markeredgecolor=_RED, linestyle="none",
                label=f"largest violation: {r_w:.3g}x the bound at t = {format_value(x_w)}")
    if log_y:
        ax.set_yscale("log")
        ax.set_ylim(bottom=floor)
    else:
        ax.set_ylim(bottom=0, top=max(ratios + [1.0]) * 1.15)
    ax.set_xlabel("round t")
    ax.set_ylabel("observed / claimed sensitivity")
    if spec.get("statement"):
        _title(ax, str(spec["statement"]))
    note = ""
    if zero_claim:
        note = f"claimed bound 0 at {len(zero_claim)} rounds (not drawn)"
        ax.text(0.0, -0.28, note, transform=ax.transAxes, fontsize=7.5, color=_GREY)
    _legend_outside(ax)
    return _to_png(fig), {"t": xs, "ratio": ratios, "note": note}


def regret_png(spec: Mapping[str, Any]) -> bytes:
    """Regret curves. ``spec``: ``{"T": [...], "series": {name: [...]}, "ylabel": str}``."""
    horizons = _floats(spec.get("T"), "T")
    series = spec.get("series")
    if not horizons or not isinstance(series, Mapping) or not series:
        raise PlotError("regret needs T and at least one series")
    fig, ax = _new_figure()
    palette = [_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY]
    for i, (name, values) in enumerate(series.items()):
        ys = _floats(values, f"series {name!r}")
        if len(ys) != len(horizons):
            raise PlotError(f"series {name!r} must have one value per T")
        xs, ys2 = _finite_pairs(horizons, ys)
        ax.plot(xs, ys2, marker="o", markersize=3, linewidth=1.6,
                color=palette[i % len(palette)], label=str(name))
    if all(h is not None and h > 0 for h in horizons) and max(horizons) / min(horizons) > 10:
        ax.set_xscale("log")
        if len(horizons) <= 12:  # label the audited horizons themselves, not powers of ten
            ax.set_xticks(horizons, [format_value(int(h) if float(h).is_integer() else h)
                                     for h in horizons])
            ax.minorticks_off()
    ax.set_xlabel("horizon T")
    ax.set_ylabel(str(spec.get("ylabel") or "regret"))
    _legend_outside(ax)
    return _to_png(fig)


def evidence_png(points: Sequence[Mapping[str, Any]], max_points: int = 40) -> bytes:
    """Evidence / claimed epsilon at each audited point (the three kinds side by side).

    One row per point (the ``max_points`` with the largest ratio when there are more); a ratio above
    1 (right of the red line) is evidence against the claim for an exact epsilon or lower bound,
    and a loose or wrong analysis for the accountant. A ratio a log axis cannot show (0: e.g. a
    lower bound of 0, or infinity) is drawn at the axis edge with a hollow marker and counted in
    a note, never silently left out.
    """
    return _evidence(points, max_points)[0]


def _evidence(points: Sequence[Mapping[str, Any]], max_points: int = 40
              ) -> tuple[bytes, dict[str, Any]]:
    varying = varying_parameters(points)
    certified = any(p.get("exact_kind") == CERTIFIED for p in points
                    if as_float(p.get("epsilon_exact")) is not None)
    rows = []
    for number, p in enumerate(points, start=1):
        claimed = as_float(p.get("claimed_epsilon"))
        if not claimed:
            continue
        vals = {k: as_float(p.get(k)) for k in ("epsilon_exact", "epsilon_accountant",
                                                "epsilon_lower_bound")}
        if all(v is None for v in vals.values()):
            continue
        ratios = {k: (None if v is None else v / claimed) for k, v in vals.items()}
        top = max((r for r in ratios.values() if r is not None), default=0.0)
        params = p.get("parameters") or {}
        # "#n": the row of the evidence table (same numbering), so alike labels stay apart.
        rows.append((f"#{number} " + format_parameters({k: params[k] for k in varying
                                                        if k in params}), ratios, top))
    if not rows:
        raise PlotError("no audited point carries any epsilon")
    # Point labels wrap onto two or three lines (never cut to look alike: the parameters that tell
    # points apart may come last); rows are as tall as their labels, and the figure shows as many
    # points (largest ratios first) as fit in _EVIDENCE_MAX_IN inches at that row height (40
    # three-line labels squeezed into 16 inches overlapped).
    # At most _LABEL_CHARS per line, so the labels leave the axes room within FIGURE_MAX_PX.
    lines = max([len(textwrap.wrap(r[0], _LABEL_CHARS)) for r in rows] + [1])
    lines = min(lines, 3)
    two_lines = lines > 1
    row_in = _label_row_inches(lines, 7.5 if two_lines else 8.0)
    fits = max(1, int((_EVIDENCE_MAX_IN - _EVIDENCE_FRAME_IN) / row_in))
    omitted = 0
    if len(rows) > min(max_points, fits):
        shown = min(max_points, fits)
        keep = sorted(range(len(rows)), key=lambda i: -rows[i][2])[:shown]
        omitted = len(rows) - shown
        rows = [rows[i] for i in sorted(keep)]
    height = _EVIDENCE_FRAME_IN + row_in * len(rows)
    fig, ax = _new_figure((6.2, height))
    ys = list(range(len(rows)))[::-1]
    finite_vals: list[float] = []
    for _, ratios, _ in rows:
        finite_vals += [r for r in ratios.values() if r is not None and math.isfinite(r) and r > 0]
    positive = finite_vals + [1.0]
    log_x = max(positive) / min(positive) > 20
    lo_edge = min(positive) / 2 if log_x else 0.0
    hi_edge = max(positive) * (2.0 if log_x else 1.15)
    styles = (("epsilon_accountant", "accountant", _BLUE, "o", 7),
              ("epsilon_exact", CERTIFIED if certified else EXACT,
               _PURPLE, "D", 6),
              ("epsilon_lower_bound", "empirical lower bound", _GREEN, "^", 8))
    drawn: dict[str, list[float | None]] = {}
    edge_notes: list[str] = []
    for key, label, colour, marker, size in styles:
        xs, yy, ex, ey = [], [], [], []
        series: list[float | None] = []
        for y, (_, ratios, _) in zip(ys, rows):
            r = ratios[key]
            series.append(r)
            if r is None:
                continue
            if math.isinf(r) and r > 0:
                ex.append(hi_edge)
                ey.append(y)
            elif r <= 0 and log_x:
                ex.append(lo_edge)
                ey.append(y)
            else:
                xs.append(r)
                yy.append(y)
        drawn[key] = series
        if xs:
            ax.plot(xs, yy, linestyle="none", marker=marker, markersize=size, color=colour,
                    alpha=0.85, label=label)
        if ex:
            ax.plot(ex, ey, linestyle="none", marker=marker, markersize=size,
                    markerfacecolor="none", markeredgecolor=colour, clip_on=False,
                    label=f"{label}: 0 or infinite (at the axis edge)")
            n0 = sum(1 for x in ex if x == lo_edge)
            ninf = len(ex) - n0
            if n0:
                edge_notes.append(f"{n0} {label} value(s) of 0 drawn at the left edge")
            if ninf:
                edge_notes.append(f"{ninf} infinite {label} value(s) drawn at the right edge")
    ax.axvline(1.0, color=_RED, linestyle="--", linewidth=1.4, label="claimed epsilon")
    ax.set_yticks(ys)
    labels = [r[0] for r in rows]
    labels = ["\n".join(textwrap.wrap(lab, _LABEL_CHARS, max_lines=3, placeholder=" ..."))
              for lab in labels]
    ax.set_yticklabels(labels, fontsize=7.5 if two_lines else 8)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlim(lo_edge if log_x else 0.0, hi_edge)
    xlabel = "epsilon / claimed epsilon"
    if edge_notes:
        xlabel += "\n" + "\n".join(textwrap.wrap("; ".join(edge_notes), 48))
    ax.set_xlabel(xlabel, fontsize=9)
    if omitted:
        _title(ax, f"{len(rows)} points with the largest ratios ({omitted} more in the table)")
    _legend_outside(ax)
    png = _to_png(fig)
    return png, {"labels": [r[0] for r in rows], **drawn, "notes": edge_notes,
                 "varying": varying, "label_overlap_px": _label_overlap(fig, ax)}


#: Tallest evidence chart (inches) and the part of it that is not point rows (title, axis label,
#: legend).
_EVIDENCE_MAX_IN = 16.0
_EVIDENCE_FRAME_IN = 2.0


def _label_row_inches(lines: int, font_pt: float) -> float:
    """Height of one evidence-chart row whose label has ``lines`` lines of ``font_pt`` text:
    matplotlib's line spacing (1.2 x the font size) per line plus a gap of 4 points."""
    return (lines * 1.2 * font_pt + 4.0) / 72.0


def _label_overlap(fig: Figure, ax: Any) -> float:
    """The largest vertical overlap in pixels between two y tick labels as drawn (0 when none
    overlap), measured on the figure's renderer."""
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in ax.get_yticklabels()
                    if t.get_text()), key=lambda b: b.y0)
    return max([max(0.0, below.y1 - above.y0) for below, above in zip(boxes, boxes[1:])]
               + [0.0])


def _histogram_caption(record: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    worst = (record.get("worst_case") or {}).get("parameters") or {}
    shown = spec.get("parameters") or {}
    is_worst = spec.get("worst_point")
    if is_worst is None:
        is_worst = bool(worst) and dict(shown) == dict(worst)
    where = (f"at the worst audited point ({format_parameters(shown)})" if is_worst else
             f"at {format_parameters(shown)}, the highest-ranked point with an empirical test: "
             f"the worst point ({format_parameters(worst)}) had no empirical test, so its "
             "histogram does not exist")
    return (f"The audit statistic ({spec.get('statistic') or 'audit statistic'}) on the test "
            f"split for both neighbouring inputs, {where}. "
            + ("The chosen event is a pooled mirrored pair: the shaded region beyond one dashed "
               "line counted on one input together with the region beyond the other counted on "
               "the other input (see the legend); its pooled counts give the empirical lower "
               "bound." if spec.get("event_tail") == "pooled" else
               "The shaded side of the dashed line is the chosen event, with its counts on each "
               "input; its probabilities give the empirical lower bound."))


def _curve_caption(spec: Mapping[str, Any]) -> str:
    certified = spec.get("exact_kind") == CERTIFIED
    text = ("epsilon as a function of delta at the worst audited point, from the same objects as "
            "the table: the accountant (upper bound) and "
            + ("the certified lower bound (numerical bracket of the projected release)"
               if certified else "the exact epsilon of the worst pair")
            + ", with the claimed point, the table's values at the claimed delta (hollow "
              "markers) and the empirical lower bound.")
    table = spec.get("table") if isinstance(spec.get("table"), Mapping) else {}
    if table.get("agrees") is False:
        bad = "; ".join(f"{m.get('series')}: curve {format_value(as_float(m.get('curve')))} vs "
                        f"table {format_value(as_float(m.get('table')))}"
                        for m in table.get("mismatches", []))
        text += (f" WARNING: at the claimed delta the curve differs from the table ({bad}); the "
                 "curve is computed differently and the table is authoritative.")
    elif table.get("agrees") is None and table:
        text += " The claimed delta is not on the curve's grid; the hollow markers are the table."
    return text


def _sensitivity_caption(record: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """Says which trajectory is drawn and holds its largest ratio against the lemma table's."""
    text = ("Distance between the two neighbouring trajectories of one example pair found by the "
            "property-based search, divided by the sensitivity the lemma claims, round by round: "
            "above the dashed line at 1 the lemma is violated.")
    peak = max((r for r in _sensitivity_ratios(spec) if math.isfinite(r)), default=None)
    statement = str(spec.get("statement") or "")
    # The checks of the drawn statement: as printed, or under a stated reading ("... [reading]").
    checks = [(str(lem.get("statement")), as_float(lem.get("worst_ratio")))
              for lem in record.get("lemmas") or [] if lem.get("status") != "not checked"
              and (lem.get("statement") == statement
                   or str(lem.get("statement")).startswith(statement + " ["))]
    checks = [(s, r) for s, r in checks if r is not None]
    if peak is None or not checks:
        return text
    same = [s for s, r in checks if math.isclose(peak, r, rel_tol=FIGURE_RTOL, abs_tol=1e-12)]
    if same:
        which = "" if same[0] == statement else f" of the check '{same[0][len(statement):].strip()}'"
        return text + (f" The pair drawn is the one with the largest ratio the search saw{which}, "
                       f"{peak:.4g}x: the lemma table's worst ratio for it.")
    worst = max(r for _, r in checks)
    return text + (f" The pair drawn is the shrunk (simplest) counterexample, ratio {peak:.4g}x; "
                   f"the largest ratio the search saw, {worst:.4g}x (the lemma table's), came "
                   "from a larger example before shrinking.")


_FIGURES: tuple[tuple[str, str, Callable[[Mapping[str, Any]], tuple[bytes, dict[str, Any]]]], ...] = (
    ("histogram", "Output histograms on the two neighbouring inputs", _histogram),
    ("privacy_curve", "Privacy curve", _privacy_curve),
    ("sensitivity", "Observed vs claimed sensitivity", _sensitivity),
    ("regret", "Regret", lambda spec: (regret_png(spec), {})),
)

_CAPTIONS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], str]] = {
    "histogram": _histogram_caption,
    "privacy_curve": lambda record, spec: _curve_caption(spec),
    "sensitivity": lambda record, spec: _sensitivity_caption(record, spec),
    "regret": lambda record, spec: "Regret of the audited learner (and any baselines) as the "
                                   "horizon grows.",
}


#: How a sentence that replaces a one-point figure begins (:func:`is_replacement`).
REPLACED = "one round only"


def is_replacement(sentence: str) -> bool:
    """Whether a sentence of :func:`render_plots`' second list replaces a one-point figure (its
    numbers said in words), rather than reporting a figure whose data could not be drawn."""
    return REPLACED in sentence.split(":", 1)[-1][:40]


def _degenerate_sentence(name: str, spec: Mapping[str, Any],
                         record: Mapping[str, Any] | None = None) -> str:
    """The sentence that replaces a figure with a single point to draw (a sensitivity over one
    round, e.g. at T = 2), or ``""`` when the figure has something to show."""
    if name != "sensitivity":
        return ""
    ratios = _sensitivity_ratios(spec)
    try:
        t = [x for x in _floats(spec.get("t"), "t") if x is not None]
        observed = _floats(spec.get("observed"), "observed")
        claimed = _floats(spec.get("claimed"), "claimed")
    except PlotError:
        return ""
    if len(t) != 1 or len(ratios) != 1 or observed[0] is None or claimed[0] is None:
        return ""
    # Which pair it is, held against the lemma table's worst ratio, as the figure's caption says.
    tail = _sensitivity_caption(record or {}, spec).split("the lemma is violated.", 1)[-1]
    tail = tail.replace("The pair drawn is", "That pair is")
    return (f"Observed vs claimed sensitivity: {REPLACED} (t = {t[0]:g}), so no figure: the "
            f"distance observed there is {observed[0]:.4g} against the claimed sensitivity "
            f"{claimed[0]:.4g}, {ratios[0]:.4g}x the bound.{tail}")


def render_plots(record: Mapping[str, Any]) -> tuple[list[Plot], list[str]]:
    """Draw every figure the saved audit has data for.

    Returns ``(plots, problems)``: the drawn figures in reading order, and one sentence per figure
    not drawn: its saved data could not be drawn (reports print these instead of failing), or it
    would show a single point and a sentence with that point's numbers replaces it
    (:func:`is_replacement` tells these apart).
    """
    plots: list[Plot] = []
    problems: list[str] = []
    points = record.get("points") or []
    if points:
        try:
            png, data = _evidence(points)
            plots.append(Plot("evidence", "Evidence against the claim, point by point",
                              "Each audited parameter point (#n: its row in the evidence "
                              "table, then the parameters that vary): "
                              "the exact or certified, accountant and empirical lower-bound "
                              "epsilon divided by the claimed epsilon, the same values as the "
                              "table. Points right of the dashed line exceed the claim.", png,
                              data))
        except PlotError as exc:
            problems.append(f"The evidence chart was not drawn: {exc}.")
    figures = record.get("figures") or {}
    for name, title, draw in _FIGURES:
        spec = figures.get(name)
        if not spec:
            continue
        try:
            if not isinstance(spec, Mapping):
                raise PlotError("its data is not a JSON object")
            sentence = _degenerate_sentence(name, spec, record)
            if sentence:  # one point on an axis says nothing a sentence does not
                problems.append(sentence)
                continue
            png, data = draw(spec)
            plots.append(Plot(name, title, _CAPTIONS[name](record, spec), png, data))
        except (PlotError, TypeError, ValueError) as exc:
            problems.append(f"The {name.replace('_', ' ')} figure was not drawn: {exc}.")
    return plots, problems
