"""The gateway's history service from its settings, on a thread (the default) or
in a child process (``Settings.hist_process``)."""

from __future__ import annotations

from synoptic_gateway.history.busbackend import BusHistory
from synoptic_gateway.history.moment import MomentReader
from synoptic_gateway.history.playback import StretchReader
from synoptic_gateway.history.process import HistoryProcess
from synoptic_gateway.history.service import HistoryService
from synoptic_gateway.history.worker import HistoryWorker
from synoptic_gateway.settings import Settings


def history_service(settings: Settings) -> HistoryService:
    """The service with its own NATS connection and the archive, if configured."""
    bus = BusHistory(
        settings.nats_url,
        settings.prefix,
        f"synoptic-gateway-{settings.gateway_id}-hist",
        blocks=settings.hist_blocks,
    )
    archive = None
    if settings.hist_archive_dsn:  # psycopg loaded only where there is an archive
        from synoptic_gateway.history.hdbpp import HdbppArchive

        archive = HdbppArchive(settings.hist_archive_dsn)
    return HistoryService(
        settings,
        bus,
        archive,
        MomentReader(settings, bus.connection, archive),
        StretchReader(settings, bus.connection),
    )


def history_runner(settings: Settings) -> HistoryWorker | HistoryProcess:
    """A thread of this process by default; a child process where configured."""
    if settings.hist_process:
        return HistoryProcess(settings)
    return HistoryWorker(history_service(settings))
