"""The README's numbers cannot go stale: each one is checked against the committed reports.

Every number in the README's prose (outside code blocks, inline code, HTML comments and link
targets) must be either a year (a citation) or one of the numbers this test checks against
``reports/index.json``: the number of bundled claims, the verdict counts, the per-paper table and
the seed of the committed run. A number that is neither fails the test, so a new figure cannot be
added to the README without a check (or a move to ``docs/``, where measured numbers are recorded
with their command and machine).

The README also states the counts a newcomer sees from ``make audit`` (the quick budget), checked
against ``tests/golden/*.json``, which are exactly the quick-budget seed-0 audits of every bundled
claim, and names the claims whose verdict differs between the two budgets, with the reason
(the first numbers a newcomer compared once disagreed with no word why). Run this file as
a script to print the numbers the README must state.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INDEX = ROOT / "reports" / "index.json"
GOLDEN = ROOT / "tests" / "golden"

#: The longest README a newcomer reads in ten minutes (issue: "a README read in ten minutes").
MAX_README_LINES = 300

_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\w)")


def _prose(text: str) -> str:
    """README text with fenced code, inline code, HTML comments, ordered-list markers and link
    targets removed."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^```.*?^```", " ", text, flags=re.S | re.M)
    text = re.sub(r"^ *```.*?^ *```", " ", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"^ *\d+\. ", " ", text, flags=re.M)  # ordered-list markers
    return re.sub(r"\]\([^)]*\)", "]", text)


def _index() -> dict[str, Any]:
    return json.loads(INDEX.read_text(encoding="utf-8"))


def _quick() -> dict[str, dict[str, Any]]:
    """The quick-budget seed-0 audit of every bundled claim (the golden records), by claim id."""
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(GOLDEN.glob("*.json"))]
    assert records and all(r["budget"] == "quick" and r["seed"] == 0 for r in records)
    return {r["id"]: r for r in records}


def budget_differences(index: dict[str, Any], quick: dict[str, dict[str, Any]]) -> list[str]:
    """Ids of the claims whose quick-budget verdict differs from the committed standard one."""
    return sorted(c["id"] for c in index["claims"]
                  if c["id"] in quick and quick[c["id"]]["verdict"] != c["verdict"])


def _statistical_only(claim: dict[str, Any]) -> bool:
    """True when a violated claim's worst point is refuted by its empirical lower bound alone."""
    w = claim["worst_case"]
    exact = w.get("epsilon_exact")
    return (claim["verdict"] == "violated" and w.get("epsilon_lower_bound") is not None
            and w["epsilon_lower_bound"] > w["claimed_epsilon"]
            and (exact is None or exact <= w["claimed_epsilon"] * (1 + 1e-6)))


def _decided_off_the_quick_grid(claim: dict[str, Any], quick: dict[str, Any]) -> bool:
    """True when the standard verdict is decided at a point the quick grid never audits (the
    near-one deltas of a stated range, audited at its ends), so the quick audit cannot see it."""
    worst = claim["worst_case"]["parameters"]
    return (claim["verdict"] != quick["verdict"]
            and all(p["parameters"] != worst for p in quick["points"]))


def check_quick_numbers(readme: str, index: dict[str, Any], quick: dict[str, dict[str, Any]]
                        ) -> tuple[list[str], list[tuple[int, int]]]:
    """Check the README's quick-budget counts and the claims it says differ (see the module
    docstring); returns ``(problems, spans)`` like :func:`checked_numbers`."""
    prose = _prose(readme)
    problems: list[str] = []
    spans: list[tuple[int, int]] = []
    counts = Counter(r["verdict"] for r in quick.values())
    found = list(re.finditer(r"quick budget.*?\*\*(\d+) violated, (\d+) inconclusive, (\d+) "
                             r"holding\*\*", prose, flags=re.S))
    if len(found) != 1:
        problems.append("the README does not state the quick budget's counts once as "
                        "'**N violated, N inconclusive, N holding**'")
    for m in found:
        for group, verdict in zip((1, 2, 3), ("violated", "inconclusive", "holds")):
            spans.append(m.span(group))
            if int(m.group(group)) != counts[verdict]:
                problems.append(f"README says {m.group(group)} {verdict} at the quick budget; "
                                f"tests/golden/*.json say {counts[verdict]}")
    differ = budget_differences(index, quick)
    said = re.search(r"The claims?\s+that\s+differs?\s+(?:is|are)\s+((?:`[^`]+`[\s,]*(?:and\s+)?)+)",
                     readme)
    named = sorted(re.findall(r"`([^`]+)`", said.group(1))) if said else []
    if named != differ:
        problems.append(f"README names {named} as the claims whose verdict differs between the "
                        f"quick and the standard budget; the records say {differ}")
    by_id = {c["id"]: c for c in index["claims"]}
    for cid in differ:
        if not (_statistical_only(by_id[cid]) and quick[cid]["verdict"] != "violated"
                or _decided_off_the_quick_grid(by_id[cid], quick[cid])):
            problems.append(f"the README's reason (refuted only statistically at the standard "
                            f"budget, or decided at a point only the standard grid audits) does "
                            f"not hold for {cid}")
    return problems, spans


