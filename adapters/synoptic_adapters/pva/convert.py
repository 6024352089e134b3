"""PV Access values → bus fields: pure functions over p4p ``Value`` objects.

A channel's :class:`Layout` is read from the first value after every (re)connect:
its normative type (NTScalar, NTScalarArray, NTEnum, NTTable, NTNDArray) picks how
``value`` becomes the bus ``v``; any other structure (an unknown normative type or
a plain structure) is published whole as a generic structure, a map of its fields.

- NTScalar → number, bool or string; NTScalarArray → typed array (strings: list).
- NTEnum → the index; the choices are the metadata's ``labels``.
- NTTable → a map column name → column (typed array, or list of strings); the
  metadata's ``cols`` lists name, label and dtype of each column.
- NTNDArray → a typed array shaped ``[h, w]`` (mono, Bayer) or ``[h, w, 3]`` (the
  three RGB layouts, interleaved); ``img`` in the metadata names the colour mode.
- alarm → ``sev``/``st``; timeStamp → ``t``; display, control and valueAlarm →
  ``unit``, ``prec``, ``desc``, ``disp``, ``ctrl``, ``warn``, ``alarm``.

A value that cannot be published whole raises :class:`ConvertError` with the
reason (an array over the size limit, an image compressed with a codec the
adapter does not decode or whose data is corrupt, dimensions that do not match
the data): the channel then shows that reason, and nothing half.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from synoptic_adapters.pva import codecs

#: p4p scalar type codes → bus dtypes.
DTYPES = {
    "?": "bool", "b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4",
    "l": "i8", "L": "u8", "f": "f4", "d": "f8", "s": "str",
}  # fmt: skip
#: Normative type names (id without the version) this module maps.
NT_SCALAR = "epics:nt/NTScalar"
NT_ARRAY = "epics:nt/NTScalarArray"
NT_ENUM = "epics:nt/NTEnum"
NT_TABLE = "epics:nt/NTTable"
NT_NDARRAY = "epics:nt/NTNDArray"
#: PVA alarm.status codes (alarm_t) → names, used when ``alarm.message`` is empty.
ALARM_STATUS = (
    "NO_STATUS", "DEVICE", "DRIVER", "RECORD", "DB", "CONF", "UNDEFINED", "CLIENT",
)  # fmt: skip
_SEVERITY_NAMES = ("NO_ALARM", "MINOR", "MAJOR", "INVALID")
#: areaDetector ColorMode → (name, axes permutation to [h, w, 3] or None).
COLOR_MODES: dict[int, tuple[str, tuple[int, int, int] | None]] = {
    0: ("mono", None), 1: ("bayer", None), 2: ("rgb", None),
    3: ("rgb", (0, 2, 1)), 4: ("rgb", (1, 2, 0)),
}  # fmt: skip
#: Colour mode → the numpy axis of the three colours (RGB1, RGB2, RGB3).
_COLOR_AXIS = {2: 2, 3: 1, 4: 0}
_PRECISION = re.compile(r"\.(\d+)")


class ConvertError(ValueError):
    """A value the adapter does not publish; the message says why."""


@dataclass(frozen=True)
class Layout:
    """How one connection's values map onto the bus (fixed until a reconnect)."""

    kind: str  # scalar array enum table image struct
    type_id: str  # the structure's id, e.g. epics:nt/NTScalar:1.0
    dt: str  # bus dtype of the value (str, enum, table, struct …)
    signature: Any  # the full type description, to notice a changed structure
    #: every field's dotted name (``display.units`` …): metadata reads only the
    #: fields there are (p4p raises for a missing one, ~18 µs a lookup)
    fields: frozenset[str] = frozenset()


def field_names(signature: Any, prefix: str = "") -> set[str]:
    """Dotted names of every field of a type description (``Type.aspy()``),
    sub-structures included (not those inside unions or structure arrays)."""
    names: set[str] = set()
    if not (isinstance(signature, tuple) and signature[0] == "S"):
        return names
    for name, code in signature[2]:
        names.add(prefix + name)
        names |= field_names(code, f"{prefix}{name}.")
    return names


