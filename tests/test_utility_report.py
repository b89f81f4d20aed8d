"""benchmarks/utility_report.py: the regret report is written, and its numbers are the JSON's.

One tiny run of both experiment scripts (a few seconds) feeds every test. The tables are checked
cell by cell against values recomputed from the JSON files the run wrote, and a re-render from
edited JSON must show the edited values: nothing in the README may be a hard-coded result.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "utility_report.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load() -> ModuleType:
    name = "_dpaudit_benchmark_utility_report"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


ur = _load()

TINY = ur.UtilityConfig(
    name="tiny",
    seed=3,
    jkt12=ur.JKT12Config(T=200, d=3, epsilons=(0.1, 10.0), logistic_T=150, logistic_d=3,
                         logistic_epsilons=(1.0, 20.0), runs=2, unit_norm_runs=2),
    st13=ur.ST13Config(horizons=(16, 64), epsilons=(1.0, 4.0), runs=3, dim=2, bandit_dim=1),
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("utility")
    ur.build_report(TINY, out)
    return out


def _section(readme: str, heading: str) -> str:
    """The text of the README section whose '## ' heading starts with ``heading``."""
    start = readme.index("## " + heading)
    end = readme.find("\n## ", start + 3)
    return readme[start:] if end < 0 else readme[start:end]


def _row(text: str, first_cell: str) -> list[str]:
    """Cells of the first table row of ``text`` whose first cell is ``first_cell``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row {first_cell!r}")