def _paper_key(claim_id: str) -> str:
    return claim_id.split("/", 1)[0].split("-", 1)[0]


def checked_numbers(readme: str, index: dict[str, Any]) -> tuple[list[str], list[tuple[int, int]]]:
    """Check the README's numbers against ``index``.

    Returns ``(problems, spans)``: one sentence per number that disagrees with the index, and the
    character spans (in :func:`_prose` of ``readme``) of every number that was checked.
    """
    prose = _prose(readme)
    claims = index["claims"]
    counts = Counter(c["verdict"] for c in claims)
    problems: list[str] = []
    spans: list[tuple[int, int]] = []

    def expect(pattern: str, want: int | set[int], what: str, required: bool = True) -> None:
        found = list(re.finditer(pattern, prose))
        if required and not found:
            problems.append(f"the README no longer states {what} (pattern {pattern!r})")
        for m in found:
            spans.append(m.span(1))
            got = int(m.group(1))
            ok = got in want if isinstance(want, set) else got == want
            if not ok:
                problems.append(f"README says {got} for {what}; reports/index.json says {want}")

    expect(r"\b(\d+) claims from", len(claims), "the number of bundled claims")
    expect(r"\b(\d+) claims? (?:are|is) violated", counts["violated"], "violated claims")
    expect(r"\b(\d+) (?:are|is) inconclusive", counts["inconclusive"], "inconclusive claims")
    expect(r"\b(\d+) holds?\b", counts["holds"], "claims that hold")
    expect(r"\bseed (\d+)\)", {c["seed"] for c in claims}, "the seed of the committed run")
    papers = {_paper_key(c["id"]) for c in claims}
    for m in re.finditer(r"\bfrom (\w+) papers", prose):
        words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
        if words.get(m.group(1)) != len(papers):
            problems.append(f"README says {m.group(1)} papers; reports/index.json has "
                            f"{len(papers)}")

    # The per-paper table: | [key](reports/papers/key.md)... | claims | violated | inconclusive | hold |
    rows = 0
    for m in re.finditer(r"^\| \[(\w+)\][^|\n]*\|([^\n]*)\|$", prose, flags=re.M):
        key = m.group(1)
        cells = [c.strip() for c in m.group(2).split("|")]
        mine = [c for c in claims if _paper_key(c["id"]) == key]
        if not mine:
            problems.append(f"README's paper table names {key!r}, which has no claim in the index")
            continue
        rows += 1
        per = Counter(c["verdict"] for c in mine)
        want = [len(mine), per["violated"], per["inconclusive"], per["holds"]]
        got = [int(c) if c.isdigit() else None for c in cells]
        if got != want:
            problems.append(f"README's row for {key} says {got} (claims, violated, inconclusive, "
                            f"hold); reports/index.json says {want}")
        start = m.start(2)
        for n in _NUMBER.finditer(m.group(2)):
            spans.append((start + n.start(), start + n.end()))
    if rows != len(papers):
        problems.append(f"README's paper table has {rows} rows for {len(papers)} papers")
    return problems, spans


def all_checked_spans(readme: str) -> list[tuple[int, int]]:
    _, spans = checked_numbers(readme, _index())
    _, quick_spans = check_quick_numbers(readme, _index(), _quick())
    return spans + quick_spans


def unchecked_numbers(readme: str, spans: list[tuple[int, int]]) -> list[str]:
    """Numbers in the README's prose that are neither checked nor a year, with their context."""
    prose = _prose(readme)
    out = []
    for m in _NUMBER.finditer(prose):
        inside = any(a <= m.start() and m.end() <= b for a, b in spans)
        year = re.fullmatch(r"(19|20)\d\d", m.group(0)) is not None
        if not inside and not year:
            context = " ".join(prose[max(0, m.start() - 40):m.end() + 40].split())
            out.append(f"{m.group(0)!r} in '...{context}...'")
    return out


