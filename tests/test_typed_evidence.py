"""The typed evidence records write exactly the JSON words the records have always carried.

``EvidenceOrigin``, ``ExactSource`` and ``AccountantSource`` (:mod:`dpaudit.evidence`) replace the
sentences retyped in every module that read a point's evidence; the saved JSON (schema
``dpaudit.claim/1``, the golden records) must not change, so the words are pinned here as they
appear in the committed records, not read from the code.
"""

from __future__ import annotations

import json

import pytest

from dpaudit.evidence import AccountantSource, EvidenceOrigin, ExactSource

#: The words of the saved records (examples/libraries reports); PAPER names a bundled paper's own
#: closed form, which the paper modules never write as an exact_source.
WORDS = {"DERIVED": "derived from the code", "DECLARED": "declared law",
         "USER_SUPPLIED": "user-supplied", "DPAUDIT": "dpaudit",
         "TRUSTED_PRIMITIVES": "trusted primitives", "PAPER": "paper module"}


def test_each_origin_is_its_json_word() -> None:
    assert {o.name: o.value for o in EvidenceOrigin} == WORDS
    for origin in EvidenceOrigin:
        assert json.dumps(origin) == json.dumps(WORDS[origin.name])


def test_the_records_write_the_keys_points_have_always_carried() -> None:
    exact = ExactSource(EvidenceOrigin.DERIVED, "data0=[0.0, 1.0], data1=[0.0]", "closed form")
    assert exact.to_evidence() == {"exact_pair": "data0=[0.0, 1.0], data1=[0.0]",
                                   "exact_method": "closed form",
                                   "exact_source": "derived from the code"}
    # every value a plain str at the JSON edge (repr-stable for the resume fingerprint)
    assert all(type(v) is str for v in exact.to_evidence().values())
    acc = AccountantSource("user-supplied", "supplied by the user")
    assert acc.origin is EvidenceOrigin.USER_SUPPLIED
    assert acc.to_evidence() == {"accountant_source": "user-supplied",
                                 "accountant": "supplied by the user"}
    assert ExactSource.of(exact.to_evidence()) == exact
    assert AccountantSource.of(acc.to_evidence()) == acc


def test_reading_back_tolerates_records_without_or_outside_the_vocabulary() -> None:
    assert ExactSource.of({}) is None and AccountantSource.of(None) is None
    assert EvidenceOrigin.of({"exact_source": "something older"}, "exact_source") is None
    with pytest.raises(ValueError):
        ExactSource("not an origin", "", "")


def test_the_engine_constants_are_the_enums_words() -> None:
    from dpaudit.claims.primitive_check import TRUSTED_SOURCE
    from dpaudit.greybox.derivation import DERIVED
    from dpaudit.greybox.point_evidence import DECLARED

    assert (DERIVED, DECLARED, TRUSTED_SOURCE) == (
        "derived from the code", "declared law", "trusted primitives")
    assert all(type(c) is str for c in (DERIVED, DECLARED, TRUSTED_SOURCE))


# --- PointEvidence: the frozen record of a point's evidence, the same JSON dict at the edge ------

#: A user claim's point as the driver leaves it (keys in the order they are written: the
#: declaration's, then the driver's), with a declaration key beside the typed ones.
USER_POINT = {
    "neighbours": "replace-one",
    "exact_pair": "data0=[0.0], data1=[1.0]", "exact_method": "closed form",
    "exact_source": "derived from the code",
    "derivation": {"derivable": True, "pairs": 1, "of": 1, "family": "gaussian"},
    "evidence_origin": {"empirical": "drawn from the code", "exact": "drawn from the code"},
    "accountant_source": "dpaudit", "accountant": "Gaussian, sigma 1",
    "my_note": "a declaration's own entry",
    "derived_law_verification": {"rejected": False, "runs": 100},
    "empirical": {"epsilon_lower_bound": 0.5, "verdict": "consistent"},
}