def layout_of(value: Any) -> Layout:
    """The layout of a channel from a complete value of its structure."""
    type_id = value.getID()
    name = type_id.rsplit(":", 1)[0] if type_id.count(":") >= 2 else type_id
    signature = value.type().aspy()
    fields = dict(signature[2]) if signature[0] == "S" else {}
    names = frozenset(field_names(signature))
    code = fields.get("value")
    if name == NT_SCALAR and isinstance(code, str) and code in DTYPES:
        return Layout("scalar", type_id, DTYPES[code], signature, names)
    if name == NT_ARRAY and isinstance(code, str) and code[1:] in DTYPES:
        return Layout("array", type_id, DTYPES[code[1:]], signature, names)
    if name == NT_ENUM and _has(code, "index"):
        return Layout("enum", type_id, "enum", signature, names)
    if name == NT_TABLE and isinstance(code, tuple) and code[0] == "S":
        return Layout("table", type_id, "table", signature, names)
    if name == NT_NDARRAY and isinstance(code, tuple) and code[0] == "U":
        return Layout("image", type_id, "image", signature, names)
    return Layout("struct", type_id or "structure", "struct", signature, names)


def _has(code: Any, field: str) -> bool:
    return isinstance(code, tuple) and any(f[0] == field for f in code[2])


def stamp_ns(value: Any, now_ns: int) -> int:
    """``timeStamp`` in ns since 1970 (``now_ns`` when absent or unset)."""
    try:
        secs = value["timeStamp.secondsPastEpoch"]
    except KeyError:
        return now_ns
    if secs <= 0:
        return now_ns
    return secs * 1_000_000_000 + value["timeStamp.nanoseconds"]


def alarm_of(value: Any) -> tuple[int, str]:
    """``(sev, st)`` from ``alarm``: the message, else the status name, else the
    severity's name."""
    try:
        sev, status, message = (
            value["alarm.severity"], value["alarm.status"], value["alarm.message"],
        )  # fmt: skip
    except KeyError:
        return 0, "NO_ALARM"
    sev = min(max(int(sev), 0), 3)
    if message:
        return sev, message
    if sev == 0:
        return 0, "NO_ALARM"
    if 0 < status < len(ALARM_STATUS):
        return sev, ALARM_STATUS[status]
    return sev, _SEVERITY_NAMES[sev]


def convert(value: Any, layout: Layout, max_bytes: int) -> Any:
    """The bus ``v`` of one update; :class:`ConvertError` if it cannot be whole."""
    kind = layout.kind
    if kind == "scalar":
        return value["value"]
    if kind == "enum":
        return value["value.index"]
    if kind == "array":
        return _checked(value["value"], max_bytes)
    if kind == "table":
        return table_columns(value, max_bytes)
    if kind == "image":
        return image_array(value, max_bytes)
    return structure(value, max_bytes)


def _checked(data: Any, max_bytes: int) -> Any:
    size = (
        data.nbytes
        if isinstance(data, np.ndarray)
        else sum(len(s.encode()) for s in data)
    )
    if size > max_bytes:
        raise ConvertError(
            f"array of {size} bytes exceeds the limit of {max_bytes} bytes"
        )
    return data


def table_columns(value: Any, max_bytes: int) -> dict[str, Any]:
    """An NTTable's columns, name → typed array or list of strings."""
    columns = {name: column for name, column in value["value"].items()}
    _checked_total(columns.values(), max_bytes, "table")
    return columns


def _checked_total(items: Any, max_bytes: int, what: str) -> None:
    size = 0
    for item in items:
        if isinstance(item, np.ndarray):
            size += item.nbytes
        elif isinstance(item, list):
            size += sum(len(str(s)) for s in item)
    if size > max_bytes:
        raise ConvertError(
            f"{what} of {size} bytes exceeds the limit of {max_bytes} bytes"
        )


def color_mode(value: Any) -> int:
    """The areaDetector ``ColorMode`` attribute of an NTNDArray (0, mono, if absent)."""
    for attribute in value["attribute"]:
        if attribute["name"] == "ColorMode":
            try:
                return int(attribute["value"])
            except (TypeError, ValueError):
                return -1
    return 0


