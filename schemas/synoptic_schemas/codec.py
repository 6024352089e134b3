"""The one msgpack encoder/decoder of bus payloads.

``encode`` accepts the message dicts of :mod:`synoptic_schemas.messages` (numpy
arrays become ext type 1, numpy scalars plain numbers). Each ``decode_*`` returns the
dict or raises :class:`DecodeError` — and nothing else, whatever the bytes.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping
from typing import Any, cast

import msgpack
import numpy as np

from synoptic_schemas.errors import DecodeError, VersionError
from synoptic_schemas.messages import (
    SCHEMA_VERSION,
    AuditMsg,
    CmdMsg,
    CmdReplyMsg,
    HeartbeatMsg,
    MetaMsg,
    PutMsg,
    PutReplyMsg,
    SevMsg,
    ValueMsg,
    WantMsg,
)
from synoptic_schemas.ndarray import (
    DTYPE_NAMES,
    EXT_NDARRAY,
    pack_ndarray,
    unpack_ndarray,
)

#: Largest payload a decoder accepts (NATS' default max_payload is 1 MiB; waveforms
#: of 100k doubles are 800 kB). Raise it together with the server's max_payload.
MAX_PAYLOAD = 8 * 1024 * 1024


def _default(obj: object) -> object:
    if isinstance(obj, np.ndarray):
        return msgpack.ExtType(EXT_NDARRAY, pack_ndarray(obj))
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot encode {type(obj).__name__} on the bus")


def _ext_hook(code: int, data: bytes) -> object:
    if code == EXT_NDARRAY:
        return unpack_ndarray(data)
    raise DecodeError(f"unknown msgpack ext type {code}")


_packer_options = {"default": _default, "use_bin_type": True}
#: One reusable ``Packer`` per thread, without ``default``: ``msgpack.packb`` builds
#: a new packer (and buffer) per call, ~60 % of an adapter's scalar value encode.
#: Without ``default`` it never calls back into Python; whatever it cannot pack
#: (numpy arrays and scalars other than ``float``, ints beyond 64 bits, non-dict
#: mappings) raises at once and takes ``packb`` with ``default``, so the bytes and
#: the errors are exactly ``packb``'s.
_packers = threading.local()
_FALLBACK = (TypeError, ValueError, OverflowError)


def encode(msg: Mapping[str, Any]) -> bytes:
    """Encode one payload. Adds nothing: callers build complete messages."""
    try:
        pack = _packers.pack
    except AttributeError:
        pack = _packers.pack = msgpack.Packer(use_bin_type=True).pack
    try:
        return pack(msg)
    except _FALLBACK:  # (the packer resets itself on an error)
        return msgpack.packb(msg, **_packer_options)


def encode_value(
    v: Any, t: int, sev: int, st: str, seq: int, ep: int, c: bool
) -> bytes:
    """A ``cs.val`` payload (:class:`~synoptic_schemas.messages.ValueMsg`) from its
    fields, keys in the order every adapter writes them (which
    :func:`synoptic_schemas.frames.value_order` reads without decoding): the
    adapters' publisher and the gateway bench's synthetic source both use it."""
    return encode(
        {"ver": SCHEMA_VERSION, "v": v, "t": t, "sev": sev, "st": st, "seq": seq,
         "ep": ep, "c": c}
    )  # fmt: skip


#: The longest string value a severity transition carries (longer: left out).
SEV_MAX_TEXT = 64


def encode_sev(v: Any, t: int, sev: int, st: str, seq: int, ep: int, c: bool) -> bytes:
    """A ``cs.sev`` payload (:class:`~synoptic_schemas.messages.SevMsg`) from a
    value's fields: ``v`` is kept when it is a number, a bool or a string of at
    most :data:`SEV_MAX_TEXT` characters (what an alarm list shows), left out
    otherwise (arrays, structures, nil)."""
    msg: dict[str, Any] = {"ver": SCHEMA_VERSION, "sev": sev, "st": st, "c": c,
                           "t": t, "seq": seq, "ep": ep}  # fmt: skip
    kind = type(v)
    if (
        kind is float
        or kind is int
        or kind is bool
        or (kind is str and len(v) <= SEV_MAX_TEXT)
    ):
        msg["v"] = v
    elif isinstance(v, np.generic) and v.dtype.kind in "biuf":
        msg["v"] = v.item()
    return encode(msg)


def decode(data: bytes) -> dict[str, Any]:
    """Decode any payload to a dict and check its schema version."""
    if len(data) > MAX_PAYLOAD:
        raise DecodeError(f"payload of {len(data)} bytes exceeds {MAX_PAYLOAD}")
    try:
        msg = msgpack.unpackb(data, ext_hook=_ext_hook, raw=False)
    except DecodeError:
        raise
    except Exception as exc:  # msgpack raises a zoo of types for bad input
        raise DecodeError(f"malformed msgpack payload: {exc}") from None
    if not isinstance(msg, dict):
        raise DecodeError(f"payload is a {type(msg).__name__}, expected a map")
    ver = msg.get("ver")
    if ver != SCHEMA_VERSION:
        if isinstance(ver, int) and not isinstance(ver, bool):
            raise VersionError(ver, SCHEMA_VERSION)
        raise DecodeError(f"payload has no valid 'ver' (got {ver!r})")
    return msg


_INT = (int,)
_NUM = (int, float)
_Spec = dict[str, tuple[type, ...]]


def _checked(data: bytes, kind: str, required: _Spec, optional: _Spec) -> dict:
    msg = decode(data)
    for key, types in required.items():
        if key not in msg:
            raise DecodeError(f"{kind} payload lacks required key {key!r}")
        _check_type(kind, key, msg[key], types)
    for key, types in optional.items():
        if key in msg:
            _check_type(kind, key, msg[key], types)
    return msg


def _check_type(kind: str, key: str, value: object, types: tuple[type, ...]) -> None:
    if not types:  # any value
        return
    if isinstance(value, bool) and bool not in types:
        raise DecodeError(f"{kind}.{key} must be {types[0].__name__}, not bool")
    if not isinstance(value, types):
        names = "/".join(t.__name__ for t in types)
        raise DecodeError(f"{kind}.{key} must be {names}, not {type(value).__name__}")


_VALUE_REQ: _Spec = {
    "v": (), "t": _INT, "sev": _INT, "st": (str,), "seq": _INT, "ep": _INT, "c": (bool,),
}  # fmt: skip
_META_REQ: _Spec = {"dt": (str,), "shape": (list,), "w": (bool,), "t": _INT, "ep": _INT}
_META_OPT: _Spec = {
    "unit": (str,), "prec": _INT, "disp": (list,), "warn": (list,), "alarm": (list,),
    "ctrl": (list,), "labels": (list,), "desc": (str,), "native": (str,),
    "cols": (list,), "img": (dict,),
}  # fmt: skip


def decode_value(data: bytes) -> ValueMsg:
    """Decode a ``cs.val`` payload."""
    msg = _checked(data, "value", _VALUE_REQ, {})
    if not 0 <= msg["sev"] <= 3:
        raise DecodeError(f"value.sev must be 0..3, not {msg['sev']}")
    return cast(ValueMsg, msg)


_SEV_REQ: _Spec = {
    "sev": _INT, "st": (str,), "c": (bool,), "t": _INT, "seq": _INT, "ep": _INT,
}  # fmt: skip
_SEV_OPT: _Spec = {"v": (int, float, bool, str)}


def decode_sev(data: bytes) -> SevMsg:
    """Decode a ``cs.sev`` severity transition (the alarm service decodes every
    one: the common, well-formed case is checked inline, anything else by the
    general checks, which say what is wrong)."""
    msg = decode(data)
    try:
        sev, st, c, t, seq, ep = (msg["sev"], msg["st"], msg["c"], msg["t"],
                                  msg["seq"], msg["ep"])  # fmt: skip
    except KeyError:
        sev = st = c = t = seq = ep = None
    v = msg.get("v", 0)
    if not (
        type(sev) is int and 0 <= sev <= 3 and type(st) is str and type(c) is bool
        and type(t) is int and type(seq) is int and type(ep) is int
        and type(v) in (int, float, bool, str)
    ):  # fmt: skip
        _checked(data, "sev", _SEV_REQ, _SEV_OPT)
        raise DecodeError(f"sev.sev must be 0..3, not {msg.get('sev')!r}")
    return cast(SevMsg, msg)


def decode_meta(data: bytes) -> MetaMsg:
    """Decode a ``cs.meta`` payload."""
    return cast(MetaMsg, _checked(data, "meta", _META_REQ, _META_OPT))


#: The longest description and units :func:`meta_text` keeps (characters).
META_TEXT_MAX = (200, 40)


def meta_text(data: bytes) -> tuple[str, str]:
    """The description and units of a ``cs.meta`` payload (empty when absent,
    not strings, or the payload is not a map of this schema version), each cut to
    :data:`META_TEXT_MAX`. Reads these two fields alone, without checking the
    rest: a directory reads them for every channel."""
    if len(data) > MAX_PAYLOAD:
        return "", ""
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception:  # msgpack raises a zoo of types for bad input
        return "", ""
    if not isinstance(msg, dict) or msg.get("ver") != SCHEMA_VERSION:
        return "", ""
    desc, unit = msg.get("desc"), msg.get("unit")
    return (
        desc[: META_TEXT_MAX[0]] if isinstance(desc, str) else "",
        unit[: META_TEXT_MAX[1]] if isinstance(unit, str) else "",
    )


def decode_put(data: bytes) -> PutMsg:
    """Decode a ``cs.put`` request."""
    return cast(
        PutMsg, _checked(data, "put", {"v": ()}, {"who": (str,), "timeout": _NUM})
    )


def decode_put_reply(data: bytes) -> PutReplyMsg:
    """Decode the reply to a put request."""
    spec: _Spec = {"err": (str,), "msg": (str,)}
    return cast(PutReplyMsg, _checked(data, "put reply", {"ok": (bool,)}, spec))


def decode_cmd(data: bytes) -> CmdMsg:
    """Decode a ``cs.cmd`` request."""
    spec: _Spec = {"v": (), "who": (str,), "timeout": _NUM}
    return cast(CmdMsg, _checked(data, "cmd", {}, spec))


def decode_cmd_reply(data: bytes) -> CmdReplyMsg:
    """Decode the reply to a command request."""
    spec: _Spec = {"v": (), "err": (str,), "msg": (str,)}
    return cast(CmdReplyMsg, _checked(data, "cmd reply", {"ok": (bool,)}, spec))


def decode_want(data: bytes) -> WantMsg:
    """Decode a ``cs.want`` announcement."""
    req: _Spec = {"ch": (list,), "lease": _NUM, "by": (str,)}
    msg = _checked(data, "want", req, {})
    if not all(isinstance(uri, str) for uri in msg["ch"]):
        raise DecodeError("want.ch must be a list of channel URIs")
    return cast(WantMsg, msg)


def decode_heartbeat(data: bytes) -> HeartbeatMsg:
    """Decode a ``cs.hb`` heartbeat."""
    req: _Spec = {
        "id": (str,), "proto": (str,), "ep": _INT, "t": _INT, "period": _NUM,
        "n": _INT, "conn": _INT,
    }  # fmt: skip
    return cast(HeartbeatMsg, _checked(data, "heartbeat", req, {}))


def decode_audit(data: bytes) -> AuditMsg:
    """Decode a ``cs.audit`` record."""
    req: _Spec = {
        "who": (str,), "ch": (str,), "v": (), "ok": (bool,), "t": _INT, "by": (str,),
    }  # fmt: skip
    opt: _Spec = {"err": (str,), "msg": (str,), "op": (str,)}
    return cast(AuditMsg, _checked(data, "audit", req, opt))


def to_json_view(obj: object) -> object:
    """The JSON view of a decoded payload: typed arrays become
    ``{"dtype", "shape", "b64"}`` objects (the form the JSON Schemas describe)."""
    if isinstance(obj, np.ndarray):
        packed = pack_ndarray(obj)
        ndim = packed[1]
        return {
            "dtype": DTYPE_NAMES[packed[0]],
            "shape": list(obj.shape),
            "b64": base64.b64encode(packed[2 + 4 * ndim :]).decode(),
        }
    if isinstance(obj, dict):
        return {k: to_json_view(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_json_view(v) for v in obj]
    return obj
