"""docs/api.md, the API reference: every public name has its directive (so a signature on the
site) and a runnable example, and the examples run.

The examples are the page's ```python blocks, run in order as one script (later blocks use the
names earlier ones define), in a scratch folder. Each asserts what it shows against a value
derived by hand in its comment (a Gaussian schedule's mu = sqrt(releases) * distance / sigma, the
Laplace mechanism's epsilon = sensitivity / scale, the sparse vector's 1/b1 + 2/b2), so a changed
behaviour fails here, not only on the site. Statistical steps use fixed seeds and cases far from
the boundary: a Laplace count at scale 1 audited against epsilon 0.5 or 0.25, whose true epsilon
is 1, at 20 000 to 50 000 runs per input (the quick tests of tests/test_testing_gate.py detect
the same factor 2 at fewer runs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dpaudit
from dpaudit import exact, noise
from dpaudit.claims import registry

PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)\n```", TEXT, re.S)
#: dpaudit.testing's public names (the pytest hooks are not an API).
TESTING = ("assert_dp", "assert_claim", "assert_sensitivity", "DPAuditor", "dp_auditor",
           "derive_seed", "violation_message", "DEFAULT_SAMPLES", "DEFAULT_SEED")


def public_names() -> list[tuple[str, str]]:
    """``(module, name)`` for every public name of the four public modules."""
    out = [("dpaudit", n) for n in dpaudit.__all__ if n not in ("noise", "exact")]
    out += [("dpaudit.noise", n) for n in noise.__all__]
    out += [("dpaudit.exact", n) for n in exact.__all__]
    out += [("dpaudit.testing", n) for n in TESTING]
    return out


def directives() -> dict[str, str]:
    """Each ``::: target`` with the options text under it."""
    found = {}
    for m in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", TEXT, re.M):
        found[m.group(1)] = m.group(2)
    return found


@pytest.mark.parametrize("module, name", public_names(), ids=lambda x: x)
def test_every_public_name_has_an_example(module: str, name: str) -> None:
    short = module.rsplit(".", 1)[-1]
    uses = [b for b in BLOCKS if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", b)
            and (module == "dpaudit" or f"{short}." in b or f"import {name}" in b)]
    assert uses, f"docs/api.md has no example using {module}.{name}"


@pytest.mark.parametrize("module, name", public_names(), ids=lambda x: x)
def test_every_public_name_is_documented(module: str, name: str) -> None:
    found = directives()
    if name == "__version__":
        assert "`dpaudit.__version__`" in TEXT
        return
    own = f"{module}.{name}"
    if own in found:
        options = found[own]
    else:   # documented by its module's directive (every member, or the listed ones)
        assert module in found, f"no directive documents {own}"
        options = found[module]
        if "members:" in options:
            assert f"- {name}\n" in options, f"{module}'s directive does not list {name}"
    obj = getattr(__import__(module, fromlist=[name]), name)
    if isinstance(obj, type) and hasattr(obj, "__dataclass_fields__"):
        # A dataclass's constructor signature is shown as its class signature.
        assert "merge_init_into_class: true" in options, f"{own} shows no constructor signature"


def test_the_examples_run_as_one_script(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": "api_examples"}
    try:
        for i, block in enumerate(BLOCKS):
            exec(compile(block, f"{PAGE}:block{i}", "exec"), scope)
    finally:
        for cid in ("api-example/count", "api-example/count-law"):
            registry.unregister(cid)
    assert scope["result"].verdict == "holds"


def test_the_module_docstring_claim_points_to_is_rendered() -> None:
    # Claim's docstring sends the reader to its module's docstring (the runnable example, the
    # labels): the page renders that docstring, without repeating the members.
    import dpaudit.claims.user_claims as user_claims

    assert "module docstring" in (dpaudit.Claim.__doc__ or "")
    assert "Example (runnable)" in (user_claims.__doc__ or "")
    assert "members: false" in directives()["dpaudit.claims.user_claims"]