#: A bundled paper's point: its own record, a ``severity`` entry in the middle, and an
#: ``accountant`` that is a dict of numbers (not the accountant source's sentence) without an
#: ``accountant_source``: it is the paper's, and must come back as it went in.
PAPER_POINT = {
    "calibration": {"sigma": 2.0}, "severity": {"delta_from": 0.5},
    "accountant": {"mu": 1.5, "epsilon": 3.0}, "exact_pair": "worst", "rng_guard": None,
    "empirical": {"epsilon_lower_bound": 0.1},
}


@pytest.mark.parametrize("point", [USER_POINT, PAPER_POINT, {}])
def test_point_evidence_writes_back_the_same_dict_in_the_same_order(point: dict) -> None:
    from dpaudit.evidence import PointEvidence

    ev = PointEvidence.of(point)
    assert ev.to_dict() == point and list(ev.to_dict()) == list(point)
    assert json.dumps(ev.to_dict()) == json.dumps(point)  # byte for byte at the JSON edge
    assert PointEvidence.of(json.loads(json.dumps(ev.to_dict()))).to_dict() == point
    # ... and reads as the dict it replaces (code written against the dict sees the same values)
    assert ev == point and dict(ev) == point and list(ev) == list(point)
    assert {**ev} == point and ev.get("absent") is None


def test_point_evidence_types_the_engine_fields_and_leaves_the_declarations() -> None:
    from dpaudit.evidence import AccountantSource, ExactSource, PointEvidence

    ev = PointEvidence.of(USER_POINT)
    assert ev.exact_source == ExactSource(EvidenceOrigin.DERIVED, "data0=[0.0], data1=[1.0]",
                                          "closed form")
    assert ev.exact_origin is EvidenceOrigin.DERIVED
    assert ev.accountant_source == AccountantSource(EvidenceOrigin.DPAUDIT, "Gaussian, sigma 1")
    assert ev.accountant_origin is EvidenceOrigin.DPAUDIT
    assert ev.neighbours == "replace-one" and ev.derivation["family"] == "gaussian"
    assert ev.law_verification == {"rejected": False, "runs": 100}
    assert ev.empirical["epsilon_lower_bound"] == 0.5
    assert dict(ev.details) == {"my_note": "a declaration's own entry"}
    paper = PointEvidence.of(PAPER_POINT)
    assert paper.severity == {"delta_from": 0.5}
    assert paper.accountant_source is None and paper.accountant_origin is None
    assert paper.exact_source is None and paper.rng_guard is None
    assert dict(paper.details) == {"calibration": {"sigma": 2.0},
                                   "accountant": {"mu": 1.5, "epsilon": 3.0},
                                   "exact_pair": "worst", "rng_guard": None}


def test_point_evidence_updates_as_a_dict_update_does() -> None:
    from dpaudit.evidence import PointEvidence

    ev = PointEvidence.of({"neighbours": "add-remove", "declared_law": {"rejected": False}})
    out = ev.with_(empirical={"x": 1}, declared_law={"rejected": True})
    assert list(out) == ["neighbours", "declared_law", "empirical"]  # new last, old in place
    assert out["declared_law"] == {"rejected": True} and ev["declared_law"] == {"rejected": False}
    src = PointEvidence.of(USER_POINT)
    gone = src.with_(exact_source=None, declared_exact_rejected=0.7)
    assert [k for k in USER_POINT if k not in gone] == ["exact_pair", "exact_method",
                                                        "exact_source"]
    assert list(gone)[-1] == "declared_exact_rejected" and gone.exact_origin is None
    more = src.with_details(paper_key=[1, 2])
    assert list(more)[-1] == "paper_key" and more.details["paper_key"] == [1, 2]


