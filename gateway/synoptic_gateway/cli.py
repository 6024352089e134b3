"""``synoptic gateway``: run one gateway process (uvicorn, uvloop, httptools).

:func:`register` runs for every ``synoptic`` command, so this module imports
nothing heavy: FastAPI, uvicorn and uvloop are imported when the command runs."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from synoptic_gateway.settings import Settings

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``synoptic gateway`` to the ``synoptic`` command."""
    d = Settings(nats_url="")
    p = sub.add_parser("gateway", help="run the WebSocket gateway")
    p.add_argument("--host", default="127.0.0.1", help="listen address")
    p.add_argument("--port", type=int, default=8000, help="listen port")
    p.add_argument("--nats", default=None, help="NATS URL (default $SYNOPTIC_NATS_URL)")
    p.add_argument("--prefix", default=d.prefix, help="subject prefix")
    p.add_argument("--id", default="", help="gateway instance id (default random)")
    p.add_argument("--screens", type=Path, default=d.screens_dir,
                   help="screens seed folder (default $SYNOPTIC_SCREENS_DIR, else screens/ "
                        "of a source checkout, else ./screens)")  # fmt: skip
    p.add_argument("--screens-bucket", default=d.screens_bucket,
                   help="the screens KV bucket")  # fmt: skip
    p.add_argument("--alarm-tree-bucket", default=d.alarm_tree_bucket,
                   help="the alarm tree's KV bucket (synoptic alarms --bucket)")  # fmt: skip
    p.add_argument("--seed-screens", action=argparse.BooleanOptionalAction,
                   default=d.seed_screens,
                   help="create the screens bucket if missing and seed it from "
                        "--screens (keys that hold nothing only)")  # fmt: skip
    p.add_argument("--anonymous-screens", action="append", default=[],
                   metavar="GLOB",
                   help="screen names a connection without a token may edit "
                        "(repeat; default none)")  # fmt: skip
    p.add_argument("--ui", type=Path, default=d.ui_dir,
                   help="built UI folder (default $SYNOPTIC_UI_DIR, else ui/dist of a "
                        "source checkout, else ./ui/dist)")  # fmt: skip
    p.add_argument("--batch-ms", type=float, default=d.batch_ms,
                   help="window of a group's batch: at most one frame per group per "
                        "window")  # fmt: skip
    p.add_argument("--batch-max", type=int, default=d.batch_max,
                   help="updates that send a group's batch before its window ends")  # fmt: skip
    p.add_argument("--large-value-bytes", type=int, default=d.large_value_bytes,
                   help="values larger than this leave after the small ones "
                        "(snapshots and update windows)")  # fmt: skip
    p.add_argument("--stall-timeout", type=float, default=d.stall_timeout,
                   help="seconds a send may block before the socket is closed (4001)")  # fmt: skip
    p.add_argument("--max-channels", type=int, default=d.max_channels,
                   help="distinct channels per connection")  # fmt: skip
    p.add_argument("--max-subs", type=int, default=d.max_subs,
                   help="subscriptions per connection")  # fmt: skip
    p.add_argument("--max-frame-bytes", type=int, default=d.max_frame_bytes,
                   help="largest client frame")  # fmt: skip
    p.add_argument("--rate", type=float, default=d.rate, help="client frames/s")
    p.add_argument("--burst", type=int, default=d.burst,
                   help="client frames allowed at once above --rate")  # fmt: skip
    p.add_argument("--mailbox-frames", type=int, default=d.mailbox_frames,
                   help="frames queued per socket before it conflates")  # fmt: skip
    p.add_argument("--mailbox-age", type=float, default=d.mailbox_age,
                   help="seconds a queued frame may wait before the socket conflates")  # fmt: skip
    p.add_argument("--ws-send-buffer", type=int, default=d.ws_send_buffer,
                   help="SO_SNDBUF of accepted sockets in bytes (0: kernel autotuning)")  # fmt: skip
    p.add_argument("--want-lease", type=float, default=d.want_lease,
                   help="seconds of the demand leases announced to the adapters")  # fmt: skip
    p.add_argument("--snapshot-barrier", action=argparse.BooleanOptionalAction,
                   default=d.snapshot_barrier,
                   help="acknowledged publish into the store before each last-value "
                        "read (closes the subscription window)")  # fmt: skip
    p.add_argument("--settle-read", action=argparse.BooleanOptionalAction,
                   default=d.settle_read,
                   help="a second last-value read of new subscriptions --settle-ms "
                        "after their snapshot, again 10x and 100x later for those "
                        "still silent (default: when NATS is a cluster)")  # fmt: skip
    p.add_argument("--settle-ms", type=float, default=d.settle * 1000,
                   help="delay of the first settle read")  # fmt: skip
    p.add_argument("--linger", type=float, default=d.linger,
                   help="seconds an unwatched channel keeps its NATS subscriptions")  # fmt: skip
    p.add_argument("--linger-max", type=int, default=d.linger_max,
                   help="most channels lingering at once")  # fmt: skip
    p.add_argument("--oidc-issuer", default=d.oidc_issuer,
                   help="the identity provider's issuer URL: people sign in there, "
                        "tokens are checked against its keys "
                        "(default $SYNOPTIC_OIDC_ISSUER)")  # fmt: skip
    p.add_argument("--oidc-audience", default=d.oidc_audience,
                   help="audience the provider's access tokens must name "
                        "(empty: not checked)")  # fmt: skip
    p.add_argument("--oidc-client-id", default=d.oidc_client_id,
                   help="the web UI's public client at the provider")  # fmt: skip
    p.add_argument("--oidc-scope", default=d.oidc_scope,
                   help="scopes the web UI asks for")  # fmt: skip
    p.add_argument("--oidc-name-claim", default=d.oidc_name_claim,
                   help="claim naming the person in hello frames and audits")  # fmt: skip
    p.add_argument("--jwks-refresh", type=float, default=d.jwks_refresh,
                   help="seconds between reads of the provider's keys")  # fmt: skip
    p.add_argument("--jwks-min-interval", type=float, default=d.jwks_min_interval,
                   help="least seconds between key reads for an unknown key id")  # fmt: skip
    p.add_argument("--roles", type=Path,
                   default=Path(r) if (r := os.environ.get("SYNOPTIC_ROLES")) else None,
                   help="role mapping file: the provider's groups/roles to grants "
                        "(TOML, reloaded when it changes; default $SYNOPTIC_ROLES)")  # fmt: skip
    p.add_argument("--auth-timeout", type=float, default=d.auth_timeout,
                   help="seconds a socket may wait for its token (auth frame) where "
                        "anonymous access is off")  # fmt: skip
    p.add_argument("--jwt-secret", default=os.environ.get("SYNOPTIC_JWT_SECRET"),
                   help="HS256 secret (default $SYNOPTIC_JWT_SECRET)")  # fmt: skip
    p.add_argument("--jwt-public-key", type=Path, default=None,
                   help="PEM file of an RS256/ES256 public key")  # fmt: skip
    p.add_argument("--jwt-audience", default=None, help="required token audience")
    p.add_argument("--jwt-issuer", default=None, help="required token issuer")
    p.add_argument("--allow-anonymous", action=argparse.BooleanOptionalAction,
                   default=None, help="read-only access without a token")  # fmt: skip
    p.add_argument("--allowed-origin", action="append", default=[],
                   help="allowed Origin (glob); repeat; none: any")  # fmt: skip
    p.add_argument("--hist-max-channels", type=int, default=d.hist_max_channels,
                   help="channels per history request")  # fmt: skip
    p.add_argument("--hist-max-points", type=int, default=d.hist_max_points,
                   help="values read per history request")  # fmt: skip
    p.add_argument("--hist-concurrency", type=int, default=d.hist_concurrency,
                   help="history requests read at once")  # fmt: skip
    p.add_argument("--hist-per-socket", type=int, default=d.hist_per_socket,
                   help="history requests in flight per connection")  # fmt: skip
    p.add_argument("--hist-timeout", type=float, default=d.hist_timeout,
                   help="seconds to wait for a history slot, and per backend read")  # fmt: skip
    p.add_argument("--no-hist-blocks", dest="hist_blocks", action="store_false",
                   help="read every history value raw, not the rollup's blocks")  # fmt: skip
    p.add_argument("--history-process", dest="hist_process",
                   action=argparse.BooleanOptionalAction, default=d.hist_process,
                   help="answer history in a child process (the default); "
                        "--no-history-process: on a thread of the gateway (ADR 0039)")  # fmt: skip
    p.add_argument("--history-nice", dest="hist_nice", type=int, default=d.hist_nice,
                   help="how much lower the history process's CPU priority is "
                        "(nice; the live loop's frames first)")  # fmt: skip
    p.add_argument("--history-idle", dest="hist_idle",
                   action=argparse.BooleanOptionalAction, default=d.hist_idle,
                   help="run the history process in the idle scheduling class "
                        "(SCHED_IDLE: the live path's processes take its CPU at once; "
                        "the default); --no-history-idle: its nice level only")  # fmt: skip
    p.add_argument("--history-cpu", dest="hist_cpu", type=float, default=d.hist_cpu,
                   help="share of one core the history process's work keeps to "
                        "on average (0: no budget)")  # fmt: skip
    p.add_argument("--play-fps-total", type=float, default=d.play_fps_total,
                   help="playback frames per second of all sockets together at most, "
                        "shared equally (0: no limit)")  # fmt: skip
    p.add_argument("--archive-dsn", default=d.hist_archive_dsn,
                   help="HDB++ PostgreSQL connection string "
                        "(default $SYNOPTIC_ARCHIVE_DSN; empty: bus history only)")  # fmt: skip
    p.add_argument("--ws-per-message-deflate", action="store_true",
                   help="enable WebSocket compression (~10x CPU per frame)")  # fmt: skip
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The :class:`Settings` of the command line."""
    key = args.jwt_public_key.read_text() if args.jwt_public_key else None
    return Settings(
        nats_url=args.nats or os.environ.get("SYNOPTIC_NATS_URL", "nats://127.0.0.1:4222"),
        prefix=args.prefix, host=args.host, port=args.port, gateway_id=args.id,
        batch_ms=args.batch_ms, batch_max=args.batch_max,
        large_value_bytes=args.large_value_bytes,
        stall_timeout=args.stall_timeout,
        max_channels=args.max_channels, max_frame_bytes=args.max_frame_bytes,
        max_subs=args.max_subs,
        rate=args.rate, burst=args.burst, mailbox_frames=args.mailbox_frames,
        mailbox_age=args.mailbox_age, ws_send_buffer=args.ws_send_buffer,
        want_lease=args.want_lease, snapshot_barrier=args.snapshot_barrier,
        settle_read=args.settle_read, settle=args.settle_ms / 1000.0,
        linger=args.linger, linger_max=args.linger_max,
        jwt_secret=args.jwt_secret, jwt_public_key=key,
        jwt_audience=args.jwt_audience, jwt_issuer=args.jwt_issuer,
        oidc_issuer=args.oidc_issuer or None, oidc_audience=args.oidc_audience,
        oidc_client_id=args.oidc_client_id, oidc_scope=args.oidc_scope,
        oidc_name_claim=args.oidc_name_claim, jwks_refresh=args.jwks_refresh,
        jwks_min_interval=args.jwks_min_interval, roles_file=args.roles,
        auth_timeout=args.auth_timeout,
        allow_anonymous=args.allow_anonymous,
        allowed_origins=tuple(args.allowed_origin),
        ws_per_message_deflate=args.ws_per_message_deflate,
        screens_dir=args.screens, ui_dir=args.ui,
        screens_bucket=args.screens_bucket, alarm_tree_bucket=args.alarm_tree_bucket, seed_screens=args.seed_screens,
        anonymous_screens=tuple(args.anonymous_screens),
        hist_max_channels=args.hist_max_channels,
        hist_max_points=args.hist_max_points,
        hist_concurrency=args.hist_concurrency, hist_timeout=args.hist_timeout,
        hist_per_socket=args.hist_per_socket,
        hist_archive_dsn=args.archive_dsn, hist_blocks=args.hist_blocks,
        hist_process=args.hist_process,
        hist_nice=args.hist_nice, hist_idle=args.hist_idle, hist_cpu=args.hist_cpu,
        play_fps_total=args.play_fps_total,
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Entry of ``synoptic gateway``: uvloop, then :func:`~synoptic_gateway.server.serve`."""
    import uvloop

    from synoptic_gateway.server import serve

    return uvloop.run(serve(settings_from_args(args)))
