"""Gateway settings: one frozen object built by the caller (CLI, tests, bench) and
passed to :func:`synoptic_gateway.app.create_app`; nothing is read at import time."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: The repository root when running from a checkout (screens/ and ui/dist live there).
REPO_ROOT = Path(__file__).resolve().parents[2]


def source_checkout(root: Path = REPO_ROOT) -> Path | None:
    """``root`` if it is a Synoptic source checkout (an editable install, ``make
    demo``), else None (an installed package: ``root`` is inside site-packages)."""
    if (root / "gateway" / "pyproject.toml").is_file() and (root / "screens").is_dir():
        return root
    return None


def default_screens_dir() -> Path:
    """``$SYNOPTIC_SCREENS_DIR``; else ``screens/`` of the source checkout; else
    ``screens`` in the working directory (``/app/screens`` in the image)."""
    if env := os.environ.get("SYNOPTIC_SCREENS_DIR"):
        return Path(env)
    checkout = source_checkout()
    return checkout / "screens" if checkout else Path("screens")


def default_ui_dir() -> Path:
    """``$SYNOPTIC_UI_DIR``; else ``ui/dist`` of the source checkout; else
    ``ui/dist`` in the working directory (``/app/ui/dist`` in the image)."""
    if env := os.environ.get("SYNOPTIC_UI_DIR"):
        return Path(env)
    checkout = source_checkout()
    return checkout / "ui" / "dist" if checkout else Path("ui") / "dist"


@dataclass(frozen=True)
class Settings:
    """Everything a gateway instance is configured with. Defaults are the demo's."""

    # NATS URL(s) ($SYNOPTIC_NATS_URL)
    nats_url: str = field(
        default_factory=lambda: os.environ.get(
            "SYNOPTIC_NATS_URL", "nats://127.0.0.1:4222"
        )
    )
    prefix: str = "cs"  # subject prefix
    host: str = "127.0.0.1"  # listen address
    port: int = 8000  # listen port
    gateway_id: str = ""  # this instance's id; empty: "gw-<random>" per process

    # --- WebSocket transport
    ws_per_message_deflate: bool = False  # compression: ~10x CPU per frame when on
    # SO_SNDBUF of accepted sockets (Linux doubles it); 0 keeps the kernel's
    # autotuning, which lets a slow socket's buffer grow to ~4 MiB of stale data
    ws_send_buffer: int = 256 * 1024
    # --- Fan-out
    batch_ms: float = 10.0  # at most one frame per group per window (ms) ...
    # ... unless its batch holds this many updates: a burst (an IOC scan of
    # thousands of records) starts leaving while the rest is still being read
    batch_max: int = 500
    # values larger than this (bytes of the bus payload: arrays) leave after the
    # small ones: a snapshot holds them back (``snap.more``) and sends each in an
    # ``upd`` right after it; an update window sends its small values first
    large_value_bytes: int = 32 * 1024
    mailbox_frames: int = 256  # frames queued per socket before it conflates
    mailbox_bytes: int = 4 * 1024 * 1024  # bytes queued per socket before it conflates
    mailbox_age: float = 2.0  # seconds the oldest queued frame may wait: then conflate
    stall_timeout: float = 10.0  # seconds a send may block before close 4001
    snapshot_timeout: float = 5.0  # seconds a last-value store read may take
    # an acknowledged publish into the last-value stream before each store read
    # (closes the subscription/last-value window; off: a plain round trip)
    snapshot_barrier: bool = True
    # a second store read of new subscriptions ``settle`` s after their snapshot
    # (again 10x and 100x later for channels still silent), newer values sent as
    # updates: closes the window a NATS cluster leaves (a value published on another
    # node just before it learns of the subscription; ADR 0009). None: when the
    # server's INFO says it is part of a cluster
    settle_read: bool | None = None
    settle: float = 0.025  # seconds to the first settle read; a route round trip
    # channels nobody watches any more keep their NATS subscriptions this long (a
    # re-opened screen, e.g. a page reload, finds them current: no store read, no
    # unsubscribe/subscribe), at most linger_max channels (the oldest go first)
    # ($SYNOPTIC_GATEWAY_LINGER: e.g. 0 for a browser bench of cold opens)
    linger: float = field(
        default_factory=lambda: float(os.environ.get("SYNOPTIC_GATEWAY_LINGER", "5"))
    )
    linger_max: int = 20000  # most channels lingering at once (the oldest go first)
    # --- Limits (announced in hello)
    max_channels: int = 5000  # distinct channels per connection
    # subscriptions (groups) per connection: one per channel set and reduced arrays
    # (``sub.pts``), so a client asking other point counts on every frame is bounded
    max_subs: int = 100
    max_frame_bytes: int = 512 * 1024  # largest client frame (a sub of 5000 URIs fits)
    rate: float = 50.0  # client frames per second (token bucket)
    burst: int = 100  # client frames allowed at once above the rate
    # --- Demand
    want_lease: float = 30.0  # seconds; renewed every lease/3 while watched
    # --- Adapter liveness
    # a channel whose value came from an adapter epoch that sent
    # no heartbeat for liveness_misses periods has no live source (src frames)
    liveness_misses: float = 3.0
    heartbeat_period: float = 1.0  # assumed for an epoch not heard of yet
    liveness_check: float = 0.5  # seconds between checks
    # --- Writes
    put_timeout: float = 5.0  # seconds an adapter has to complete a write
    # --- History (``hist`` requests; docs/protocol.md)
    hist_max_channels: int = 100  # channels per request
    hist_max_range: float = 400 * 86400.0  # seconds from t0 to t1
    hist_max_px: int = 4000  # plot width
    hist_max_points: int = 2_000_000  # values read per request (~34 MB of columns)
    hist_max_answer_points: int = 400_000  # points per answer (~7 MB)
    hist_per_socket: int = 2  # requests in flight per connection
    hist_concurrency: int = 4  # requests read at once per gateway (others wait)
    hist_timeout: float = 15.0  # seconds to wait for a slot, and per backend read
    at_max_channels: int = 2000  # channels per ``at`` or ``play`` (a screen)
    play_fps: float = 30.0  # ``pb`` frames per second of a playback at most
    # ``pb`` frames per second of all the gateway's playbacks together at most:
    # each gets an equal share (up to ``play_fps``), as the live loop sends them
    # all beside the live viewers' frames (0: no limit)
    play_fps_total: float = 240.0
    hist_blocks: bool = True  # read the rollup's blocks (CS_ROLL) where it has them
    # the history service in a child process (its Python off the live loop's
    # interpreter; ADR 0039) instead of on a thread of the gateway
    hist_process: bool = True
    hist_queue: int = 64  # requests waiting or running in the history process
    # how much less CPU priority the history process takes (nice): where the CPUs
    # are short, the live loop's frames go before rewinds, playbacks and trends
    hist_nice: int = 10
    # the history process in the idle scheduling class (SCHED_IDLE, Linux): a live
    # path's process that wakes takes its CPU at once, where a nice level only
    # lowers its share (it may finish its time slice first; ADR 0040)
    hist_idle: bool = True
    # the share of one core the history process's work keeps to on average (its
    # reads on the bus with it): rewinders and trends slow down before live viewers
    # do (0: no budget; ADR 0037)
    hist_cpu: float = 0.5
    # HDB++ archive on PostgreSQL for ranges older than the bus keeps (a libpq
    # connection string; empty: bus history only)
    hist_archive_dsn: str = field(
        default_factory=lambda: os.environ.get("SYNOPTIC_ARCHIVE_DSN", "")
    )
    # --- Auth
    # Sign-in with the facility's OpenID Connect provider: its issuer URL (the
    # discovery document and the keys are read from it)
    oidc_issuer: str | None = field(
        default_factory=lambda: os.environ.get("SYNOPTIC_OIDC_ISSUER") or None
    )
    oidc_audience: str = "synoptic"  # the audience its tokens must name (empty: any)
    oidc_client_id: str = "synoptic-ui"  # the browser's public client
    oidc_scope: str = "openid profile"  # the scopes the browser asks for
    oidc_name_claim: str = "preferred_username"  # the name in hello and audits
    jwks_refresh: float = 300.0  # seconds between reads of the provider's keys
    jwks_min_interval: float = 5.0  # least seconds between reads for an unknown kid
    # seconds a socket without a token (browsers send theirs in an ``auth`` frame)
    # may wait before it is closed where anonymous access is off
    auth_timeout: float = 10.0
    # the role mapping: groups/roles of the provider → grants (TOML; reloaded when
    # it changes). None: tokens' own grant claims only
    roles_file: Path | None = None
    # static JWT keys (hand-made tokens): the HS256 secret
    jwt_secret: str | None = None
    jwt_public_key: str | None = None  # PEM public key of RS256/ES256 tokens
    jwt_audience: str | None = None  # required token audience
    jwt_issuer: str | None = None  # required token issuer
    allow_anonymous: bool | None = None  # None: only when no JWT key or provider
    anonymous_read: tuple[str, ...] = ("*",)  # channels (globs) read without a token
    # screen names (globs) a connection without a token may edit (the demo: "*")
    anonymous_screens: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()  # empty: any Origin
    # --- Screens
    screens_bucket: str = "screens"  # the KV bucket of screens
    # the alarm tree's KV bucket (alarms: /api/alarms, the alarms frames)
    alarm_tree_bucket: str = "alarmtree"
    # the folder (screens_dir) seeds keys that hold nothing at start, creating the
    # bucket if missing
    seed_screens: bool = True
    # --- HTTP
    screens_dir: Path = field(default_factory=default_screens_dir)  # seed folder
    ui_dir: Path = field(default_factory=default_ui_dir)  # the built UI, served at /

    @property
    def auth_enabled(self) -> bool:
        """Whether a JWT key or an identity provider is configured."""
        return bool(self.jwt_secret or self.jwt_public_key or self.oidc_issuer)

    @property
    def anonymous_allowed(self) -> bool:
        """Whether a connection without a token is accepted (read-only)."""
        if self.allow_anonymous is None:
            return not self.auth_enabled
        return self.allow_anonymous

    @property
    def ws_max_size(self) -> int:
        """uvicorn's hard frame limit: above ours, so ours answers with an error."""
        return max(4 * self.max_frame_bytes, 1024 * 1024)

    def limits(self) -> dict[str, float | int]:
        """The limits announced in ``hello``."""
        return {
            "channels": self.max_channels,
            "subs": self.max_subs,
            "frame_bytes": self.max_frame_bytes,
            "rate": self.rate,
            "burst": self.burst,
            "hist_channels": self.hist_max_channels,
            "hist_range_s": self.hist_max_range,
            "hist_px": self.hist_max_px,
            "hist_in_flight": self.hist_per_socket,
            "at_channels": self.at_max_channels,
            "play_fps": self.play_fps,
        }