def test_point_evidence_refuses_what_it_cannot_write() -> None:
    import dataclasses

    from dpaudit.evidence import PointEvidence

    with pytest.raises(TypeError, match="empirical"):
        PointEvidence(empirical="not a record")
    with pytest.raises(TypeError, match="exact_source"):
        PointEvidence(exact_source="derived from the code")
    with pytest.raises(TypeError, match="with_details"):
        PointEvidence().with_(calibration={})
    with pytest.raises(ValueError, match="empirical"):
        PointEvidence(details={"empirical": {}}, empirical={})
    with pytest.raises(TypeError, match="mapping"):
        PointEvidence.of(["not", "a", "mapping"])
    ev = PointEvidence.of(USER_POINT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.empirical = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        ev["empirical"] = {}  # type: ignore[index]


def test_grid_points_and_plans_carry_the_record_and_write_the_dict() -> None:
    from dpaudit.claims.declaration import PointPlan
    from dpaudit.evidence import GridPoint, PointEvidence

    gp = GridPoint({"epsilon": 1.0}, 1.0, 0.0, 0.5, evidence=USER_POINT)
    assert isinstance(gp.evidence, PointEvidence)
    saved = gp.to_dict()
    assert list(saved["evidence"]) == list(USER_POINT) and saved["evidence"] == USER_POINT
    back = GridPoint.from_dict(json.loads(json.dumps(saved)))
    assert back.evidence.exact_origin is EvidenceOrigin.DERIVED
    assert json.dumps(back.to_dict()) == json.dumps(saved)
    plan = PointPlan(parameters={"epsilon": 1.0}, claimed_epsilon=1.0, claimed_delta=0.0,
                     evidence=PAPER_POINT)
    assert isinstance(plan.evidence, PointEvidence)
    assert plan.grid_point().evidence is plan.evidence
    assert plan.grid_point(0.1, {"a": 1}).evidence.to_dict() == {"a": 1}


def test_a_saved_origin_is_read_without_its_pair_and_written_back_as_saved() -> None:
    from dpaudit.evidence import PointEvidence

    # An origin saved without the pair or method (or with a dict where the sentence goes)
    # still says where the number comes from, and the record writes back only what it read.
    for saved in ({"exact_source": "declared law"},
                  {"exact_method": "closed form", "x": 1, "exact_source": "derived from the code"},
                  {"accountant": {"mu": 1.0}, "accountant_source": "dpaudit"}):
        ev = PointEvidence.of(saved)
        assert ev.exact_origin or ev.accountant_origin
        assert list(ev.to_dict().items()) == list(saved.items())
    ev = PointEvidence.of({"exact_source": "declared law"})
    assert ev.exact_source == ExactSource(EvidenceOrigin.DECLARED, None, None)
    assert PointEvidence.saved({"evidence": {"exact_source": "declared law"}}).exact_origin \
        is EvidenceOrigin.DECLARED
    assert PointEvidence.saved({}).to_dict() == {} and PointEvidence.saved({"evidence": None}) == {}
    # replacing a full source by a partial one leaves none of the old keys behind
    full = PointEvidence.of(USER_POINT)
    part = full.with_(exact_source=ExactSource(EvidenceOrigin.DECLARED, None, "law"))
    assert "exact_pair" not in part and part["exact_method"] == "law"
    assert list(part).index("exact_method") == list(USER_POINT).index("exact_method") - 1


#: The engine and report modules that read a point's evidence, and the paper modules that build
#: and read it (a paper's own entries through ``details``): by attribute of its PointEvidence,
#: never by a JSON key (a key retyped in a reader is how a typo turns into a silent "absent").
TYPED_READERS = ("claims/driver.py", "claims/derived_law_check.py", "claims/primitive_check.py",
                 "claims/user_claims.py", "claims/verdict.py", "claims/severity.py",
                 "reporting/view.py", "reporting/caveats.py", "claims/fingerprint.py",
                 "claims/noise_site_check.py", "claims/record.py", "greybox/point_evidence.py",
                 "papers/afkt23/audit.py", "papers/afkt23/plans.py",
                 "papers/afkt23/mechanism_plans.py", "papers/afkt23/gamma.py",
                 "papers/afkt23/severity.py")


#: The nested records of a point's evidence (``PointEvidence.<field>``), read by attribute too.
NESTED_FIELDS = ("empirical", "primitives", "invariance", "derivation", "origins", "severity")


def _nested_record(node) -> bool:
    """Whether ``node`` is a point's nested record: ``x.evidence.<field>``,
    ``PointEvidence.saved(p).<field>`` (or ``... or {}``/``... or SeverityEntry()``)."""
    import ast

    if isinstance(node, ast.BoolOp):
        return any(_nested_record(v) for v in node.values)
    if not (isinstance(node, ast.Attribute) and node.attr in NESTED_FIELDS):
        return False
    owner = node.value
    return ((isinstance(owner, ast.Attribute) and owner.attr == "evidence")
            or (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute)
                and owner.func.attr in ("saved", "of")))


