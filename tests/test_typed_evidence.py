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
