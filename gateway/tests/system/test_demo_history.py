"""History as users run it: the real ``synoptic demo`` (simulated IOC, PV Access
server with its 2 MB images at 10 Hz and waveforms, Tango device, adapters,
rollup, archiver, gateway) with the raw history's byte budget cut to a few seconds
of the demo's scalars, run until that budget has filled several times over. Then
the history of every numeric channel, asked through the demo's gateway, covers the
whole window, and every pixel column's minimum and maximum equal those of the
values recorded live from ``cs.val`` over the same window; the images were kept,
thinned, in a stream of their own and never entered the raw history."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nats.js.errors import NotFoundError

from synoptic_bus.connect import connect
from synoptic_bus.procs import Process, free_port, free_udp_tcp_port
from synoptic_gateway.client import GatewayClient
from synoptic_gateway.history.record import LiveRecord, check_trace
from synoptic_schemas import decode_value

#: the whole demo starts, runs through RECORD_S and stops: minutes on a busy machine
pytestmark = [pytest.mark.system, pytest.mark.timeout(900)]

S = 1_000_000_000
#: the raw history's byte budget during the test: ~20 s of the demo's scalars (the
#: rollup may fall that far behind on a busy machine before the stream drops values
#: it has not read: it says so in its log)
RAW_BYTES = 4_000_000
#: how long values are recorded (the raw budget fills ~3 times over)
RECORD_S = 60.0
PX = 400


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """The demo's data folder, one the ``postgres`` user can reach."""
    path = Path(tempfile.mkdtemp(prefix="synoptic-demo-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_trends_of_every_numeric_demo_channel_cover_the_window(
    var_dir: Path,
) -> None:
    http, nats_port = free_port(), free_port()
    url = f"nats://127.0.0.1:{nats_port}"
    argv = [sys.executable, "-m", "synoptic_bus.cli", "demo", "--var", str(var_dir),
            "--nats-port", str(nats_port), "--http-port", str(http),
            "--tango-port", str(free_udp_tcp_port()),
            "--idp-port", str(free_port()), "--history-bytes", str(RAW_BYTES)]  # fmt: skip
    demo = Process("demo", argv)
    try:
        await asyncio.to_thread(demo.wait_for, r"demo running", 360)
        nc = await connect(url, name="test-recorder")
        js = nc.jetstream(timeout=30)  # a busy machine answers slowly
        record = LiveRecord(nc)
        assert await record.start() > 200
        started = time.time_ns()
        raw_seq = (await js.stream_info("CS_HIST")).state.last_seq
        await asyncio.sleep(RECORD_S)  # the workload runs: nothing to await
        info = await js.stream_info("CS_HIST")
        # the raw budget filled several times over since recording began
        assert info.state.last_seq - raw_seq > 2 * info.state.messages
        assert info.config.max_msg_size == 4096
        with pytest.raises(NotFoundError):  # no image ever entered the raw history
            await js.get_last_msg("CS_HIST", "cs.hist.val.pva.DEMO:IMAGE")
        image = await js.get_last_msg("CS_ARRAYS", "cs.hist.arr.pva.DEMO:IMAGE")
        assert decode_value(image.data)["v"].shape == (1024, 1024)
        # whole milliseconds: the request's times are ms, the columns exact
        t0 = (started // 1_000_000 + 2000) * 1_000_000
        t1 = (time.time_ns() // 1_000_000 - 3000) * 1_000_000
        await record.stop_after(t1 + 3 * S)
        await nc.close()
        series = record.series()
        assert {u.split(":", 1)[0] for u in series} == {"ca", "pva", "tango"}
        async with GatewayClient(f"ws://127.0.0.1:{http}/ws") as client:
            uris = sorted(series)
            for i in range(0, len(uris), 25):  # (a trend screen's worth at a time)
                batch = uris[i : i + 25]
                traces = await client.history(batch, t0 / 1e6, t1 / 1e6, px=PX)
                for uri in batch:
                    trace = traces[uri]
                    assert trace.err is None, (uri, trace.err)
                    assert trace.t is not None and trace.v is not None
                    check = check_trace(uri, series[uri], trace.t, trace.v, t0, t1, PX)
                    assert check.equal, check
                    assert check.coverage == 1.0 and check.columns > 0, check
                    # the recorder itself saw (nearly) everything it compares
                    assert check.missed <= check.recorded // 20, check
    except BaseException:
        # the demo's own log beside the failure (rollup drops, reconnects, ...)
        lines = demo.output().splitlines()
        print(
            "\n".join(x for x in lines if "rollup" in x or "WARN" in x or "slow" in x)
        )
        raise
    finally:
        demo.stop(30)
