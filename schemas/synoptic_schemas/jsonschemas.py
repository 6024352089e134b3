"""The JSON Schema files of the contract (``synoptic_schemas/json/``), loaded and
ready to validate, with cross-file ``$ref`` resolved locally (no network).
``jsonschema`` is imported by :func:`validator` alone (its import takes longer
than most commands that only read a schema)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

SCHEMA_DIR = resources.files("synoptic_schemas") / "json"


def schema_names() -> list[str]:
    """Names of every schema file, e.g. ``value`` for ``value.schema.json``."""
    return sorted(
        p.name.removesuffix(".schema.json")
        for p in SCHEMA_DIR.iterdir()
        if p.name.endswith(".schema.json")
    )


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``<name>.schema.json``."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    resources_ = []
    for name in schema_names():
        schema = load_schema(name)
        resources_.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources_)


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for one schema; ``$ref`` between the files resolves offline."""
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())
