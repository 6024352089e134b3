"""Phoebus alarm configurations (XML) → alarm trees, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from synoptic_importer.phoebus_alarms import (
    MAX_ALARM_XML_BYTES,
    AlarmImportError,
    import_phoebus_alarms,
)
from synoptic_schemas.alarmtree import listed, walk

CORPUS = Path(__file__).parents[1] / "corpus"


def test_an_accelerator_configuration_becomes_a_tree() -> None:
    data = (CORPUS / "alarms-accelerator.xml").read_bytes()
    tree, report = import_phoebus_alarms(data, "alarms-accelerator.xml")
    assert [p for p, *_ in walk(tree)] == [
        "Accelerator", "Accelerator/Storage Ring", "Accelerator/Storage Ring/Vacuum",
        "Accelerator/Storage Ring/RF", "Accelerator/Linac",
    ]  # fmt: skip
    ring = tree["children"][0]
    assert (
        ring["guidance"]
        == "Shift crew: Storage ring alarms go to the crew chief first."
    )
    assert ring["screens"] == [{"title": "Storage ring overview", "screen": "overview"}]
    pump = ring["children"][0]["channels"][0]
    assert pump == {
        "ch": "ca://SR-C05-VA-IP-03:Pressure",
        "desc": "Cell 5 ion pump 3 pressure",
        "latch": True,
        "guidance": "What to do: Check the pump controller and the neighbouring gauges.",
        "screens": [{"title": "Cell 5 vacuum", "screen": "vacuum_cell",
                     "macros": {"CELL": "05", "PUMP": "3"}}],
    }  # fmt: skip
    gauge = ring["children"][0]["channels"][2]
    assert gauge["screens"] == [
        {"title": "Gauge vendor page", "url": "https://vendor.example/gauges/7"}
    ]
    cavity = ring["children"][1]["channels"][0]
    assert cavity["ch"] == "tango://tango-cs:10000/sr/rf/cavity1/power"
    assert cavity["screens"][0]["macros"] == {"CAV": "1", "SYS": "SR"}
    # disabled PVs (false, or until a date) are kept but raise no alarm
    alarms = {e.uri: e for e in listed(tree)}
    assert set(alarms) == {
        "ca://SR-C05-VA-IP-03:Pressure", "pva://SR-C07-VA-GAUGE:Pressure",
        "tango://tango-cs:10000/sr/rf/cavity1/power",
    }  # fmt: skip
    assert alarms["ca://SR-C05-VA-IP-03:Pressure"].area == (
        "Accelerator/Storage Ring/Vacuum"
    )
    assert report.channels == 5 and report.nodes == 5
    assert report.skipped["delay"] == 1 and report.skipped["automated_action"] == 1
    assert (
        report.skipped["command"] == 1
        and report.skipped["pv of another data source"] == 1
    )
    text = "\n".join(report.warnings)
    assert "line 62: loc://rf_sum(0)" in text
    assert (
        "line 65: ca://SR-C05-VA-IP-03:Pressure is listed again (first at line 19)"
        in text
    )
    assert "enabled '2026-12-01t08:00:00'" in text


@pytest.mark.parametrize(
    ("xml", "line", "reason"),
    [
        (b"<config name='A'>\n<component name='B'>\n</config>", 3, "malformed XML"),
        (b"<display>\n</display>", 1, "expected a Phoebus alarm configuration"),
        (
            b"<config name='A'>\n<component name='B'/>\n<component name='B'/>\n</config>",
            3,
            "two children of one node are named 'B'",
        ),
        (b"<config name='A'>\n\n<pv/>\n</config>", 3, "<pv> without a name"),
        (b"<config name='A'>\n<component>\n</component></config>", 2, "without a name"),
    ],
)
def test_malformed_configurations_are_refused_with_the_line(
    xml: bytes, line: int, reason: str
) -> None:
    with pytest.raises(AlarmImportError) as info:
        import_phoebus_alarms(xml, "bad.xml")
    assert info.value.line == line, str(info.value)
    assert reason in str(info.value)
    assert str(info.value).startswith(f"bad.xml:{line}: ")


def test_entities_and_huge_files_are_refused_unexpanded() -> None:
    bomb = (b'<?xml version="1.0"?><!DOCTYPE config [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><config name="&b;"/>')  # fmt: skip
    with pytest.raises(AlarmImportError, match="refused"):
        import_phoebus_alarms(bomb, "bomb.xml")
    external = (b'<?xml version="1.0"?><!DOCTYPE config SYSTEM "http://x/y.dtd">'
                b'<config name="A"/>')  # fmt: skip
    with pytest.raises(AlarmImportError, match="refused"):
        import_phoebus_alarms(external, "ext.xml")
    with pytest.raises(AlarmImportError, match="exceed the limit"):
        import_phoebus_alarms(b" " * (MAX_ALARM_XML_BYTES + 1), "big.xml")


def test_a_configuration_of_100000_pvs_imports() -> None:
    parts = [b"<config name='Bench'>"]
    for area in range(100):
        parts.append(f"<component name='A{area:03d}'>".encode())
        parts += [
            f"<pv name='BENCH:{area:03d}:{i:04d}'><latching>true</latching></pv>".encode()
            for i in range(1000)
        ]
        parts.append(b"</component>")
    parts.append(b"</config>")
    tree, report = import_phoebus_alarms(b"\n".join(parts), "bench.xml")
    assert report.channels == 100_000
    assert sum(1 for _ in listed(tree)) == 100_000
