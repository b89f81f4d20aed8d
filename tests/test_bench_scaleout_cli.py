"""benchmarks/bench_scaleout.py's command line: the bare command that `make bench` runs parses to
every part (it was refused by argparse's check of a list default against the choices)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_scaleout  # noqa: E402


def test_bare_command_selects_every_part() -> None:
    args = bench_scaleout.parser().parse_args([])
    assert args.what == []  # main() reads an empty selection as all of PARTS
    assert bench_scaleout.PARTS == ("memory", "dask", "learners")


def test_named_parts_and_bad_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_scaleout.parser().parse_args(["dask", "learners"]).what == ["dask", "learners"]
    with pytest.raises(SystemExit) as exc:
        bench_scaleout.main(["network"])
    assert exc.value.code == 2
    assert "invalid choice: 'network'" in capsys.readouterr().err


def test_main_runs_every_part_when_none_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(bench_scaleout, "memory", lambda samples: ran.append("memory"))
    monkeypatch.setattr(bench_scaleout, "dask_overhead", lambda n, w: ran.append("dask"))
    monkeypatch.setattr(bench_scaleout, "learners", lambda *a: ran.append("learners"))
    bench_scaleout.main([])
    assert ran == ["memory", "dask", "learners"]
    ran.clear()
    bench_scaleout.main(["learners"])
    assert ran == ["learners"]
