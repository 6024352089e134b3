"""Command arguments → Tango argument types, and command outputs → bus values."""

from __future__ import annotations

from typing import Any

import numpy as np
import tango
from tango import CmdArgType

from synoptic_adapters.tango.convert import DT_OF_TYPE
from synoptic_adapters.tango.writes import WriteTypeError, coerce

#: Array argument types (``DevVar…Array``) and their element's bus type.
_ARRAY_DT: dict[CmdArgType, str] = {
    CmdArgType.DevVarBooleanArray: "bool",
    CmdArgType.DevVarCharArray: "u1",
    CmdArgType.DevVarShortArray: "i2",
    CmdArgType.DevVarUShortArray: "u2",
    CmdArgType.DevVarLongArray: "i4",
    CmdArgType.DevVarULongArray: "u4",
    CmdArgType.DevVarLong64Array: "i8",
    CmdArgType.DevVarULong64Array: "u8",
    CmdArgType.DevVarFloatArray: "f4",
    CmdArgType.DevVarDoubleArray: "f8",
    CmdArgType.DevVarStringArray: "str",
}
_SCALAR_ARGS = frozenset(DT_OF_TYPE) - {CmdArgType.DevEncoded, CmdArgType.DevState}


def argument(value: Any, in_type: CmdArgType) -> Any:
    """Convert a command request's ``v`` to what ``command_inout`` needs for a
    command declared with ``in_type``; raise :class:`WriteTypeError` saying why
    not. ``None`` means "no argument"."""
    kind = CmdArgType(in_type)
    if kind == CmdArgType.DevVoid:
        if value is not None:
            raise WriteTypeError("the command takes no argument")
        return None
    if value is None:
        raise WriteTypeError(f"the command needs a {kind.name} argument")
    if kind in _ARRAY_DT:
        return coerce(value, {"dt": _ARRAY_DT[kind], "shape": [0]})
    if kind in _SCALAR_ARGS:
        return coerce(value, {"dt": DT_OF_TYPE[kind], "shape": []})
    raise WriteTypeError(f"{kind.name} arguments are not supported")


def output(result: Any) -> Any:
    """A command's output as a bus value: numbers, strings and booleans as they
    are, numeric arrays as typed arrays, DevState as its index, string arrays
    and ``DevVar…StringArray`` pairs as lists."""
    if isinstance(result, tango.DevState):
        return int(result)
    if isinstance(result, np.ndarray):
        return result if result.dtype.kind in "biuf" else result.tolist()
    if isinstance(result, np.generic):
        return result.item()
    if isinstance(result, list | tuple):
        return [output(item) for item in result]
    return result