def _key_reads(path) -> list[str]:
    import ast

    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # names bound to a nested record (``emp = point.evidence.empirical``), per module
    bound = {n.targets[0].id for n in ast.walk(tree)
             if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and _nested_record(n.value)}
    bound |= {n.target.id for n in ast.walk(tree)
              if isinstance(n, ast.NamedExpr) and _nested_record(n.value)}
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            target = node.value  # x.evidence["key"]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args
              and isinstance(node.args[0], ast.Constant)):
            target = node.func.value  # x.evidence.get("key")
            if node.args[0].value == "evidence":  # point.get("evidence"): a saved point's dict
                found.append(f"line {node.lineno}: .get('evidence')")
                continue
        if isinstance(target, ast.Attribute) and target.attr == "evidence":
            found.append(f"line {node.lineno}")
        elif target is not None and (_nested_record(target) or (
                isinstance(target, ast.Name) and target.id in bound)):
            found.append(f"line {node.lineno}: a nested record by key")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "of" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "EvidenceOrigin"):
            found.append(f"line {node.lineno}: EvidenceOrigin.of")
    return found


@pytest.mark.parametrize("module", TYPED_READERS)
def test_the_engine_reads_a_points_evidence_by_attribute(module: str) -> None:
    from pathlib import Path

    import dpaudit

    path = Path(dpaudit.__file__).parent / module
    reads = _key_reads(path)
    # view.py renders every saved key of a point as table rows: that one read is the JSON edge;
    # severity.py copies the witness's ``where`` as written (a JSON null stays null).
    allowed = {"reporting/view.py": 1, "claims/severity.py": 1}.get(module, 0)
    assert len(reads) == allowed, f"{module} reads evidence by key at {reads}"


# --- the nested records: frozen, typed, the same JSON dict at the edge ---------------------------

#: Nested records as the committed reports carry them (keys in their written order; values as in
#: tests/golden and reports/), one per record type, with a key the record does not type.
NESTED = {
    "empirical": {"verdict": "consistent", "epsilon_lower_bound": 0.0, "claim": {"epsilon": 1.0},
                  "power": None, "output_kind": "continuous",
                  "statistic": {"kind": "learned", "description": "the user's statistic"},
                  "samples": {"select": 100, "test": 900}, "event": {"event": None},
                  "statistic_name": "the user's statistic", "pair": "data0=[0.0], data1=[1.0]",
                  "bonferroni": {"family_alpha": 0.05, "tests": 2, "per_test_alpha": 0.025,
                                 "test": 1, "what": "one pair", "note": "Bonferroni"}},
    "derivation": {"derivable": True, "pairs": 1, "of": 2, "family": "laplace",
                   "noise_draws": 3, "replays": 8, "reason": "pair 2 draws no noise"},
    "evidence_origin": {"empirical": "drawn from the code (runs of the release, black box)",
                        "accountant": "declared (the claim's noise schedule)",
                        "exact": "none", "declared_law": "declared, tested against runs"},
    "invariance": {"invariant": False, "calls": 2, "public_values": 0, "failure": "",
                   "sources": ["numpy"], "findings": [{"kind": "family", "what": "differs"}],
                   "pairs": 1, "pair": 0},
    "primitives": {"primitives": ["laplace primitive m.f"], "pairs": 0,
                   "origin": "trusted primitives", "epsilon": None, "failure": "no pairs"},
    "severity": {"delta_from": 0.5, "where": "T = 1", "event": "output > 3",
                 "event_log10_probability_upper": -12.5, "a_paper_key": [1]},
}


