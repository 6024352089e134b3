"""PV Access values → bus fields, and put values → PVA fields (p4p Values, no server)."""

from __future__ import annotations

import numpy as np
import pytest
from p4p import Type, Value
from p4p.nt import NTEnum, NTNDArray, NTScalar, NTTable

from synoptic_adapters.pva.convert import (
    ConvertError,
    alarm_of,
    convert,
    declared_meta,
    layout_of,
    meta_of,
    stamp_ns,
)
from synoptic_adapters.pva.put import PutValueError, put_fields

BIG = 1 << 30


def test_normative_types_choose_the_layout() -> None:
    cases = [
        (NTScalar("d").wrap(1.5), "scalar", "f8"),
        (NTScalar("s").wrap("x"), "scalar", "str"),
        (NTScalar("ai").wrap([1, 2]), "array", "i4"),
        (NTEnum().wrap({"index": 1, "choices": ["a", "b"]}), "enum", "enum"),
        (NTTable([("a", "d")]).wrap([{"a": 1.0}]), "table", "table"),
        (NTNDArray().wrap(np.zeros((2, 3), np.uint8)), "image", "image"),
        (Value(Type([("x", "d")], id="my:Thing:1.0"), {"x": 1.0}), "struct", "struct"),
        # a structure that claims NTScalar but holds an array is not trusted
        (Value(Type([("value", "ad")], id="epics:nt/NTScalar:1.0"), {}), "struct",
         "struct"),
    ]  # fmt: skip
    for value, kind, dt in cases:
        layout = layout_of(value)
        assert (layout.kind, layout.dt) == (kind, dt), value.getID()


def test_alarm_and_timestamp() -> None:
    value = NTScalar("d").wrap(1.0, timestamp=(1_700_000_000, 5), severity=2)
    assert stamp_ns(value, 7) == 1_700_000_000_000_000_005
    assert alarm_of(value) == (2, "MAJOR")
    value["alarm.status"] = 1
    assert alarm_of(value) == (2, "DEVICE")
    value["alarm.message"] = "HIHI"
    assert alarm_of(value) == (2, "HIHI")
    assert alarm_of(NTScalar("d").wrap(1.0)) == (0, "NO_ALARM")
    assert stamp_ns(NTScalar("d").wrap(1.0), 7) == 7  # unset: the arrival time
    value["alarm.severity"] = 9
    assert alarm_of(value)[0] == 3  # clamped to the bus range


def test_scalar_metadata_from_display_control_and_value_alarm() -> None:
    nt = NTScalar("d", display=True, control=True, valueAlarm=True)
    value = nt.wrap({
        "value": 1.0, "display.units": "mA", "display.format": "%.2f",
        "display.limitLow": 0.0, "display.limitHigh": 10.0,
        "display.description": "beam", "control.limitLow": 1.0,
        "control.limitHigh": 9.0, "valueAlarm.lowWarningLimit": 2.0,
        "valueAlarm.highWarningLimit": 8.0,
    })  # fmt: skip
    layout = layout_of(value)
    meta = meta_of(value, layout, convert(value, layout, BIG))
    assert meta == {
        "dt": "f8", "shape": [], "w": True, "native": "epics:nt/NTScalar:1.0",
        "unit": "mA", "desc": "beam", "prec": 2, "disp": [0.0, 10.0],
        "ctrl": [1.0, 9.0], "warn": [2.0, 8.0],
    }  # fmt: skip


def test_metadata_reads_only_the_fields_the_structure_has() -> None:
    """A bare NTScalar (no display, control, valueAlarm) gets the base metadata,
    and its layout lists every field, so that no absent field is looked up (p4p
    raises for one: ~18 µs, which made each metadata refresh cost ~0.2 ms)."""
    value = NTScalar("d").wrap(3.0)
    layout = layout_of(value)
    assert layout.fields == {
        "value", "alarm", "alarm.severity", "alarm.status", "alarm.message",
        "timeStamp", "timeStamp.secondsPastEpoch", "timeStamp.nanoseconds",
        "timeStamp.userTag",
    }  # fmt: skip
    assert meta_of(value, layout, 3.0) == {
        "dt": "f8",
        "shape": [],
        "w": True,
        "native": "epics:nt/NTScalar:1.0",
    }
    partial = NTScalar("d", display=True).wrap({"value": 1.0, "display.units": "V"})
    layout = layout_of(partial)
    assert "display.units" in layout.fields and "control" not in layout.fields
    assert meta_of(partial, layout, 1.0)["unit"] == "V"


def test_arrays_over_the_limit_raise_with_the_sizes() -> None:
    value = NTScalar("ad").wrap(np.zeros(1000))
    layout = layout_of(value)
    assert convert(value, layout, 8000).shape == (1000,)
    with pytest.raises(ConvertError, match="8000 bytes exceeds the limit of 7999"):
        convert(value, layout, 7999)


def test_tables_are_columns() -> None:
    value = NTTable([("name", "s"), ("x", "d")]).wrap(
        [{"name": "a", "x": 1.0}, {"name": "b", "x": 2.0}]
    )
    layout = layout_of(value)
    v = convert(value, layout, BIG)
    assert v["name"] == ["a", "b"] and v["x"].tolist() == [1.0, 2.0]
    assert meta_of(value, layout, v)["cols"] == [
        {"name": "name", "label": "name", "dt": "str"},
        {"name": "x", "label": "x", "dt": "f8"},
    ]
    with pytest.raises(ConvertError, match="table of 18 bytes"):
        convert(value, layout, 17)