def image_array(value: Any, max_bytes: int) -> np.ndarray:
    """An NTNDArray's pixels shaped ``[h, w]`` or ``[h, w, 3]`` (decompressed:
    :mod:`~synoptic_adapters.pva.codecs`)."""
    codec = value["codec.name"]
    data = value["value"]
    if data is None:
        data = np.zeros(0, dtype=np.uint8)
    dims = tuple(int(d["size"]) for d in value["dimension"])[::-1]
    if codec:
        data = _decompressed(value, codec, data, dims, max_bytes)
        if data.ndim == 3:  # jpeg decodes colour interleaved, whatever the mode
            return data
    _checked(data, max_bytes)
    shape = dims or (data.size,)
    if math.prod(shape) != data.size or len(shape) > 3:
        raise ConvertError(f"image dimensions {list(shape[::-1])} do not fit "
                           f"{data.size} elements")  # fmt: skip
    mode = color_mode(value)
    if len(shape) == 3:
        axis = _COLOR_AXIS.get(mode)
        if axis is None or shape[axis] != 3:
            raise ConvertError(f"colour mode {mode} does not fit dimensions "
                               f"{list(shape[::-1])}")  # fmt: skip
        image = data.reshape(shape)
        axes = COLOR_MODES[mode][1]
        return np.ascontiguousarray(image.transpose(axes)) if axes else image
    return data.reshape(shape)


def _decompressed(
    value: Any, codec: str, data: np.ndarray, dims: tuple[int, ...], max_bytes: int
) -> np.ndarray:
    """The uncompressed pixels (flat; jpeg: shaped) of a compressed NTNDArray,
    checked against the size limit before anything is decompressed."""
    count = math.prod(dims) if dims else 0
    try:
        codecs.require(codec)
        dtype = (
            np.dtype("u1")
            if codec == "jpeg"
            else codecs.original_dtype(value["codec.parameters"])
        )
        if count * dtype.itemsize > max_bytes:
            raise ConvertError(
                f"image of {count * dtype.itemsize} bytes (uncompressed) exceeds "
                f"the limit of {max_bytes} bytes"
            )
        return codecs.decompress(codec, data, dtype, count)
    except codecs.CodecError as exc:
        raise ConvertError(str(exc)) from exc


def structure(value: Any, max_bytes: int) -> dict[str, Any]:
    """A generic structure as a map of its fields (without alarm and timeStamp)."""
    plain = _plain(value.todict())
    if not isinstance(plain, dict):
        plain = {"value": plain}
    plain.pop("alarm", None)
    plain.pop("timeStamp", None)
    _checked_total(_leaves(plain), max_bytes, "structure")
    return plain


def _plain(item: Any) -> Any:
    if isinstance(item, dict):
        return {str(k): _plain(v) for k, v in item.items()}
    if isinstance(item, np.ndarray):
        return item if item.dtype.kind in "biuf" else [str(v) for v in item]
    if isinstance(item, list | tuple):
        return [_plain(v) for v in item]
    if item is None or isinstance(item, bool | int | float | str):
        return item
    if hasattr(item, "todict"):  # a Value held by a union or variant
        return _plain(item.todict())
    return str(item)


def _leaves(item: Any) -> Any:
    if isinstance(item, dict):
        for value in item.values():
            yield from _leaves(value)
    elif isinstance(item, list) and item and isinstance(item[0], dict):
        for value in item:
            yield from _leaves(value)
    else:
        yield item


def _pair(lo: Any, hi: Any) -> list[float] | None:
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        return None
    if math.isnan(lo) or math.isnan(hi) or lo == hi:  # equal means unset
        return None
    return [lo, hi]


def _field(value: Any, name: str, fields: frozenset[str]) -> Any:
    return value[name] if name in fields else None