def test_each_nested_record_reads_and_writes_its_dict_in_order() -> None:
    from dpaudit.evidence import PointEvidence
    from dpaudit.evidence_records import (DerivationRecord, EmpiricalRecord, EvidenceOrigins,
                                          InvarianceRecord, NoiseFamily, PrimitivesRecord,
                                          SeverityEntry)

    ev = PointEvidence.of(NESTED)
    assert json.dumps(ev.to_dict()) == json.dumps(NESTED)  # byte for byte, same order
    assert isinstance(ev.empirical, EmpiricalRecord) and ev.empirical.power is None
    assert ev.empirical.bonferroni.per_test_alpha == 0.025 and ev.empirical.bonferroni.test == 1
    assert ev.empirical.event == {"event": None} and ev.empirical.pair.startswith("data0")
    assert isinstance(ev.derivation, DerivationRecord) and ev.derivation.of == 2
    assert ev.derivation.family is NoiseFamily.LAPLACE
    assert type(ev.to_dict()["derivation"]["family"]) is str  # the word at the JSON edge
    assert isinstance(ev.origins, EvidenceOrigins) and ev.origins.exact == "none"
    assert isinstance(ev.invariance, InvarianceRecord) and ev.invariance.invariant is False
    assert ev.invariance.pair == 0 and ev.invariance.findings[0]["kind"] == "family"
    assert isinstance(ev.primitives, PrimitivesRecord) and ev.primitives.epsilon is None
    assert list(ev.to_dict()["primitives"]) == list(NESTED["primitives"])  # null kept in place
    assert isinstance(ev.severity, SeverityEntry) and ev.severity.delta_from == 0.5
    assert ev.severity.holds_up_to_delta is None and dict(ev.severity.extra) == {"a_paper_key": [1]}
    # ... still read-only mappings over the same dicts (code written against the dicts works)
    assert ev.empirical == NESTED["empirical"] and ev.severity["where"] == "T = 1"
    with pytest.raises(TypeError):
        ev.severity["where"] = "x"  # type: ignore[index]
    # a plan travels to process-pool and Dask workers pickled: the records come back whole
    import pickle

    back = pickle.loads(pickle.dumps(ev))
    assert json.dumps(back.to_dict()) == json.dumps(NESTED) and back.derivation.of == 2
    assert back.derivation.family is NoiseFamily.LAPLACE


def test_records_and_dicts_given_for_a_nested_field_write_the_same_json() -> None:
    from dpaudit.evidence import PointEvidence
    from dpaudit.evidence_records import DerivationRecord, EvidenceOrigins, NoiseFamily

    # The afkt23 papers and user code pass dicts; the engine passes records.
    as_dicts = PointEvidence(derivation={"derivable": True, "pairs": 1, "of": 1,
                                         "family": "gaussian"},
                             origins={"exact": "none"})
    as_records = PointEvidence(derivation=DerivationRecord(derivable=True, pairs=1, of=1,
                                                           family=NoiseFamily.GAUSSIAN),
                               origins=EvidenceOrigins(exact="none"))
    assert json.dumps(as_dicts.to_dict()) == json.dumps(as_records.to_dict())
    assert as_dicts.derivation.family is as_records.derivation.family is NoiseFamily.GAUSSIAN
    assert as_dicts.to_dict()["evidence_origin"] == {"exact": "none"}


def test_a_record_update_keeps_places_as_a_dict_update_does() -> None:
    from dpaudit.evidence_records import EvidenceOrigins, InvarianceRecord

    origins = EvidenceOrigins(empirical="e", accountant="a", exact="x")
    moved = origins.with_(exact="none: rejected", primitives="trusted")
    assert list(moved.items()) == [("empirical", "e"), ("accountant", "a"),
                                   ("exact", "none: rejected"), ("primitives", "trusted")]
    assert origins["exact"] == "x"  # frozen: the update is a new record
    # read from a producer's dict, keys added later go last in the order they are set
    rec = InvarianceRecord.of({"invariant": False, "calls": 1, "failure": ""})
    assert list(rec.with_(pairs=2, pair=1)) == ["invariant", "calls", "failure", "pairs", "pair"]


