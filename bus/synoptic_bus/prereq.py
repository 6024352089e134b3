"""What the bus must offer before a component can start, and what to do when it
does not: each check raises :class:`PrerequisiteError` whose message is one line
an operator can act on (printed as is by the commands, never a traceback).
"""

from __future__ import annotations

from nats.aio.client import Client as NatsClient
from nats.errors import NoRespondersError
from nats.js.errors import APIError, NotFoundError, ServiceUnavailableError

from synoptic_bus.connect import redact

#: How to turn JetStream on, said wherever it is found off.
JETSTREAM_HOWTO = (
    "start nats-server with -js (or a `jetstream {}` block in its configuration; "
    "with accounts, `jetstream: enabled` in the account)"
)


class PrerequisiteError(RuntimeError):
    """Something a component needs is missing; the message says what to do."""


class JetStreamOffError(PrerequisiteError):
    """JetStream does not answer: only the server's operator can fix it."""


class StorageError(PrerequisiteError):
    """JetStream may not reserve a stream's budget (its storage limit is reached)."""


#: JetStream's error code when a stream's byte budget exceeds what the server
#: (or the account) may still reserve.
INSUFFICIENT_STORAGE = 10047


def insufficient_storage(exc: BaseException) -> bool:
    """Whether ``exc`` says JetStream has no room left for a new stream."""
    return isinstance(exc, APIError) and exc.err_code == INSUFFICIENT_STORAGE


def storage_error(nc: NatsClient, stream: str, budget: int | None) -> StorageError:
    what = f"{budget} bytes for {stream}" if budget else stream
    return StorageError(
        f"JetStream on {server_of(nc)} has no room left to reserve {what}: raise "
        "max_file_store (max_memory_store for memory streams) in nats-server's "
        "`jetstream {}` block, or give `synoptic bus init` smaller budgets "
        "(--history-bytes, --history-blocks-bytes, --history-arrays-bytes, "
        "--meta-history-bytes)"
    )


class MissingStreamError(PrerequisiteError):
    """A stream is missing (``synoptic bus init`` makes it; it may be running)."""


def server_of(nc: NatsClient) -> str:
    """The server ``nc`` is connected to, for messages (no credentials)."""
    url = nc.connected_url
    return redact(url.geturl()) if url is not None else "the NATS server"


def jetstream_off(exc: BaseException) -> bool:
    """Whether ``exc`` from a JetStream API request means nothing answers the
    API at all (JetStream off on the server or for the account), not a stream
    missing or JetStream busy (those carry an API error code)."""
    if isinstance(exc, NoRespondersError):
        return True
    return isinstance(exc, ServiceUnavailableError) and exc.err_code is None


def jetstream_off_error(nc: NatsClient) -> JetStreamOffError:
    return JetStreamOffError(
        f"JetStream is off on {server_of(nc)} (Synoptic keeps last values, "
        f"history and screens in it): {JETSTREAM_HOWTO}"
    )


async def stream_exists(nc: NatsClient, stream: str, timeout: float = 5.0) -> bool:
    """Whether ``stream`` exists (:class:`PrerequisiteError` if JetStream is off)."""
    try:
        await nc.jetstream(timeout=timeout).stream_info(stream)
    except NotFoundError:
        return False
    except (ServiceUnavailableError, NoRespondersError) as exc:
        if jetstream_off(exc):
            raise jetstream_off_error(nc) from None
        raise
    return True


def missing_stream_error(stream: str, what: str) -> MissingStreamError:
    return MissingStreamError(
        f"the {what} stream {stream} does not exist: run `synoptic bus init` "
        f"(as a NATS user that may create streams; in Kubernetes the bus-init Job)"
    )


def payload_too_small(size: int, limit: int) -> str:
    """The status (and log line) of a value larger than the bus's limit."""
    return (
        f"value of {size} bytes exceeds the bus's max_payload of {limit} bytes: "
        f"raise max_payload in nats-server's configuration (e.g. 8MB)"
    )