def test_readme_and_every_figure_written(report: Path) -> None:
    readme = (report / "README.md").read_text()
    linked = set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme))
    assert linked == set(ur.FIGURES.values())
    for name in linked:
        data = (report / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5_000, name
    for name in ("run.json", "jkt12_regret.json", "jkt12_olr_unit_norm.json", "st13_regret.json"):
        assert (report / name).is_file()
    for heading in ("Main numbers next to the papers", "JKT12: online linear regression",
                    "JKT12: online logistic regression", "ST13: PFTAL", "Caveats"):
        assert "## " + heading in readme
    # The papers' own reports are quoted, with their sections.
    assert "of the order of 1e-2 even with high privacy level" in readme
    assert "68.1%" in readme and "arXiv Sec. 5.2" in readme
    assert "has no experimental section" in readme


def test_settings_come_from_the_run(report: Path) -> None:
    readme = (report / "README.md").read_text()
    olr = json.loads((report / "jkt12_regret.json").read_text())["online_linear_regression"]
    assert olr["T"] == TINY.jkt12.T and olr["d"] == TINY.jkt12.d
    assert olr["n_runs"] == TINY.jkt12.runs
    text = _section(readme, "JKT12: online linear regression")
    assert f"T = {olr['T']}, d = {olr['d']}" in text
    assert f"R = {ur.fmt(olr['R'])}" in text
    st = json.loads((report / "st13_regret.json").read_text())
    assert st["meta"]["horizons"] == list(TINY.st13.horizons)
    assert "horizons 16, 64, 3 runs" in _section(readme, "ST13: PFTAL")
    assert "configuration `tiny`, seed 3" in readme


def test_table_cells_equal_the_json(report: Path) -> None:
    readme = (report / "README.md").read_text()
    jkt = json.loads((report / "jkt12_regret.json").read_text())
    unit = json.loads((report / "jkt12_olr_unit_norm.json").read_text())
    st = json.loads((report / "st13_regret.json").read_text())

    olr_text = _section(readme, "JKT12: online linear regression")
    # The two OLR tables (as generated, then R = 1) appear in that order.
    as_generated, scaled = olr_text.split("**Same data scaled to R = 1.**")
    for text, block in ((as_generated, jkt["online_linear_regression"]),
                        (scaled, unit["online_linear_regression"])):
        T = block["T"]
        for name, s in block["series"].items():
            cells = _row(text, name)
            assert cells[1:5] == [ur.fmt(s[k][-1]) for k in ("mean", "median", "min", "max")]
            p = ur.parse_series(name)
            bound = (ur.qftl_printed_bound(T, block["R"], block["alpha"]) if p is None else
                     ur.pqftl_printed_bound(p[1], T, block["d"], block["R"], block["alpha"],
                                            p[2], block["delta"]))
            assert cells[5] == ur.fmt(bound / T)
    assert unit["online_linear_regression"]["R"] == pytest.approx(1.0)

    log = jkt["online_logistic_regression"]
    log_text = _section(readme, "JKT12: online logistic regression")
    for name, s in log["series"].items():
        cells = _row(log_text, name)
        assert cells[1] == ur.fmt(s["mean"][-1])
        assert cells[3] == ur.fmt_pct(np.mean(log["accuracy_last"][name]))
        assert cells[4] == ur.fmt_pct(np.mean(log["accuracy_average"][name]))

    st_text = _section(readme, "ST13: PFTAL")
    for key in ("full_information", "bandit"):
        block = st[key]
        for name, values in block["series"].items():
            cells = _row(st_text, name)
            assert cells[1:] == [f"{ur.fmt(v)} ± {ur.fmt(se)}"
                                 for v, se in zip(values, block["stderr"][name])]
        for name, values in block["bounds"].items():
            assert _row(st_text, f"*{name}*")[1:] == [ur.fmt(v) for v in values]


def test_rerender_shows_edited_json(report: Path, tmp_path: Path) -> None:
    """Edit measured values in the JSON: the re-rendered README must carry the edits."""
    out = tmp_path / "copy"
    shutil.copytree(report, out)
    jkt = json.loads((out / "jkt12_regret.json").read_text())
    jkt["online_linear_regression"]["series"]["FTL"]["mean"][-1] = 0.000123456789
    jkt["online_logistic_regression"]["accuracy_last"]["IGD"] = [0.4321, 0.4321]
    (out / "jkt12_regret.json").write_text(json.dumps(jkt))
    st = json.loads((out / "st13_regret.json").read_text())
    first = next(iter(st["full_information"]["series"]))
    st["full_information"]["series"][first][-1] = 98765.4321
    (out / "st13_regret.json").write_text(json.dumps(st))

    ur.main(["--render-only", "--out", str(out)])
    readme = (out / "README.md").read_text()
    olr_text = _section(readme, "JKT12: online linear regression")
    assert _row(olr_text, "FTL")[1] == "0.0001235"
    assert _row(_section(readme, "JKT12: online logistic regression"), "IGD")[3] == "43.2%"
    assert _row(_section(readme, "ST13: PFTAL"), first)[-1].startswith("9.877e+04 ± ")
    assert _row(_section(readme, "Main numbers"), "JKT12 logistic, IGD accuracy")[2].startswith(
        "43.2%")


def test_printed_bounds_laws() -> None:
    # QFTL eq. (5) in closed form: R = 1, alpha = 1, T = e^2 gives 1 * 3^2 / 1 * 2 = 18.
    assert ur.qftl_printed_bound(math.e ** 2, 1.0, 1.0) == pytest.approx(18.0, rel=1e-12)
    args = dict(T=10_000, d=10, R=2.0, alpha=1.0, delta=0.01)
    q = ur.qftl_printed_bound(args["T"], args["R"], args["alpha"])
    # The versions differ only by 1/eps (COLT) against 1/sqrt(eps) (arXiv) in the noise term.
    assert (ur.pqftl_printed_bound("colt", epsilon=1.0, **args)
            == pytest.approx(ur.pqftl_printed_bound("arxiv", epsilon=1.0, **args), rel=1e-12))
    colt4 = ur.pqftl_printed_bound("colt", epsilon=4.0, **args) - q
    arxiv4 = ur.pqftl_printed_bound("arxiv", epsilon=4.0, **args) - q
    assert colt4 == pytest.approx(arxiv4 / 2.0, rel=1e-12)
    pocp = dict(T=1000, d=4, L=1.0, lam=2.0, diameter=2.0, delta=0.01)
    assert (ur.pocp_noise_term("colt", epsilon=4.0, **pocp)
            == pytest.approx(ur.pocp_noise_term("arxiv", epsilon=4.0, **pocp) / 2.0, rel=1e-12))
    # 2 sqrt(d) L (lambda + D) sqrt(T) ln^2(T/delta) / eps at eps = 1.
    assert ur.pocp_noise_term("colt", epsilon=1.0, **pocp) == pytest.approx(
        2 * 2 * 1 * 4 * math.sqrt(1000) * math.log(1000 / 0.01) ** 2, rel=1e-12)
    with pytest.raises(ValueError, match="version"):
        ur.pqftl_printed_bound("nips", epsilon=1.0, **args)


def test_series_names_parse() -> None:
    assert ur.parse_series("PQFTL-colt eps=0.01") == ("PQFTL", "colt", 0.01)
    assert ur.parse_series("PIGD-arxiv eps=20") == ("PIGD", "arxiv", 20.0)
    assert ur.parse_series("FTL") is None
    assert ur.loglog_slope([1, 10, 100], [2, 20, 200]) == pytest.approx(1.0)
    assert ur.loglog_slope([1, 10], [0.0, 1.0]) is None
