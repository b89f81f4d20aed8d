"""Fuzz the failure classes of issue 32 (round 4: the user path) and print a table of outcomes.

Run: ``PYTHONPATH=src:tests:scripts python scripts/fuzz_reliability_round4.py [--seed N] [--quick]``.
Outcomes per case: ok (the right verdict, or a clean run), clear error (ValueError/TypeError or CLI
exit 2 naming the field, pair, plugin or mechanism), wrong answer (a verdict the evidence refutes:
`holds` with a lower bound above the accountant, a self-seeded release audited as random, a stale
resumed verdict, a non-neighbouring pair audited, a silent exit 0, a crash hidden behind exit 1,
a holds sentence hiding user-supplied numbers), traceback (a raw exception or CLI exit 3 where an
error should be clear), hang (alarm after 120 s), data lost (a record lost or a directory left
unreadable), outside writes (a file written outside the case's temporary directory: the
worktree and the home folder are compared before and after each category).
The round-3 helpers (alarm, Hang) are reused from scripts/fuzz_reliability_round3.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_reliability_round3 import Hang, alarm  # noqa: E402

OUTCOMES = ["ok", "clear error", "wrong answer", "traceback", "hang", "data lost",
            "outside writes"]
TABLE: dict[str, Counter] = defaultdict(Counter)
ROOT = Path(__file__).resolve().parents[1]


def record(category: str, outcome: str, detail: str = "") -> None:
    TABLE[category][outcome] += 1
    if outcome not in ("ok", "clear error"):
        print(f"  [{category}] {outcome}: {detail[:300]}", file=sys.stderr)


def _snapshot() -> dict[str, int]:
    """mtimes of the worktree's files (outside .venv/.git/caches) and the home folder's top."""
    seen = {}
    for base, skip in ((ROOT, {".venv", ".git", ".hypothesis", ".pytest_cache", "__pycache__"}),):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in skip]
            for f in filenames:
                p = os.path.join(dirpath, f)
                with contextlib.suppress(OSError):
                    seen[p] = os.stat(p).st_mtime_ns
    home = Path.home()
    with contextlib.suppress(OSError):
        for p in home.iterdir():
            with contextlib.suppress(OSError):
                seen[str(p)] = p.stat().st_mtime_ns
    return seen


@contextlib.contextmanager
def category(name: str):
    before = _snapshot()
    yield
    after = _snapshot()
    changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
    if changed:
        record(name, "outside writes", ", ".join(sorted(changed)[:3]))


def _cli(*argv: str) -> tuple[int, str, str]:
    from dpaudit import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # the process would end with this status, silently
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def _claim(cid: str, scale: float = 1.0, **kw):
    import dpaudit
    from dpaudit import Claim, Source

    def release(p, scale=scale):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, scale, size=n)
        return mechanism
    args = dict(id=cid, statement="The noisy sum is eps-DP.", source=Source(title="fuzz"),
                claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{}],
                release=release, pairs=lambda p: [([1.0], [])], samples=2_000,
                accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0, sensitivity=1.0))
    args.update(kw)
    return Claim(**args)


def _run(cat: str, fn, *, expect_error: bool = False) -> None:
    """Run one case: fn() returns None (ok) or a string (wrong answer / data lost: 'lost: ...')."""
    try:
        with alarm(120):
            bad = fn()
    except Hang:
        record(cat, "hang")
        return
    except (ValueError, TypeError) as exc:
        record(cat, "clear error" if expect_error else "wrong answer",
               f"{type(exc).__name__}: {exc}")
        return
    except BaseException as exc:  # noqa: BLE001 - a fuzzer records everything
        record(cat, "traceback", f"{type(exc).__name__}: {exc}")
        return
    if not isinstance(bad, str):  # None, or what a constructor returned: no error
        record(cat, "wrong answer" if expect_error else "ok", "no error raised")
    elif bad.startswith("lost:"):
        record(cat, "data lost", bad)
    else:
        record(cat, "wrong answer", bad)


def _forget(prefix: str) -> None:
    from dpaudit.claims import registry

    for cid in [c for c in registry._REGISTRY if c.startswith(prefix)]:
        registry.unregister(cid)


# -- 1: lower bound above the accountant ------------------------------------------------------------

def fuzz_accountant_below_bound(rng: random.Random, n: int) -> None:
    import dpaudit

    cat = "1 lower bound above the accountant"
    for k in range(n):
        scale = rng.choice([0.8, 1.0, 1.25])
        claimed = rng.choice([1.0, 1.5, 2.0])
        acc = rng.choice([0.3, 0.5, 0.6, 1.0 / scale])
        own = rng.random() < 0.5
        accountant = ((lambda p, a=acc: dpaudit.noise.LaplaceNoise(1.0 / a, sensitivity=1.0))
                      if own else (lambda p, a=acc: a))

        def case():
            res = dpaudit.audit_claim(_claim(f"fz1/c{k}", scale, claimed=lambda p: (claimed, 0.0),
                                             accountant=accountant), seed=rng.randrange(99))
            lb = res.points[0].epsilon_lower_bound
            if res.verdict == "holds" and lb > acc * (1 + 1e-6):
                return f"holds with lower bound {lb:.3g} > accountant {acc:.3g}"
            if res.verdict == "violated" and 1.0 / scale <= claimed:
                return f"false alarm: true eps {1 / scale:.3g} <= claim {claimed}"
            return None
        _run(cat, case)
    _forget("fz1/")


# -- 2: self-seeded mechanisms ---------------------------------------------------------------------

def fuzz_self_seeded(rng: random.Random, n: int) -> None:
    import dpaudit

    cat = "2 self-seeded mechanism"
    makers = [
        lambda s: lambda d, k, g: (np.random.seed(s), float(np.sum(d)) + np.random.laplace(
            size=k))[1],
        lambda s: lambda d, k, g: float(np.sum(d)) + np.random.default_rng(s).laplace(size=k),
        lambda s: lambda d, k, g: np.array([float(np.sum(d)) + r.gauss(0, 1) for r in
                                            [random.Random(s)] for _ in range(k)]),
        lambda s: lambda d, k, g: float(np.sum(d)) + np.random.RandomState(s).normal(size=k),
        lambda s: lambda d, k, g: (np.random.default_rng(s).random(k) < 0.7).astype(int)
        ^ int(np.sum(d) > 0),
    ]
    for k in range(n):
        mech = rng.choice(makers)(rng.randrange(1000))
        via_claim = rng.random() < 0.5

        def case():
            if via_claim:
                res = dpaudit.audit_claim(_claim(f"fz2/c{k}", release=lambda p: mech),
                                          seed=rng.randrange(99))
                return f"audited as random: {res.verdict}"
            res = dpaudit.audit(mech, [0.0], [1.0], epsilon=1.0, samples=2_000,
                                seed=rng.randrange(99))
            return f"audited as random: {res.verdict}"
        _run(cat, case, expect_error=True)
    _forget("fz2/")


# -- 3: stale resume ------------------------------------------------------------------------------

def fuzz_stale_resume(rng: random.Random, n: int, base: Path) -> None:
    import importlib

    import dpaudit
    from dpaudit.runner import resume

    cat = "3 stale resume"
    for k in range(n):
        kind = rng.choice(["re-register", "module elsewhere", "python -c"] if k < 2 else
                          ["re-register", "module elsewhere"])
        out = base / f"resume{k}"

        def case():
            if kind == "re-register":
                first = dpaudit.audit_claim(_claim(f"fz3/c{k}", 1.0), out=out)
                again = dpaudit.audit_claim(_claim(f"fz3/c{k}", rng.choice([0.1, 0.2])), out=out)
                if first.verdict != "holds" or again.verdict != "violated":
                    return f"re-registered release: {first.verdict} then {again.verdict}"
                return None
            if kind == "module elsewhere":
                folder = base / f"learners{k}"
                folder.mkdir()
                name = f"fz3_learner_{k}"
                (folder / f"{name}.py").write_text("SCALE = 1.0\n")
                sys.path.insert(0, str(folder))
                try:
                    mod = importlib.import_module(name)
                    dpaudit.register_claim(_claim(f"fz3/m{k}", mod.SCALE))
                    h = resume.audit_code_hash(f"fz3/m{k}")
                    (folder / f"{name}.py").write_text("SCALE = 0.1\n")
                    if resume.audit_code_hash(f"fz3/m{k}") == h:
                        return "a changed imported module kept the resume key"
                finally:
                    sys.path.remove(str(folder))
                    sys.modules.pop(name, None)
                return None
            script = ("import numpy as np, dpaudit\nfrom dpaudit import Claim, Source\n"
                      "r = dpaudit.audit_claim(Claim(id='fz3/c', statement='s', source=Source("
                      "title='t'), claimed=lambda p: (1.0, 0.0), neighbours='add-remove', "
                      "grid=[{{}}], release=lambda p: lambda d, n, g: float(np.sum(d)) + "
                      "g.laplace(0, {s}, n), pairs=lambda p: [([1.0], [])], accountant="
                      "lambda p: 1.0, samples=2000), out={o!r})\nprint(r.verdict)\n")
            verdicts = []
            for s in (1.0, 0.1):
                proc = subprocess.run([sys.executable, "-c", script.format(s=s, o=str(out))],
                                      capture_output=True, text=True, timeout=300)
                verdicts.append(proc.stdout.strip() or proc.stderr[-200:])
            return None if verdicts == ["holds", "violated"] else f"python -c: {verdicts}"
        _run(cat, case)
    _forget("fz3/")


# -- 4: declared pairs and the neighbouring relation ----------------------------------------------

def _neighbours(a: list, b: list, relation: str) -> bool:
    """Independent check: replace-one = same length, multisets differ by one swap or position;
    add-remove = lengths differ by one and the shorter is a sub-multiset of the longer."""
    from collections import Counter as C

    if relation == "replace-one":
        return len(a) == len(b) and (sum(x != y for x, y in zip(a, b)) <= 1
                                     or sum((C(a) - C(b)).values()) <= 1)
    short, long_ = sorted((a, b), key=len)
    return len(long_) - len(short) == 1 and not (C(short) - C(long_))


def fuzz_pairs(rng: random.Random, n: int) -> None:
    import dpaudit

    cat = "4 declared pairs vs neighbours"
    for k in range(n):
        relation = rng.choice(["replace-one", "add-remove"])
        a = [float(rng.randrange(3)) for _ in range(rng.randrange(0, 4))]
        b = list(a)
        move = rng.choice(["replace", "add", "remove", "two", "same-len-two", "shuffle-add"])
        if move == "replace" and b:
            b[rng.randrange(len(b))] += 1.0
        elif move == "add":
            b.insert(rng.randrange(len(b) + 1), 5.0)
        elif move == "remove" and b:
            b.pop(rng.randrange(len(b)))
        elif move == "two":
            b += [5.0, 6.0]
        elif move == "same-len-two" and len(b) >= 2:
            b[0] += 1.0
            b[1] += 1.0
        elif move == "shuffle-add":
            b = list(reversed(b)) + [4.0]
        if a == b:
            b = a + [7.0]
        expected = _neighbours(a, b, relation)
        as_array = rng.random() < 0.3

        def case():
            pair = (np.array(a), np.array(b)) if as_array else (a, b)
            dpaudit.audit_claim(_claim(f"fz4/c{k}", neighbours=relation, pairs=lambda p: [pair],
                                       accountant=lambda p: 1.0), seed=0)
            return None
        if expected:
            _run(cat, case)
        else:
            _run(cat, case, expect_error=True)
    _forget("fz4/")


# -- 5, 6, 8, 12: plugins, exits, names ----------------------------------------------------------

PLUGIN = ("import numpy as np, dpaudit\nfrom dpaudit import Claim, Source\n"
          "dpaudit.register_claim(Claim(id='fz5/dup', statement='s', source=Source(title='t'), "
          "claimed=lambda p: (1.0, 0.0), neighbours='add-remove', grid=[{{}}], release=lambda p:"
          " lambda d, n, g: float(np.sum(d)) + g.laplace(0, {s}, n), pairs=lambda p: [([1.0], "
          "[])], accountant=lambda p: 1.0, samples=2000))\n")


def _forget_plugins(paths) -> None:
    from dpaudit.claims import registry

    for path in paths:
        for m in [m for m in sys.modules if m.startswith(f"dpaudit_plugin_{path.stem}_")]:
            del sys.modules[m]
        registry._PLUGINS[:] = [p for p in registry._PLUGINS if p != str(path.resolve())]


def fuzz_plugins(rng: random.Random, n: int, base: Path) -> None:
    cat = "5/6/12 plugins, entry points, exits"
    for k in range(n):
        kind = rng.choice(["dup", "exit-import", "exit-mechanism", "raise-import",
                           "keyboard-interrupt"])
        paths = []

        def case():
            if kind == "dup":
                for j, s in enumerate((1.0, rng.choice([0.1, 1.0]))):
                    p = base / f"fz5_dup{k}_{j}.py"
                    p.write_text(PLUGIN.format(s=s))
                    paths.append(p)
                code, _, err = _cli("list", *sum((["--plugin", str(p)] for p in paths), []))
                if code != 2 or str(paths[0].resolve()) not in err:
                    return f"two plugins with one id: exit {code} {err.strip()[:100]}"
                raise ValueError(err)
            if kind in ("exit-import", "raise-import", "keyboard-interrupt"):
                p = base / f"fz5_{kind.replace('-', '_')}{k}.py"
                p.write_text({"exit-import": f"import sys\nsys.exit({rng.choice([0, 1, None])})\n",
                              "raise-import": "raise RuntimeError('boom')\n",
                              "keyboard-interrupt": "raise KeyboardInterrupt\n"}[kind])
                paths.append(p)
                code, out, err = _cli(rng.choice(["list", "audit-claims"]), "--plugin", str(p))
                want = 130 if kind == "keyboard-interrupt" else 2
                if code != want or "Traceback" in err:
                    return f"{kind}: exit {code} {err.strip()[:100]}"
                raise ValueError(err)
            import dpaudit

            def release(p):
                def mechanism(d, n, g):
                    sys.exit(0)
                return mechanism
            dpaudit.register_claim(_claim(f"fz6/x{k}", release=release))
            dpaudit.register_claim(_claim(f"fz6/v{k}", 0.1))
            code, _, err = _cli("audit-claims", f"fz6/x{k}", f"fz6/v{k}", "--budget", "quick",
                                "--quiet", "--out", str(base / f"exit{k}"))
            if code != 3:
                return f"sys.exit in a release + a violation: exit {code}"
            index = json.loads((base / f"exit{k}" / "index.json").read_text())
            if [c["id"] for c in index["claims"]] != [f"fz6/v{k}"]:
                return "lost: the finished claim is not indexed"
            raise ValueError(err)
        try:
            _run(cat, case, expect_error=True)
        finally:
            _forget_plugins(paths)
            _forget("fz5/")
            _forget("fz6/")


def fuzz_names_and_messages(rng: random.Random, n: int) -> None:
    import dpaudit

    cat = "8/12 reserved ids, raw messages"
    cases = [
        lambda: _claim("papers/fz8"),
        lambda: _claim("index.html/fz8"),
        lambda: _claim("fz12/g", grid=[1.0]),
        lambda: dpaudit.audit_claim(_claim("fz12/p", pairs=lambda p: None)),
        lambda: dpaudit.audit_claim(_claim("fz12/e", exact_value=lambda p, a, b: None)),
        lambda: dpaudit.audit_claim(_claim("fz12/s", exact_value=lambda p, a, b: "1")),
        lambda: dpaudit.audit(lambda d, k, g: np.zeros(k, dtype=[("a", "f8"), ("b", "i4")]),
                              0.0, 1.0, epsilon=1.0, samples=2_000),
    ]
    for _ in range(n):
        _run(cat, rng.choice(cases), expect_error=True)
    _forget("fz12/")


# -- 9: failed reruns ----------------------------------------------------------------------------

def fuzz_failed_reruns(rng: random.Random, n: int, base: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_claims import A, B, fake_audit, fake_claim

    from dpaudit.claims import registry
    from dpaudit.runner import execute

    cat = "9 failed reruns"
    for k in range(n):
        out = base / f"rerun{k}"
        saved_registry = dict(registry._REGISTRY)
        registry._REGISTRY.clear()
        registry.register(fake_claim(A), fake_audit(A, 1.0))
        registry.register(fake_claim(B), fake_audit(B, 2.0))
        extra = rng.choice([["--fresh"], ["--budget", "standard"], ["--seed", "3"], []])
        real = execute.audit_record

        def case():
            _cli("audit-claims", A, B, "--budget", "quick", "--quiet", "--out", str(out))

            def transient(*a, **kw):
                raise rng.choice([OSError("EAGAIN"), MemoryError(), RuntimeError("flaky")])
            execute.audit_record = transient
            try:
                code, _, err = _cli("audit-claims", B, "--budget", "quick", "--quiet", "--out",
                                    str(out), *extra)
            finally:
                execute.audit_record = real
            if code != (1 if extra == [] else 3):  # [] : same settings, resumed (B violated)
                return f"a failed rerun exited {code}"
            code, _, err = _cli("report", str(out))
            if code != 0:
                return f"lost: report exits {code}: {err.strip()[:120]}"
            same = extra in (["--fresh"], [])
            if same and not (out / "fake-colt" / "b.json").is_file():
                return "lost: the previous result of the same settings was deleted"
            return None
        try:
            _run(cat, case)
        finally:
            registry._REGISTRY.clear()
            registry._REGISTRY.update(saved_registry)


# -- 10: Hypothesis errors in the pair search ----------------------------------------------------

def fuzz_pair_search(rng: random.Random, n: int) -> None:
    from hypothesis import strategies as st

    from dpaudit.blackbox.pair_search import search_pairs

    cat = "10 pair search (Hypothesis errors)"

    def total(x):
        return float(np.sum(np.asarray(x, dtype=float)))
    strategies = [
        (st.lists(st.integers(0, 2), min_size=1, max_size=3).map(lambda r: (r, r[:-1])), False),
        (st.tuples(st.integers(0, 3), st.integers(0, 3)).map(lambda t: ([t[0]], [t[1]])), False),
        (st.nothing(), True),
        (st.just(([1.0], [0.0])).filter(lambda p: False), True),
        (st.sampled_from([([0.0], [0.0]), ([1.0], [1.0])]), True),  # only identical inputs
    ]
    for _ in range(n):
        strategy, empty = rng.choice(strategies)

        def case():
            search_pairs(strategy, lambda a, b: abs(total(a) - total(b)), rng.choice([4, 16]),
                         rng.randrange(1000),
                         skip=lambda a, b: "same sum" if total(a) == total(b) else None)
            return None
        _run(cat, case, expect_error=empty)


# -- 11: user-supplied numbers in the holds sentence ---------------------------------------------

def fuzz_user_supplied_sentence(rng: random.Random, n: int) -> None:
    import dpaudit

    cat = "11 holds sentence, user-supplied"
    for k in range(n):
        user_acc = rng.random() < 0.5
        user_exact = rng.random() < 0.5 or not user_acc
        kw = {}
        if user_acc:
            kw["accountant"] = lambda p: 1.0
        if user_exact:
            kw["exact_value"] = lambda p, a, b: 1.0

        def case():
            res = dpaudit.audit_claim(_claim(f"fz11/c{k}", **kw), seed=rng.randrange(99))
            verdict, reason = res.verdict_and_reason
            if verdict == "holds" and "user-supplied" not in reason:
                return f"holds sentence without 'user-supplied': {reason}"
            return None
        _run(cat, case)
    _forget("fz11/")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scale = 1 if args.quick else 2
    with tempfile.TemporaryDirectory(prefix="dpaudit-fuzz4-") as tmp:
        base = Path(tmp)
        os.chdir(base)
        for name, run in [
            ("1 lower bound above the accountant", lambda: fuzz_accountant_below_bound(
                rng, 6 * scale)),
            ("2 self-seeded mechanism", lambda: fuzz_self_seeded(rng, 10 * scale)),
            ("3 stale resume", lambda: fuzz_stale_resume(rng, 4 * scale, base)),
            ("4 declared pairs vs neighbours", lambda: fuzz_pairs(rng, 20 * scale)),
            ("5/6/12 plugins, entry points, exits", lambda: fuzz_plugins(rng, 10 * scale, base)),
            ("8/12 reserved ids, raw messages", lambda: fuzz_names_and_messages(rng, 10 * scale)),
            ("9 failed reruns", lambda: fuzz_failed_reruns(rng, 5 * scale, base)),
            ("10 pair search (Hypothesis errors)", lambda: fuzz_pair_search(rng, 10 * scale)),
            ("11 holds sentence, user-supplied", lambda: fuzz_user_supplied_sentence(
                rng, 4 * scale)),
        ]:
            with category(name):
                run()
        os.chdir(ROOT)
    width = max(len(c) for c in TABLE)
    print(f"| {'category'.ljust(width)} | tried | " + " | ".join(OUTCOMES) + " |")
    print(f"|{'-' * (width + 2)}|------:|" + "|".join("-" * (len(o) + 1) + ":" for o in OUTCOMES)
          + "|")
    total: Counter = Counter()
    for cat, counts in TABLE.items():
        tried = sum(v for o, v in counts.items() if o != "outside writes")
        total.update(counts)
        print(f"| {cat.ljust(width)} | {tried} | " + " | ".join(str(counts[o]) for o in OUTCOMES)
              + " |")
    tried = sum(v for o, v in total.items() if o != "outside writes")
    print(f"| {'total'.ljust(width)} | {tried} | " + " | ".join(str(total[o]) for o in OUTCOMES)
          + " |")


if __name__ == "__main__":
    main()
