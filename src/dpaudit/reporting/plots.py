"""Figures of a claim report, drawn with matplotlib's Agg canvas into PNG bytes.

Each figure is drawn only when the audit saved the data for it (``ClaimAudit.figures`` conventions
in :mod:`dpaudit.audits.claim_audit`); the evidence chart is drawn from the audited grid points.
Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``, so
rendering touches no global state and works in worker processes and without a display. PNGs are
written without a software/version stamp, so re-rendering the same JSON gives the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from dpaudit.reporting.view import as_float, format_parameters, format_value

__all__ = ["Plot", "PlotError", "render_plots", "evidence_png", "histogram_png",
           "privacy_curve_png", "sensitivity_png", "regret_png", "data_uri"]

# Colour-blind-safe palette (Okabe-Ito).
_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY = ("#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                "#CC79A7", "#555555")
_DPI = 110
_SIZE = (6.6, 3.7)


class PlotError(ValueError):
    """The saved data for a figure is malformed (reports say so instead of drawing it)."""


@dataclass(frozen=True)
class Plot:
    """One drawn figure: ``name`` (also its file suffix), ``title``, ``caption`` and PNG bytes."""

    name: str
    title: str
    caption: str
    png: bytes


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
    """PNG bytes of ``fig`` with fixed margins in inches (much cheaper than ``tight_layout``)."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - top / height)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


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


def histogram_png(spec: Mapping[str, Any]) -> bytes:
    """Histograms of the audit statistic on both neighbouring inputs, with the chosen event marked.

    ``spec``: ``{"edges": [n+1], "counts0": [n], "counts1": [n], "threshold": float | None,
    "statistic": str, "parameters": {...}}``; optional ``"event"`` (text describing the event) and
    ``"labels"`` (two legend labels).
    """
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
    if threshold is not None and math.isfinite(threshold):
        event = spec.get("event") or f"threshold {threshold:.4g}"
        ax.axvline(threshold, color=_RED, linestyle="--", linewidth=1.4,
                   label=f"chosen event: {event}")
    ax.set_xlabel(str(spec.get("statistic") or "audit statistic"))
    ax.set_ylabel("count (test split)")
    params = spec.get("parameters")
    if params:
        ax.set_title(format_parameters(params), fontsize=9, color=_GREY)
    ax.legend(fontsize=8, frameon=False)
    return _to_png(fig)


def privacy_curve_png(spec: Mapping[str, Any]) -> bytes:
    """epsilon(delta): the accountant and exact curves, the claimed point and the empirical bound.

    ``spec``: ``{"deltas": [...], "epsilon_accountant": [...], "epsilon_exact": [...],
    "epsilon_noisy_sums": [...], "claimed": [eps, delta], "lower_bound": [eps_lb, delta] | None}``
    (any curve may be absent; ``epsilon_noisy_sums`` is the epsilon of the noisy internal sums, an
    upper bound on the release's).

    The claim ``(eps_c, delta_c)`` says ``epsilon(delta) <= eps_c`` for every ``delta >= delta_c``,
    so it is drawn as a star with a dotted line to the right; a lower bound at ``delta_lb`` holds for
    every ``delta <= delta_lb`` (epsilon(delta) is non-increasing), so it is drawn with a dotted
    line to the left. On a log delta axis a point at delta = 0 sits on the left edge, labelled so.
    """
    deltas = _floats(spec.get("deltas") or [], "deltas")
    curves = []
    for key, label, colour, style in (("epsilon_accountant", "accountant", _BLUE, "-"),
                                      ("epsilon_exact", "exact (worst pair found)", _PURPLE, "--"),
                                      ("epsilon_noisy_sums", "noisy sums (upper bound on release)",
                                       _GREY, ":")):
        ys = spec.get(key)
        if not ys:
            continue
        ys = _floats(ys, key)
        if len(ys) != len(deltas):
            raise PlotError(f"{key} must have one value per delta")
        xs, ys2 = _finite_pairs(deltas, ys)
        if xs:
            curves.append((xs, ys2, label, colour, style))

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
    if not curves and claimed is None and lower is None:
        raise PlotError("privacy curve has nothing to draw")
    positive = [x for c in curves for x in c[0] if x > 0]
    positive += [p[1] for p in (claimed, lower) if p is not None and p[1] > 0]
    log_x = bool(positive) and max(positive) / min(positive) > 10
    fig, ax = _new_figure()
    for xs, ys, label, colour, style in curves:
        if log_x:
            xs, ys = [x for x in xs if x > 0], [y for x, y in zip(xs, ys) if x > 0]
        ax.plot(xs, ys, style, color=colour, linewidth=1.8, label=label)
    if log_x:
        ax.set_xscale("log")
        lo, hi = min(positive) / 3, max(positive) * 3
    else:
        lo, hi = min([0.0] + positive), max(positive + [1e-9]) * 1.05
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
    if lower is not None:
        x, note = where(lower[1])
        if x > lo:
            ax.plot([lo, x], [lower[0], lower[0]], ":", color=_GREEN, linewidth=1.2)
        ax.plot([x], [lower[0]], marker="^", markersize=10, color=_GREEN, linestyle="none",
                clip_on=False, label=f"empirical lower bound {lower[0]:.4g}"
                + (note or f" at delta {lower[1]:.3g}"))
    ax.set_xlabel("delta")
    ax.set_ylabel("epsilon")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    return _to_png(fig)


