"""The published JSON Schemas of dpaudit's saved files, and validation against them.

``dpaudit/reporting/schemas/claim-1.schema.json`` describes a saved claim audit
(``"schema": "dpaudit.claim/1"``, ``DIR/<paper>/<algorithm>.json``) and
``report-1.schema.json`` the directory index (``"schema": "dpaudit.report/1"``,
``DIR/index.json``). Both are JSON Schema draft 2020-12 files shipped as package data, so a CI
pipeline can validate dpaudit's output with any JSON Schema tool; dpaudit validates with
``jsonschema`` every claim record it writes or loads, and every index it writes.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema

__all__ = ["SCHEMA_FILES", "load_schema", "schema_errors", "check_against_schema"]

#: Schema identifier -> file name in ``dpaudit/reporting/schemas``.
SCHEMA_FILES = {"dpaudit.claim/1": "claim-1.schema.json", "dpaudit.report/1": "report-1.schema.json"}


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``name`` (``"dpaudit.claim/1"`` or ``"dpaudit.report/1"``)."""
    if name not in SCHEMA_FILES:
        raise ValueError(f"name must be one of {sorted(SCHEMA_FILES)}, got {name!r}")
    text = resources.files("dpaudit.reporting").joinpath("schemas", SCHEMA_FILES[name]).read_text(
        encoding="utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _where(path: Any) -> str:
    parts = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return parts.lstrip(".") or "(top level)"


def schema_errors(document: Any, name: str) -> list[str]:
    """Every violation of schema ``name`` by ``document``, as ``"<field>: <message>"`` lines."""
    errors = sorted(_validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{_where(e.absolute_path)}: {e.message}" for e in errors]


def check_against_schema(document: Any, name: str, source: str) -> None:
    """ValueError naming ``source`` and the first offending field when ``document`` is invalid."""
    errors = schema_errors(document, name)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ValueError(f"{source} does not match the {name} schema: {errors[0]}{more}")