def test_records_refuse_what_they_cannot_write_and_keep_what_they_do_not_type() -> None:
    import dataclasses

    from dpaudit.evidence import PointEvidence
    from dpaudit.evidence_records import DerivationRecord, EmpiricalRecord, SeverityEntry

    with pytest.raises(TypeError, match="delta_from"):
        SeverityEntry(delta_from="large")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        DerivationRecord(family="uniform")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mapping"):
        EmpiricalRecord.of(["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="typed fields"):
        SeverityEntry(where="x", extra={"where": "y"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        SeverityEntry().where = "x"  # type: ignore[misc]
    # A saved value of another type (an older record) stays as written, under its key.
    odd = {"family": "uniform", "pairs": "two", "derivable": 1}
    back = DerivationRecord.of(odd)
    assert back.family is None and back.pairs is None and back.derivable is None
    assert list(back.to_dict().items()) == list(odd.items())
    assert PointEvidence.of({"derivation": odd}).to_dict() == {"derivation": odd}


def test_the_exact_kind_and_noise_family_are_their_json_words() -> None:
    from dpaudit.claims.declaration import PointPlan
    from dpaudit.evidence import CERTIFIED, EXACT, USER_SUPPLIED, GridPoint
    from dpaudit.evidence_records import ExactKind, NoiseFamily

    # the words of tests/golden (exact_kind) and of the derivation records in reports/
    assert {k.name: k.value for k in ExactKind} == {
        "EXACT": "exact", "CERTIFIED": "certified lower bound (numerical)",
        "USER_SUPPLIED": "user-supplied"}
    assert {f.name: f.value for f in NoiseFamily} == {
        "GAUSSIAN": "gaussian", "LAPLACE": "laplace", "DISCRETE_LAPLACE": "discrete laplace"}
    assert (EXACT, CERTIFIED, USER_SUPPLIED) == tuple(ExactKind)
    gp = GridPoint({"T": 1}, 1.0, 0.0, 2.0, exact_kind="certified lower bound (numerical)")
    assert gp.exact_kind is ExactKind.CERTIFIED
    saved = gp.to_dict()
    assert type(saved["exact_kind"]) is str and saved["exact_kind"] == CERTIFIED.value
    assert GridPoint.from_dict(json.loads(json.dumps(saved))).exact_kind is ExactKind.CERTIFIED
    plan = PointPlan(parameters={}, claimed_epsilon=1.0, claimed_delta=0.0, exact_kind="exact")
    assert plan.exact_kind is ExactKind.EXACT
    with pytest.raises(ValueError, match="exact_kind must be one of"):
        PointPlan(parameters={}, claimed_epsilon=1.0, claimed_delta=0.0, exact_kind="exactly")


def test_the_fingerprint_hashes_the_exact_kind_by_its_word_not_its_repr(monkeypatch) -> None:
    from dpaudit.claims.declaration import PointPlan
    from dpaudit.claims.fingerprint import behaviour_fingerprint
    from dpaudit.evidence_records import ExactKind

    class Decl:  # the three attributes the fingerprint reads
        claim = "a claim"

        def grid(self, ctx):
            return [{"T": 1}]

        def plan(self, params, ctx):
            return PointPlan(parameters=params, claimed_epsilon=1.0, claimed_delta=0.0,
                             exact=2.0, exact_kind=ExactKind.CERTIFIED)

    before = behaviour_fingerprint(Decl())
    monkeypatch.setattr(ExactKind, "__repr__", lambda self: "<another repr>")
    assert behaviour_fingerprint(Decl()) == before


def test_the_bundled_severity_keys_are_the_records_fields() -> None:
    from dpaudit.claims.severity import SEVERITY_EVIDENCE_KEYS
    from dpaudit.evidence_records import SeverityEntry

    assert set(SEVERITY_EVIDENCE_KEYS) == set(SeverityEntry._TYPES)