def sensitivity_png(spec: Mapping[str, Any]) -> bytes:
    """Observed vs claimed sensitivity over rounds t. ``spec``: ``{"t", "observed", "claimed", "statement"}``."""
    t = _floats(spec.get("t"), "t")
    observed = _floats(spec.get("observed"), "observed")
    claimed = _floats(spec.get("claimed"), "claimed")
    if not t or len(observed) != len(t) or len(claimed) != len(t):
        raise PlotError("sensitivity needs t, observed and claimed of equal, non-zero length")
    fig, ax = _new_figure()
    x1, y1 = _finite_pairs(t, claimed)
    x0, y0 = _finite_pairs(t, observed)
    ax.plot(x1, y1, color=_RED, linewidth=1.8, linestyle="--", label="claimed bound")
    ax.plot(x0, y0, color=_BLUE, linewidth=1.4, marker="o", markersize=2.5,
            label="largest observed ||x_t - x'_t||")
    ys = [y for y in y0 + y1 if y > 0]
    if ys and len(ys) == len(y0) + len(y1) and max(ys) / min(ys) > 10:
        ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("sensitivity")
    if spec.get("statement"):
        ax.set_title(str(spec["statement"]), fontsize=9, color=_GREY)
    ax.legend(fontsize=8, frameon=False)
    return _to_png(fig)


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
    ax.legend(fontsize=8, frameon=False)
    return _to_png(fig)


