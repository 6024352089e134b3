"""The simulated IOC: an animated 100k-point waveform (the demo), and CA on any
interface (containers)."""

from __future__ import annotations

from synoptic_adapters.testing import SimIoc, ca_batch


def test_fill_rate_rewrites_the_big_waveform_with_a_moving_pattern() -> None:
    ioc = SimIoc(records=1, fill_rate=5).start()
    try:
        name = ioc.pv("WF100K")
        first, second = ca_batch(ioc, [("get", name, None), ("put", ioc.pv("SP"), 1.0),
                                       ("get", name, None)])  # fmt: skip
    finally:
        ioc.stop()
    assert len(first) == len(second) == 100_000
    assert max(abs(v) for v in first) > 100  # a real pattern, not zeros
    # the pattern's doubles, not their bytes read as integers (envelope 1000, noise
    # sigma 20): negative values and nothing near 2**32
    assert min(first) < -100 and max(abs(v) for v in first) < 1200
    assert first != second  # moved between the two reads (0.2 s apart at 5 Hz)


def test_the_ioc_can_listen_on_every_interface() -> None:
    ioc = SimIoc(records=1, interface="0.0.0.0").start()
    try:
        initial = ca_batch(ioc, [("get", ioc.pv("SP"), None)])
        assert initial == [50.0]  # the setpoint's initial value
    finally:
        ioc.stop()
