"""Regression guard: every bundled claim's quick-budget audit (seed 0) equals its golden record.

See ``tests/golden_audits.py`` for how the records are made and when they may change.

The comparison is structural, not byte for byte: verdicts, ids, strings, integers,
booleans, keys and list lengths must be equal exactly; floats must agree to a relative tolerance of
``FLOAT_RTOL`` (absolute ``FLOAT_ATOL`` near zero). numpy dispatches different float kernels on
different CPUs (SSE, AVX2, AVX-512), which moves the last digits of an audit's numbers while every
verdict and printed digit stays the same; a byte comparison made ``make test`` fail on any machine
but the one that wrote the records. ``FLOAT_RTOL`` sits two orders of magnitude above the largest
kernel spread measured and at the precision reports print (6 significant digits). On a mismatch the message lists which claims
moved and, for each, the JSON paths that changed with their old and new values (a structured diff). Cost: one fresh interpreter per paper (not per claim) audits that paper's
claims in sequence, so the ~2 s import of dpaudit is paid five times instead of 37; every claim
audit runs its Hypothesis searches inside ``independent_of_loaded_modules``, so a record does not
depend on which claims ran before it in the process (checked: the per-paper run reproduces all 37
records byte for byte). Each paper's audits run once per test session.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from dpaudit.claims.registry import all_claims
from golden_audits import golden_path

CLAIM_IDS = [rc.claim.id for rc in all_claims()]
PAPERS: dict[str, list[str]] = {}
for _cid in CLAIM_IDS:
    PAPERS.setdefault(_cid.split("/")[0], []).append(_cid)
#: At most this many moved paths are listed per claim in a failure message.
MAX_PATHS = 25
#: Float tolerance of the golden comparison: relative, with an absolute floor for values near 0.
#: Measured CPU-kernel spread: plain arithmetic moves by ~1e-14 relative (AVX2 vs AVX-512:
#: 0.022502385327391572 -> 0.022502385327391794); numbers that come out of a discretised or
#: iterative computation move more, because the last bits steer it: jkt12's PLD privacy curves
#: (computed to rel_error 1e-4) moved by up to 9.5e-9 relative between numpy's baseline (SSE) and
#: AVX2 kernels on one machine (`NPY_DISABLE_CPU_FEATURES="X86_V3"`, all 37 records, 2026-11-28).
#: 1e-6 leaves a factor 100 above that and still fails any change in the 6th significant digit,
#: the most a report prints.
FLOAT_RTOL = 1e-6
FLOAT_ATOL = 1e-12


def _floats_agree(old: float, new: float) -> bool:
    if math.isnan(old) or math.isnan(new):
        return math.isnan(old) and math.isnan(new)
    return math.isclose(old, new, rel_tol=FLOAT_RTOL, abs_tol=FLOAT_ATOL)


def json_diff(old: Any, new: Any, path: str = "$", *,
              tolerant: bool = False) -> Iterator[tuple[str, Any, Any]]:
    """The leaves where two JSON values differ: ``(path, old, new)``; a key or list item present on
    one side only is reported with ``"<absent>"`` on the other. With ``tolerant``, two floats (and
    only floats: an int never equals a float) count as equal within ``FLOAT_RTOL``/``FLOAT_ATOL``."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            yield from json_diff(old.get(k, "<absent>"), new.get(k, "<absent>"), f"{path}.{k}",
                                 tolerant=tolerant)
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from json_diff(old[i] if i < len(old) else "<absent>",
                                 new[i] if i < len(new) else "<absent>", f"{path}[{i}]",
                                 tolerant=tolerant)
    elif tolerant and type(old) is float and type(new) is float:
        if not _floats_agree(old, new):
            yield path, old, new
    elif old != new or type(old) is not type(new):
        yield path, old, new


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 100 else text[:97] + "..."


def moved_paths(golden: str, fresh: str) -> list[tuple[str, Any, Any]]:
    """What the golden test fails on: every leaf that differs beyond the float tolerance."""
    return list(json_diff(json.loads(golden), json.loads(fresh), tolerant=True))