def test_readme_numbers_agree_with_the_committed_index() -> None:
    problems, _ = checked_numbers(README.read_text(encoding="utf-8"), _index())
    assert not problems, "\n".join(problems)


def test_every_number_in_the_readme_is_checked() -> None:
    readme = README.read_text(encoding="utf-8")
    loose = unchecked_numbers(readme, all_checked_spans(readme))
    assert not loose, ("numbers in README.md that no test checks against reports/index.json "
                       "(check them in tests/test_readme_numbers.py or move them to docs/ with "
                       "their command and machine):\n" + "\n".join(loose))


def test_readme_is_short_and_keeps_its_required_sections() -> None:
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_README_LINES
    assert "make audit" in readme and "make test" in readme
    assert "## Audit your own mechanism or learner" in readme
    # The claim API section shows a user claim and links the full guide; the layout names the
    # engine's packages.
    assert "dpaudit.audit_claim(" in readme and "docs/claim-api.md" in readme
    assert "src/dpaudit/blackbox/" in readme and "src/dpaudit/formal/" in readme


def test_readme_links_to_files_that_exist() -> None:
    readme = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


@pytest.mark.parametrize("verdict, phrase", [("violated", "{} claims are violated"),
                                              ("inconclusive", "{} are inconclusive"),
                                              ("holds", "{} hold")])
def test_a_stale_verdict_count_is_caught(verdict: str, phrase: str) -> None:
    """The check fails when a count disagrees with the index (the README's count plus one)."""
    index = _index()
    count = Counter(c["verdict"] for c in index["claims"])[verdict]
    readme = README.read_text(encoding="utf-8")
    if count == 1:  # singular: "1 is inconclusive"
        phrase = phrase.replace(" are ", " is ")
    assert phrase.format(count) in readme
    stale = readme.replace(phrase.format(count), phrase.format(count + 1), 1)
    problems, _ = checked_numbers(stale, index)
    assert problems and all(str(count + 1) in p for p in problems)


def test_an_unchecked_number_is_caught() -> None:
    readme = README.read_text(encoding="utf-8") + "\nThe quick audit takes about 50 s.\n"
    assert any("'50'" in line for line in unchecked_numbers(readme, all_checked_spans(readme)))


def test_readme_states_the_quick_budget_counts_and_why_they_differ() -> None:
    """The counts `make audit` prints (quick budget) are stated beside the committed standard
    ones, with the claims that differ and why."""
    problems, _ = check_quick_numbers(README.read_text(encoding="utf-8"), _index(), _quick())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("verdict", ["violated", "inconclusive", "holds"])
def test_a_stale_quick_count_is_caught(verdict: str) -> None:
    """One quick-budget record's verdict changed: the README's counts no longer agree."""
    quick = _quick()
    readme = README.read_text(encoding="utf-8")
    assert not check_quick_numbers(readme, _index(), quick)[0]
    other = next(r for r in quick.values() if r["verdict"] != verdict)
    quick[other["id"]] = {**other, "verdict": verdict}
    problems, _ = check_quick_numbers(readme, _index(), quick)
    assert any("at the quick budget" in p for p in problems)
    # ... and the claims that differ between the budgets are no longer the ones named.
    assert any("claims whose verdict differs" in p for p in problems)


def test_a_wrong_list_of_differing_claims_is_caught() -> None:
    readme = README.read_text(encoding="utf-8")
    differ = budget_differences(_index(), _quick())
    assert differ, "the README's sentence on the differing claims has nothing to name"
    stale = readme.replace(f"`{differ[0]}`", "`afkt23/alg2`", 1)
    problems, _ = check_quick_numbers(stale, _index(), _quick())
    assert any("claims whose verdict differs" in p for p in problems)


if __name__ == "__main__":  # print what the README must state, from the records
    quick_counts = Counter(r["verdict"] for r in _quick().values())
    standard = Counter(c["verdict"] for c in _index()["claims"])
    print(f"standard (reports/index.json): {standard['violated']} violated, "
          f"{standard['inconclusive']} inconclusive, {standard['holds']} hold")
    print(f"quick (tests/golden): **{quick_counts['violated']} violated, "
          f"{quick_counts['inconclusive']} inconclusive, {quick_counts['holds']} holding**")
    print("differ:", ", ".join(budget_differences(_index(), _quick())))