def meta_of(value: Any, layout: Layout, v: Any) -> dict[str, Any]:
    """``MetaMsg`` fields (without ver/t/ep) of a connection from a value and its
    converted ``v``. PV Access tells no write access: ``w`` is true and a refused
    put is answered by the server."""
    meta: dict[str, Any] = {"dt": layout.dt, "shape": [], "w": True,
                            "native": layout.type_id}  # fmt: skip
    kind = layout.kind
    if kind == "array" or kind == "image":
        meta["shape"] = list(np.shape(v)) if isinstance(v, np.ndarray) else [len(v)]
    if kind == "image":
        meta["dt"] = _dtype_name(v)
        meta["img"] = {"color": COLOR_MODES.get(color_mode(value), ("mono",))[0]}
    elif kind == "enum":
        meta["labels"] = list(value["value.choices"])
    elif kind == "table":
        labels = list(_field(value, "labels", layout.fields) or [])
        meta["cols"] = [
            {"name": name, "label": labels[i] if i < len(labels) else name,
             "dt": _dtype_name(column)}
            for i, (name, column) in enumerate(v.items())
        ]  # fmt: skip
    numeric = layout.dt not in ("str", "bool", "struct")
    _display(value, meta, layout.fields, numeric=numeric)
    return meta


def declared_meta(value: Any, layout: Layout) -> dict[str, Any] | None:
    """The metadata of a value that cannot be published whole: the type and shape
    its structure declares, read without converting (or decompressing) its data;
    None where the structure does not tell them."""
    try:
        if layout.kind == "array":
            return meta_of(value, layout, value["value"])
        if layout.kind == "table":
            return meta_of(value, layout, dict(value["value"].items()))
        if layout.kind == "image":
            return meta_of(value, layout, _declared_image(value))
        return meta_of(value, layout, None)
    except (ConvertError, codecs.CodecError, KeyError, TypeError, ValueError):
        return None


def _declared_image(value: Any) -> np.ndarray:
    """An array of no pixels (all strides 0) with the dtype and the ``[h, w]`` or
    ``[h, w, 3]`` shape an NTNDArray declares."""
    codec = value["codec.name"]
    if codec == "jpeg":
        dtype = np.dtype("u1")
    elif codec:
        dtype = codecs.original_dtype(value["codec.parameters"])
    else:
        data = value["value"]
        dtype = data.dtype if isinstance(data, np.ndarray) else np.dtype("u1")
    shape = tuple(int(d["size"]) for d in value["dimension"])[::-1]
    if not shape or len(shape) > 3:
        raise ConvertError("no usable dimensions")
    if len(shape) == 3:
        axes = COLOR_MODES.get(color_mode(value), ("", None))[1]
        shape = tuple(shape[a] for a in axes) if axes else shape
    return np.lib.stride_tricks.as_strided(
        np.zeros(1, dtype), shape=shape, strides=(0,) * len(shape)
    )


def _dtype_name(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return "bool" if v.dtype.kind == "b" else v.dtype.newbyteorder("=").str[1:]
    return "str"


def _display(
    value: Any, meta: dict[str, Any], fields: frozenset[str], *, numeric: bool
) -> None:
    units = _field(value, "display.units", fields)
    if units:
        meta["unit"] = str(units)
    description = _field(value, "display.description", fields)
    if description:
        meta["desc"] = str(description)
    if not numeric:
        return
    precision = _field(value, "display.precision", fields)
    if precision is None:
        match = _PRECISION.search(_field(value, "display.format", fields) or "")
        precision = int(match.group(1)) if match else None
    if precision is not None and meta["dt"] in ("f4", "f8"):
        meta["prec"] = int(precision)
    for key, lo, hi in (
        ("disp", "display.limitLow", "display.limitHigh"),
        ("ctrl", "control.limitLow", "control.limitHigh"),
        ("warn", "valueAlarm.lowWarningLimit", "valueAlarm.highWarningLimit"),
        ("alarm", "valueAlarm.lowAlarmLimit", "valueAlarm.highAlarmLimit"),
    ):
        pair = _pair(_field(value, lo, fields), _field(value, hi, fields))
        if pair is not None:
            meta[key] = pair


#: Fields whose change means new metadata, per kind.
META_FIELDS = {
    "scalar": ("display", "control", "valueAlarm"),
    "array": ("display", "control", "valueAlarm"),
    "enum": ("value.choices", "display"),
    "table": ("labels",),
    "image": ("dimension", "attribute", "codec"),
    "struct": (),
}
