"""docs/asyncapi.yaml is what the generator makes of the JSON Schemas, is a valid
AsyncAPI 3.0 document, and its payload schemas accept what the codec writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from jsonschema import Draft7Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from synoptic_schemas import Subjects, decode_value, parse_channel
from synoptic_schemas.asyncapi import CHANNELS, PARAMETERS, document, render
from synoptic_schemas.codec import encode_value, to_json_view
from synoptic_schemas.jsonschemas import schema_names
from synoptic_schemas.screens import encode_stored, make_rev

ROOT = Path(__file__).parents[3]
COMMITTED = ROOT / "docs" / "asyncapi.yaml"
META_SCHEMA = ROOT / ".tools" / "asyncapi-specs-6.11.1" / "3.0.0.json"
DOC_URI = "urn:synoptic:asyncapi"


def test_the_committed_document_is_the_generated_one() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render(), (
        "docs/asyncapi.yaml differs from the JSON Schemas and the channel table: "
        "run `make asyncapi` and commit the result"
    )


def test_the_document_is_valid_asyncapi_3() -> None:
    if not META_SCHEMA.exists():
        pytest.fail(
            f"{META_SCHEMA.relative_to(ROOT)} is missing: run `make asyncapi-specs`"
        )
    meta = json.loads(META_SCHEMA.read_text(encoding="utf-8"))
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
        for e in Draft7Validator(meta).iter_errors(yaml.safe_load(render()))
    ]
    assert errors == []


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_every_reference_resolves_inside_the_document() -> None:
    doc = document()
    for ref in _refs(doc):
        assert ref.startswith("#/"), ref
        node: Any = doc
        for part in ref[2:].split("/"):
            assert part in node, f"{ref}: no {part!r}"
            node = node[part]


def test_every_row_names_known_schemas_and_parameters() -> None:
    names = set(schema_names())
    for row in CHANNELS:
        assert {row.payload, row.reply} - {None} <= names, row
        for param in re.findall(r"\{(\w+)\}", row.address):
            assert param in PARAMETERS, (row.key, param)


@pytest.mark.parametrize(
    ("key", "uri", "subject"),
    [
        ("value", "ca://SR:DCCT.HIHI", lambda s, c: s.val(c)),
        ("meta", "tango://tcs:10000/sr/d-ct/1/current", lambda s, c: s.meta(c)),
        ("put", "ca://SR:SP", lambda s, c: s.put(c)),
        ("cmd", "tango://tcs:10000/sr/d-ct/1/Reset", lambda s, c: s.cmd(c)),
        ("sev", "ca://SR:DCCT", lambda s, c: s.sev(c)),
        ("alarm", "tango://tcs:10000/sr/vac/1/p", lambda s, c: s.alarm(c)),
    ],
)
def test_addresses_match_the_subjects_the_code_makes(
    key: str, uri: str, subject: Any
) -> None:
    address = {row.key: row.address for row in CHANNELS}[key]
    pattern = re.escape(address)
    for name in re.findall(r"\\\{(\w+)\\\}", pattern):
        pattern = pattern.replace(
            re.escape("{" + name + "}"), ".+" if name in ("prefix", "tail") else "[^.]+"
        )
    assert re.fullmatch(pattern, subject(Subjects(), parse_channel(uri)))
    assert re.fullmatch(pattern, subject(Subjects("site.b"), parse_channel(uri)))


def _payload_validator(name: str) -> Draft7Validator:
    registry = Registry().with_resource(
        DOC_URI, Resource.from_contents(document(), default_specification=DRAFT7)
    )
    return Draft7Validator(
        {"$ref": f"{DOC_URI}#/components/schemas/{name}"}, registry=registry
    )


def test_payload_schemas_accept_what_the_adapters_publish() -> None:
    check = _payload_validator("value")
    scalar = encode_value(1.5, 1_700_000_000_000_000_000, 0, "NO_ALARM", 7, 1, True)
    array = encode_value(np.arange(4.0), 5, 1, "HIGH", 8, 1, True)
    gone = encode_value(None, 5, 3, "IOC down", 9, 1, False)
    for payload in (scalar, array, gone):
        check.validate(to_json_view(decode_value(payload)))
    with pytest.raises(ValidationError, match="'seq' is a required property"):
        check.validate(
            {"ver": 1, "v": 1, "t": 1, "sev": 0, "st": "", "ep": 1, "c": True}
        )


def test_the_screens_bucket_entry_is_what_the_store_writes() -> None:
    check = _payload_validator("screen-entry")
    screen = {"version": 1, "title": "T", "layout": {"type": "grid", "columns": 2},
              "widgets": [{"type": "label", "channels": ["ca://X"]}]}  # fmt: skip
    saved = encode_stored(screen, make_rev("alice", "first"))
    check.validate(json.loads(saved))
    check.validate(json.loads(encode_stored(None, make_rev("bob"))))  # a delete marker
    with pytest.raises(ValidationError, match="'_rev' is a required property"):
        check.validate(screen)
    message = document()["components"]["messages"]["screen-entry"]
    assert message["contentType"] == "application/json"