def evidence_png(points: Sequence[Mapping[str, Any]], max_points: int = 40) -> bytes:
    """Evidence / claimed epsilon at each audited point (the three kinds side by side).

    One row per point (the ``max_points`` with the largest ratio when there are more); a ratio above
    1 (right of the red line) is evidence against the claim for an exact epsilon or lower bound,
    and a loose or wrong analysis for the accountant.
    """
    # Label points by the parameters that vary between them (the others are in the table).
    names: list[str] = []
    for p in points:
        names += [k for k in (p.get("parameters") or {}) if k not in names]
    varying = [k for k in names
               if len({repr((p.get("parameters") or {}).get(k)) for p in points}) > 1] or names
    rows = []
    for p in points:
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
        rows.append((format_parameters({k: params[k] for k in varying if k in params}), ratios,
                     top))
    if not rows:
        raise PlotError("no audited point carries any epsilon")
    omitted = 0
    if len(rows) > max_points:
        keep = sorted(range(len(rows)), key=lambda i: -rows[i][2])[:max_points]
        omitted = len(rows) - max_points
        rows = [rows[i] for i in sorted(keep)]
    height = min(2.0 + 0.28 * len(rows), 13.0)
    fig, ax = _new_figure((8.4, height))
    ys = list(range(len(rows)))[::-1]
    finite_vals: list[float] = []
    styles = (("epsilon_accountant", "accountant", _BLUE, "o", 7),
              ("epsilon_exact", "exact", _PURPLE, "D", 6),
              ("epsilon_lower_bound", "empirical lower bound", _GREEN, "^", 8))
    cap = None
    for _, ratios, _ in rows:
        finite_vals += [r for r in ratios.values() if r is not None and math.isfinite(r) and r > 0]
    if finite_vals:
        cap = max(finite_vals) * 1.5
    for key, label, colour, marker, size in styles:
        xs, yy = [], []
        for y, (_, ratios, _) in zip(ys, rows):
            r = ratios[key]
            if r is None:
                continue
            if math.isinf(r) and r > 0:
                if cap is None:
                    continue
                r = cap
            if r <= 0:
                continue
            xs.append(r)
            yy.append(y)
        if xs:
            ax.plot(xs, yy, linestyle="none", marker=marker, markersize=size, color=colour,
                    alpha=0.85, label=label)
    ax.axvline(1.0, color=_RED, linestyle="--", linewidth=1.4, label="claimed epsilon")
    ax.set_yticks(ys)
    labels = [r[0] for r in rows]
    labels = [lab if len(lab) <= 48 else lab[:45] + "..." for lab in labels]
    ax.set_yticklabels(labels, fontsize=7)
    positive = finite_vals + [1.0]
    if max(positive) / min(positive) > 20:
        ax.set_xscale("log")
    ax.set_xlabel("epsilon / claimed epsilon")
    if omitted:
        ax.set_title(f"{len(rows)} points with the largest ratios ({omitted} more in the table)",
                     fontsize=9, color=_GREY)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    # Room for the longest tick label (7 pt DejaVu Sans: about 0.058 in per character) and for
    # the legend on the right.
    longest = max(len(lab) for lab in labels)
    return _to_png(fig, left=0.25 + 0.058 * longest, right=1.9, bottom=0.6,
                   top=0.4 if omitted else 0.15)


_FIGURES: tuple[tuple[str, str, str, Callable[[Mapping[str, Any]], bytes]], ...] = (
    ("histogram", "Output histograms on the two neighbouring inputs",
     "The audit statistic on the test split for both inputs of the worst pair; the dashed line marks "
     "the event whose probabilities give the empirical lower bound.", histogram_png),
    ("privacy_curve", "Privacy curve",
     "epsilon as a function of delta for the implemented mechanism (accountant and, where the output "
     "law is known, exact), with the claimed point and the empirical lower bound.", privacy_curve_png),
    ("sensitivity", "Observed vs claimed sensitivity",
     "The largest distance between the two neighbouring trajectories found by the property-based "
     "search, next to the sensitivity the proof claims, round by round.", sensitivity_png),
    ("regret", "Regret", "Regret of the audited learner (and any baselines) as the horizon grows.",
     regret_png),
)


def render_plots(record: Mapping[str, Any]) -> tuple[list[Plot], list[str]]:
    """Draw every figure the saved audit has data for.

    Returns ``(plots, problems)``: the drawn figures in reading order, and one sentence per figure
    whose saved data could not be drawn (reports print these instead of failing).
    """
    plots: list[Plot] = []
    problems: list[str] = []
    points = record.get("points") or []
    if points:
        try:
            plots.append(Plot("evidence", "Evidence against the claim, point by point",
                              "Each audited parameter point: exact, accountant and empirical "
                              "lower-bound epsilon divided by the claimed epsilon. Points right of "
                              "the dashed line exceed the claim.", evidence_png(points)))
        except PlotError as exc:
            problems.append(f"The evidence chart was not drawn: {exc}.")
    figures = record.get("figures") or {}
    for name, title, caption, draw in _FIGURES:
        spec = figures.get(name)
        if not spec:
            continue
        try:
            if not isinstance(spec, Mapping):
                raise PlotError("its data is not a JSON object")
            plots.append(Plot(name, title, caption, draw(spec)))
        except (PlotError, TypeError, ValueError) as exc:
            problems.append(f"The {name.replace('_', ' ')} figure was not drawn: {exc}.")
    return plots, problems
