"""Command arguments converted by the declared type; outputs as bus values."""

from __future__ import annotations

import numpy as np
import pytest
import tango
from tango import CmdArgType

from synoptic_adapters.tango.commands import argument, output
from synoptic_adapters.tango.writes import WriteTypeError


def test_arguments_follow_the_declared_type() -> None:
    assert argument(None, CmdArgType.DevVoid) is None
    assert argument("2.5", CmdArgType.DevDouble) == 2.5
    assert argument(True, CmdArgType.DevBoolean) is True
    assert argument(7.0, CmdArgType.DevLong) == 7
    assert argument(3, CmdArgType.DevString) == "3"
    longs = argument([1, 2.0], CmdArgType.DevVarLongArray)
    assert longs.tolist() == [1, 2]
    assert argument(["a", 1], CmdArgType.DevVarStringArray) == ["a", "1"]


@pytest.mark.parametrize(
    ("value", "kind", "why"),
    [
        (1, CmdArgType.DevVoid, "takes no argument"),
        (None, CmdArgType.DevDouble, "needs a DevDouble argument"),
        ("x", CmdArgType.DevDouble, "'x' is not a number"),
        (70000, CmdArgType.DevShort, "outside the i2 range"),
        (1.5, CmdArgType.DevVarDoubleArray, "expected an array"),
        ("x", CmdArgType.DevEncoded, "DevEncoded arguments are not supported"),
    ],
)
def test_bad_arguments_say_why(value: object, kind: CmdArgType, why: str) -> None:
    with pytest.raises(WriteTypeError, match=why):
        argument(value, kind)


def test_outputs_become_bus_values() -> None:
    assert output(tango.DevState.ON) == int(tango.DevState.ON)
    array = output(np.arange(3, dtype=np.int32))
    assert isinstance(array, np.ndarray) and array.dtype == np.int32
    assert output(np.float32(1.5)) == 1.5
    assert output([np.array([1, 2]), ["a", "b"]])[1] == ["a", "b"]
    assert output("done") == "done"