@pytest.mark.parametrize("mode", [2, 3, 4])
def test_colour_images_become_height_width_3(mode: int) -> None:
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)  # [h, w, 3]
    layouts = {2: rgb, 3: rgb.transpose(0, 2, 1), 4: rgb.transpose(2, 0, 1)}
    value = NTNDArray().wrap(np.ascontiguousarray(layouts[mode]),
                             attrib={"ColorMode": mode})  # fmt: skip
    layout = layout_of(value)
    image = convert(value, layout, BIG)
    assert image.shape == (4, 5, 3)
    np.testing.assert_array_equal(image, rgb)
    meta = meta_of(value, layout, image)
    assert (meta["dt"], meta["shape"], meta["img"]) == ("u1", [4, 5, 3],
                                                        {"color": "rgb"})  # fmt: skip


def test_mono_images_and_what_is_refused() -> None:
    value = NTNDArray().wrap(np.arange(12, dtype=np.uint16).reshape(3, 4))
    layout = layout_of(value)
    assert convert(value, layout, BIG).tolist()[1] == [4, 5, 6, 7]
    value["codec.name"] = "zstd"  # one the adapter does not decode
    with pytest.raises(ConvertError, match="codec 'zstd'"):
        convert(value, layout, BIG)
    value["codec.name"] = ""
    value["dimension"] = [{"size": 5}, {"size": 3}]
    with pytest.raises(ConvertError, match="do not fit 12 elements"):
        convert(value, layout, BIG)
    rgb = NTNDArray().wrap(np.zeros((3, 4, 2), np.uint8), attrib={"ColorMode": 2})
    with pytest.raises(ConvertError, match="colour mode 2"):
        convert(rgb, layout_of(rgb), BIG)


@pytest.mark.parametrize("mode", [2, 3, 4])
def test_what_is_not_published_whole_still_declares_its_metadata(mode: int) -> None:
    """Type, shape and colour as the structure declares them, no pixel touched."""
    rgb = np.zeros((4, 5, 3), np.uint16)  # [h, w, 3]
    layouts = {2: rgb, 3: rgb.transpose(0, 2, 1), 4: rgb.transpose(2, 0, 1)}
    value = NTNDArray().wrap(np.ascontiguousarray(layouts[mode]),
                             attrib={"ColorMode": mode})  # fmt: skip
    layout = layout_of(value)
    with pytest.raises(ConvertError):
        convert(value, layout, 10)
    meta = declared_meta(value, layout)
    assert meta == meta_of(value, layout, convert(value, layout, BIG))
    assert (meta["dt"], meta["shape"], meta["img"]) == ("u2", [4, 5, 3],
                                                        {"color": "rgb"})  # fmt: skip
    value["codec.name"] = "zstd"  # compressed: the type codec.parameters names
    value["codec.parameters"] = 5  # NDUInt32
    assert declared_meta(value, layout)["dt"] == "u4"  # type: ignore[index]
    value["codec.parameters"] = "?"  # the type is not told: no metadata
    assert declared_meta(value, layout) is None
    array = NTScalar("ad").wrap(np.zeros(1000))
    meta = declared_meta(array, layout_of(array))
    assert (meta["dt"], meta["shape"]) == ("f8", [1000])  # type: ignore[index]


def test_unknown_structures_are_maps_of_their_fields() -> None:
    kind = Type(
        [("a", "i"), ("u", ("U", None, [("x", "d"), ("y", "s")])), ("any", "v"),
         ("arr", "ad"), ("rows", ("aS", None, [("q", "i")])),
         ("alarm", ("S", "alarm_t", [("severity", "i"), ("status", "i"),
                                     ("message", "s")]))],
        id="x:Thing:1.0",
    )  # fmt: skip
    value = Value(kind, {"a": 1, "u": ("y", "hi"), "any": 4.5, "arr": [1.0, 2.0],
                         "rows": [{"q": 1}, {"q": 2}]})  # fmt: skip
    v = convert(value, layout_of(value), BIG)
    assert v.pop("arr").tolist() == [1.0, 2.0]
    assert v == {"a": 1, "u": "hi", "any": 4.5, "rows": [{"q": 1}, {"q": 2}]}


def test_put_values_are_checked_against_the_current_type() -> None:
    assert put_fields(NTScalar("d").wrap(0.0), "2.5") == {"value": 2.5}
    assert put_fields(NTScalar("i").wrap(0), 3.0) == {"value": 3}
    assert put_fields(NTScalar("s").wrap(""), 3) == {"value": "3"}
    enum = NTEnum().wrap({"index": 0, "choices": ["a", "b"]})
    assert put_fields(enum, "b") == {"value.index": 1}
    assert put_fields(enum, 1) == {"value.index": 1}
    array = put_fields(NTScalar("ah").wrap([0]), [1, 2])["value"]
    assert array.dtype == np.int16 and array.tolist() == [1, 2]
    for current, value, reason in [
        (NTScalar("d").wrap(0.0), "abc", "not a number"),
        (NTScalar("B").wrap(0), 300, "out of range for u1"),
        (NTScalar("i").wrap(0), 1.5, "not an integer"),
        (enum, "c", "not one of the choices"),
        (enum, 5, "beyond 2 choices"),
        (NTScalar("ad").wrap([0.0]), [[1.0]], "expected 1-D numbers"),
        (NTScalar("ah").wrap([0]), [1, 40000], "1..40000 are out of range for i2"),
        (NTScalar("aB").wrap([0]), [-1], "out of range for u1"),
        (NTScalar("ai").wrap([0]), [0.5], "not all elements are integers"),
        (NTTable([("a", "d")]).wrap([]), 1, "NTTable"),
    ]:
        with pytest.raises(PutValueError, match=reason):
            put_fields(current, value)