def describe_moves(claim_id: str, golden: str, fresh: str) -> str:
    """One paragraph per moved claim: the JSON paths that moved beyond the tolerance, old -> new."""
    moves = moved_paths(golden, fresh)
    if not moves:
        return f"{claim_id}: same JSON within the float tolerance"
    lines = [f"{claim_id}: {len(moves)} field(s) moved"]
    lines += [f"  {p}: {_short(a)} -> {_short(b)}" for p, a, b in moves[:MAX_PATHS]]
    if len(moves) > MAX_PATHS:
        lines.append(f"  ... and {len(moves) - MAX_PATHS} more")
    return "\n".join(lines)


def test_every_bundled_claim_has_a_golden_record() -> None:
    missing = [c for c in CLAIM_IDS if not golden_path(c).exists()]
    assert not missing, f"no golden record for {missing}; run tests/golden_audits.py"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_quick_audits_reproduce_golden_records(paper: str) -> None:
    ids = PAPERS[paper]
    missing = [c for c in ids if not golden_path(c).exists()]
    assert not missing, f"no golden record for {missing}"
    # A fresh interpreter per paper, as `dpaudit audit` runs a claim: nothing from other test
    # modules (imported plugins, Hypothesis state) reaches the audits.
    script = Path(__file__).with_name("golden_audits.py")
    fresh = json.loads(subprocess.run([sys.executable, str(script), "--print-json", *ids],
                                      check=True, capture_output=True, text=True).stdout)
    moved = [c for c in ids if moved_paths(golden_path(c).read_text(encoding="utf-8"), fresh[c])]
    assert not moved, (
        "the quick audits of these claims no longer reproduce their golden records; if the change "
        "is meant to alter these results, regenerate with tests/golden_audits.py CLAIM_ID and say "
        "why in the commit.\n" + "\n".join(
            describe_moves(c, golden_path(c).read_text(encoding="utf-8"), fresh[c])
            for c in moved))


def test_structured_diff_names_the_moved_paths() -> None:
    old = json.dumps({"verdict": "violated", "points": [{"e": 1.0}, {"e": 2.0}], "x": 1})
    new = json.dumps({"verdict": "holds", "points": [{"e": 1.0}, {"e": 2.5}, {"e": 3.0}]})
    text = describe_moves("p/c", old, new)
    assert "$.verdict: 'violated' -> 'holds'" in text
    assert "$.points[1].e: 2.0 -> 2.5" in text
    assert "$.points[2]: '<absent>' -> " in text and "$.x: 1 -> '<absent>'" in text
    assert "4 field(s) moved" in text
    assert "within the float tolerance" in describe_moves("p/c", '{"a": 1}', '{"a":1}')


def test_cpu_kernel_noise_passes_and_a_real_change_fails() -> None:
    # Two values seen to move between an AVX2 and an AVX-512 machine (same code, same
    # seed): the tolerant comparison must accept them, and the byte comparison must not.
    golden = json.dumps({"verdict": "holds", "points": [{"epsilon_exact": 0.022502385327391572,
                                                          "curve": [1.3827112210239476, 0.0]}]})
    cpu = json.dumps({"verdict": "holds", "points": [{"epsilon_exact": 0.022502385327391794,
                                                       "curve": [1.3827112210239414, 1e-17]}]})
    assert golden != cpu and moved_paths(golden, cpu) == []
    # ... and so must the largest spread measured between numpy's SSE and AVX2 kernels (a PLD
    # privacy curve of jkt12-arxiv/pigd, 9.5e-9 relative).
    assert moved_paths(json.dumps([50.23379648036458]), json.dumps([50.23379695554246])) == []
    # A real change, in the 6th significant digit or of a value near zero, still fails.
    real = json.dumps({"verdict": "holds", "points": [{"epsilon_exact": 0.0225026,
                                                        "curve": [1.3827112210239476, 1e-6]}]})
    assert [p for p, _, _ in moved_paths(golden, real)] == [
        "$.points[0].curve[1]", "$.points[0].epsilon_exact"]
    # Strings, verdicts, ints and types stay exact: no tolerance reaches them.
    for old, new in [({"v": "holds"}, {"v": "violated"}), ({"n": 3}, {"n": 4}),
                     ({"n": 3}, {"n": 3.0}), ({"s": "eps 0.0225024"}, {"s": "eps 0.0225025"}),
                     ({"x": [1.0]}, {"x": [1.0, 2.0]}), ({"x": float("nan")}, {"x": 0.0})]:
        assert moved_paths(json.dumps(old), json.dumps(new)), (old, new)
    assert moved_paths(json.dumps({"x": float("nan")}), json.dumps({"x": float("nan")})) == []
