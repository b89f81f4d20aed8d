"""``dpaudit gate``: the anytime-valid sequential gate as a CI step.

Two forms::

    dpaudit gate CLAIM_ID [--budget B] [--max-samples N] [--seed N] [--alpha A] [--json]
    dpaudit gate --mechanism MODULE:FUNCTION --data0 VALUE --data1 VALUE --epsilon E
                 [--delta D] [--max-samples N] [--seed N] [--alpha A] [--json]

The first runs :func:`dpaudit.claims.claim_gate.gate_claim` on the black-box pairs the claim
driver would test (alpha shared over them); the second runs
:func:`dpaudit.blackbox.sequential_gate.sequential_gate` on ``FUNCTION(data, n, rng)`` imported from
``MODULE`` (a dotted name, importable from the current folder, or a path to a ``.py`` file), with
``VALUE`` a Python literal (``[1, 0, 1]``, ``3.5``). One line per gated pair; exit 1 when a gate
stopped with "violated", 0 otherwise (not evidence that the claim holds), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from dpaudit.runner import EXIT_OK, EXIT_VIOLATED, UsageError

__all__ = ["cmd_gate", "gate_line"]


def gate_line(result: Any, label: str) -> str:
    """One line for a gate's result: outcome, runs per input, log-wealth against its threshold."""
    d = result.to_dict()
    if result.verdict == "violated":
        head = (f"violated      after {d['runs_per_input']} runs per input ({d['stopped_at']} bet "
                f"on): log-wealth {d['log_wealth']:.4g} >= ln(1/alpha) = "
                f"{d['threshold_log_wealth']:.4g}")
        event = ((d.get("event") or {}).get("event") or {}).get("description")
        if event:
            head += f"; event {event}"
    else:
        head = (f"not violated  within {d['runs_per_input']} runs per input: largest log-wealth "
                f"{d['max_log_wealth']:.4g} < ln(1/alpha) = {d['threshold_log_wealth']:.4g}")
    return f"{head} [alpha {d['alpha']:.3g}, seed {d['seed']}] {label}"


def _literal(text: str, option: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise UsageError(f"{option} must be a Python literal such as [1, 0, 1] or 3.5, got "
                         f"{text!r}") from None


def _function(spec: str) -> Callable[..., Any]:
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--mechanism must be MODULE:FUNCTION (a dotted module or a .py path), "
                         f"got {spec!r}")
    try:
        if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
            path = Path(module_name).expanduser().resolve()
            if not path.is_file():
                raise UsageError(f"--mechanism {spec!r}: no such file {module_name}")
            if str(path.parent) not in sys.path:  # its siblings import, as `python path.py`
                sys.path.insert(0, str(path.parent))
            module_spec = importlib.util.spec_from_file_location(f"dpaudit_gate_{path.stem}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.insert(0, str(Path.cwd()))  # as `python -m` finds the user's modules
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except (Exception, SystemExit) as exc:
        raise UsageError(f"--mechanism {spec!r}: {module_name} failed to import: "
                         f"{type(exc).__name__}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise UsageError(f"--mechanism {spec!r}: {module_name} has no function {attr!r}")
    return fn


def _gate_mechanism(args: argparse.Namespace, out: TextIO) -> int:
    from dpaudit.blackbox.sequential_gate import sequential_gate

    missing = [o for o, v in (("--data0", args.data0), ("--data1", args.data1),
                              ("--epsilon", args.epsilon)) if v is None]
    if missing:
        raise UsageError(f"dpaudit gate --mechanism needs {', '.join(missing)}")
    mechanism = _function(args.mechanism)
    d0, d1 = _literal(args.data0, "--data0"), _literal(args.data1, "--data1")
    max_samples = args.max_samples if args.max_samples is not None else 100_000
    try:
        result = sequential_gate(mechanism, d0, d1, epsilon=args.epsilon, delta=args.delta,
                                 alpha=args.alpha, max_samples=max_samples, seed=args.seed)
    except (ValueError, TypeError) as exc:  # the mechanism's contract or the claim
        raise UsageError(str(exc)) from None
    if args.json:
        out.write(json.dumps({"mechanism": args.mechanism, "data0": args.data0,
                              "data1": args.data1, "evidence": "sequential gate (anytime-valid)",
                              "gate": result.to_dict()}, indent=2, default=str) + "\n")
    else:
        out.write(gate_line(result, f"{args.mechanism} data0={args.data0} data1={args.data1} "
                                    f"claim ({args.epsilon:g}, {args.delta:g})") + "\n")
    return EXIT_VIOLATED if result.verdict == "violated" else EXIT_OK


def _gate_claim(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.claims.claim_gate import claim_declaration, gate_claim
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.verdict import format_parameters
    from dpaudit.runner import resolve_claim_ids

    [claim_id] = resolve_claim_ids([args.claim_id], False, patterns=False)
    try:
        decl = claim_declaration(claim_id)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def progress(done: int, total: int, label: str) -> None:
        if not args.quiet and label != "done":
            print(f"{claim_id}: {label}", file=err)

    ctx = AuditContext(BUDGETS[args.budget], args.seed, args.alpha, progress=progress)
    gate = gate_claim(decl, ctx, max_samples=args.max_samples)
    if args.json:
        out.write(json.dumps(gate.to_dict(), indent=2, default=str) + "\n")
    else:
        for g in gate.gated:
            out.write(gate_line(g.result, f"{claim_id} at ({format_parameters(g.parameters)}), "
                                          f"{g.pair}") + "\n")
        for n in gate.not_gated:
            out.write(f"not gated     {claim_id} at ({format_parameters(n.parameters)}): "
                      f"{n.reason}\n")
        stopped = sum(g.violated for g in gate.gated)
        out.write(f"{claim_id}: {stopped} of {len(gate.gated)} gated pair"
                  f"{'s' if len(gate.gated) != 1 else ''} violated (alpha {args.alpha:g} shared "
                  "over them); a gate that does not stop is not evidence that the claim holds\n")
    return EXIT_VIOLATED if gate.violated else EXIT_OK


def cmd_gate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``dpaudit gate`` (module docstring); returns the exit status."""
    if (args.claim_id is None) == (args.mechanism is None):
        raise UsageError("dpaudit gate needs either a CLAIM_ID or --mechanism MODULE:FUNCTION "
                         "(with --data0, --data1 and --epsilon), not both")
    if args.mechanism is not None:
        return _gate_mechanism(args, out)
    extra = [o for o, v in (("--data0", args.data0), ("--data1", args.data1),
                            ("--epsilon", args.epsilon)) if v is not None]
    if extra or args.delta != 0.0:
        raise UsageError(f"{', '.join(extra) or '--delta'} only go with --mechanism (a claim "
                         "states its own pairs and epsilon)")
    return _gate_claim(args, out, err)
