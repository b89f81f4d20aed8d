"""``dpaudit list``: the mechanisms, learners and registered claims with their provenance.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
from typing import Any, TextIO
from dpaudit.cli.parser import EXIT_FAILED, EXIT_OK
from dpaudit.reporting.terminal import one_line_error, text_table




# ------------------------------------------------------------------------------------------------
# dpaudit list
# ------------------------------------------------------------------------------------------------

def _first_line(doc: str | None) -> str:
    return (inspect.cleandoc(doc).splitlines() or [""])[0] if doc else ""


def _concrete_classes(package: str, base: type, problems: list[str]) -> list[dict[str, str]]:
    """Concrete subclasses of ``base`` defined in the modules of ``package``.

    A module that fails to import is skipped and described in ``problems``, so one broken module
    does not hide the rest of the catalogue.
    """
    pkg = importlib.import_module(package)
    found = []
    for info in pkgutil.iter_modules(pkg.__path__, prefix=f"{package}."):
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:
            problems.append(f"could not import {info.name} ({one_line_error(exc)})")
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, base) and cls is not base and cls.__module__ == module.__name__
                    and not inspect.isabstract(cls) and not cls.__name__.startswith("_")):
                name = cls.__dict__.get("name", cls.__name__)
                found.append({"name": str(name), "class": f"{cls.__module__}.{cls.__qualname__}",
                              "summary": _first_line(cls.__doc__)})
    return sorted(found, key=lambda d: d["class"])


def _provenance_text(claim: Any) -> str:
    p = claim.provenance
    parts = [f"{p.paper} ({p.version})" if p.version else p.paper, p.theorem]
    if p.equation:  # printed whole: --long wraps it (a Source's quote, a paper's equation)
        label = "eq." if p.kind == "paper" else "quote:"
        parts.append(f"{label} {' '.join(p.equation.split())}")
    return ", ".join(x for x in parts if x)


_MARKUP = __import__("re").compile(r"``?([^`]*)``?|:[a-z]+:`~?([^`]*)`|\*\*([^*]*)\*\*")


def _plain(text: str) -> str:
    """Docstring text without reST/Markdown markup (``code``, Sphinx roles, **bold**)."""
    return " ".join(_MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None),
                                text).split())


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 3)] + "..."


def _short_theorem(claim: Any) -> str:
    """What the statement column shows: a paper's theorem number (and version); a claim stated
    elsewhere (a :class:`dpaudit.Source` that is not a paper) in its own words."""
    p = claim.provenance
    own = " ".join(str(getattr(claim, "statement", "") or "").split())
    if own and p.kind != "paper":
        return own
    version = p.version.split(",")[0]
    return f"{p.theorem} ({version})" if version else p.theorem


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.claims.registry import all_claims
    from dpaudit.learners.base import OnlineLearner
    from dpaudit.mechanisms.base import Mechanism

    claims = list(all_claims())
    problems: list[str] = []
    mechanisms = _concrete_classes("dpaudit.mechanisms", Mechanism, problems)
    learners = _concrete_classes("dpaudit.learners", OnlineLearner, problems)
    for problem in problems:
        print(f"dpaudit: error: {problem}.", file=err)
    status = EXIT_FAILED if problems else EXIT_OK
    if args.json:
        payload = {
            "claims": [{"id": rc.claim.id, "kind": rc.kind, "epsilon": rc.claim.epsilon,
                        "delta": rc.claim.delta, "formula": rc.claim.privacy_statement,
                        "citation": rc.claim.citation,
                        "provenance": rc.claim.provenance.to_dict(),
                        "calibration": rc.claim.calibration,
                        "origin": rc.origin.to_dict()} for rc in claims],
            "mechanisms": mechanisms,
            "learners": learners,
        }
        out.write(json.dumps(payload, indent=2) + "\n")
        return status
    # Fits a 100-column terminal; --long adds the details on their own lines.
    if claims:
        out.write(f"Claims ({len(claims)}; audit one with `dpaudit audit CLAIM_ID`, details with "
                  "--long):\n")
        foreign = sorted({rc.origin.describe() for rc in claims if rc.origin.kind != "bundled"})
        if foreign:
            out.write("  (not bundled: " + "; ".join(foreign) + ")\n")
        # The claimed formula is never cut (it is the claim): a long one wraps onto continuation
        # lines of its column; the statement column takes the rest of a 100-column terminal.
        import textwrap

        id_w = max(len(rc.claim.id) for rc in claims)
        claim_w = min(30, max(len(f"{rc.claim.privacy_statement}-DP") for rc in claims))
        rows, first_rows = [], []
        for rc in claims:
            parts = textwrap.wrap(f"{rc.claim.privacy_statement}-DP", claim_w,
                                  break_long_words=True, break_on_hyphens=False) or [""]
            first_rows.append(len(rows))
            rows.append([rc.claim.id, parts[0],
                         _fit(_short_theorem(rc.claim), max(20, 96 - id_w - claim_w - 4))])
            rows += [["", more, ""] for more in parts[1:]]
        table = text_table(["id", "claimed", "statement"], rows)
        if args.long:
            lines = table.splitlines()
            body = lines[len(lines) - len(rows):]
            out_lines = ["  " + line for line in lines[:len(lines) - len(rows)]]
            bounds = first_rows + [len(rows)]
            for k, rc in enumerate(claims):
                out_lines += ["  " + line for line in body[bounds[k]:bounds[k + 1]]]
                c = rc.claim
                for label, value in (("claimed", f"{c.privacy_statement}-DP (e.g. "
                                                 f"({c.epsilon:.4g}, {c.delta:.3g}))"),
                                     ("paper", c.citation or _provenance_text(c)),
                                     ("where", _provenance_text(c)),
                                     ("calibration", c.calibration), ("kind", rc.kind),
                                     ("from", rc.origin.describe())):
                    if value:
                        out_lines += ["      " + w for w in __import__("textwrap").wrap(
                            f"{label}: {_plain(value)}", 92, subsequent_indent="  ")]
            out.write("\n".join(out_lines) + "\n")
        else:
            out.write(_indent(table) + "\n")
    else:
        out.write("Claims: none registered yet.\n")
    for title, items in (("Mechanisms", mechanisms), ("Learners", learners)):
        out.write(f"\n{title} ({len(items)}):\n")
        if items:
            if args.long:
                rows = [[d["name"], d["class"], _plain(d["summary"])] for d in items]
                out.write(_indent(text_table(["name", "class", "summary"], rows)) + "\n")
            else:
                width = max(len(d["name"]) for d in items)
                rows = [[d["name"], _fit(_plain(d["summary"]), max(20, 96 - width - 4))]
                        for d in items]
                out.write(_indent(text_table(["name", "summary"], rows)) + "\n")
        else:
            out.write("  none yet.\n")
    return status


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
