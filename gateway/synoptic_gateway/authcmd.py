"""``synoptic auth …``: sign in from a terminal and see what a token may do.

- ``synoptic auth explain TOKEN`` (or ``--user NAME`` with the demo provider):
  checks the token against the provider's keys as a gateway does, then prints
  what it may read, write, command, edit and acknowledge, and which rule of the
  role file gave each grant.
- ``synoptic auth login`` / ``logout``: the device-code sign-in for a person at a
  terminal (tokens kept in ``~/.cache/synoptic/tokens.json``).
- ``synoptic auth token``: print an access token (client credentials with
  ``--client-secret``/``$SYNOPTIC_CLIENT_SECRET``, else the kept sign-in), for
  scripts: ``Authorization: Bearer $(synoptic auth token)``.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from synoptic_gateway.settings import Settings

#: The demo's clients (synoptic_identity.realm): the CLI's device sign-in, and
#: the password grant ``--user`` uses with the demo provider.
DEVICE_CLIENT = "synoptic-cli"
PASSWORD_CLIENT = "synoptic-tests"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``synoptic auth`` to the ``synoptic`` command."""
    d = Settings(nats_url="")
    provider = argparse.ArgumentParser(add_help=False)
    provider.add_argument("--issuer", default=d.oidc_issuer,
                          help="the identity provider's issuer URL "
                               "(default $SYNOPTIC_OIDC_ISSUER)")  # fmt: skip
    auth = sub.add_parser("auth", help="sign in; what a token may do")
    cmds = auth.add_subparsers(dest="auth_command", required=True)

    p = cmds.add_parser("explain", parents=[provider],
                        help="what a token (or a demo user) may do, and which rule "
                             "gave it")  # fmt: skip
    p.add_argument("token", nargs="?", help="an access token ('-': read stdin)")
    p.add_argument("--user", help="sign in as this user first (password grant)")
    p.add_argument("--password", help="the user's password (default: asked)")
    p.add_argument("--client-id", default=PASSWORD_CLIENT,
                   help="client of the password grant")  # fmt: skip
    p.add_argument("--roles", type=Path,
                   default=Path(r) if (r := os.environ.get("SYNOPTIC_ROLES")) else None,
                   help="role file (default $SYNOPTIC_ROLES)")  # fmt: skip
    p.add_argument("--audience", default=d.oidc_audience,
                   help="the audience a token must name, as the gateway's "
                        "--oidc-audience (empty: any)")  # fmt: skip
    p.add_argument("--name-claim", default=d.oidc_name_claim,
                   help="the claim naming the user, as the gateway's "
                        "--oidc-name-claim")  # fmt: skip
    p.set_defaults(func=lambda args: asyncio.run(explain(args)))

    p = cmds.add_parser("login", parents=[provider],
                        help="sign in at the provider from this terminal "
                             "(device code)")  # fmt: skip
    p.add_argument("--client-id", default=DEVICE_CLIENT,
                   help="the provider's client for terminals (device code)")  # fmt: skip
    p.set_defaults(func=lambda args: asyncio.run(login(args)))

    p = cmds.add_parser("logout", parents=[provider], help="forget the kept sign-in")
    p.add_argument("--client-id", default=DEVICE_CLIENT,
                   help="the provider's client for terminals (device code)")  # fmt: skip
    p.set_defaults(func=logout)

    p = cmds.add_parser("token", parents=[provider],
                        help="print an access token (client credentials or the "
                             "kept sign-in)")  # fmt: skip
    p.add_argument("--client-id", default=os.environ.get("SYNOPTIC_CLIENT_ID"),
                   help="a service's client (default $SYNOPTIC_CLIENT_ID)")  # fmt: skip
    p.set_defaults(func=lambda args: asyncio.run(token(args)))


def _issuer(args: argparse.Namespace) -> str:
    if not args.issuer:
        raise SystemExit("synoptic auth: give --issuer (or $SYNOPTIC_OIDC_ISSUER)")
    return str(args.issuer)


def source(args: argparse.Namespace):  # -> TokenSource
    """Where the CLI's tokens come from: a service's client credentials when a
    secret is set ($SYNOPTIC_CLIENT_SECRET), else the kept device sign-in."""
    from synoptic_gateway.tokens import ClientCredentials, DeviceCode

    issuer = _issuer(args)
    secret = os.environ.get("SYNOPTIC_CLIENT_SECRET")
    client = getattr(args, "client_id", None)
    if secret and client:
        return ClientCredentials(issuer, client, secret=secret)
    return DeviceCode(issuer, client or DEVICE_CLIENT,
                      prompt=lambda url, code: print(
                          f"Sign in: open {url}\n  and enter the code {code}",
                          file=sys.stderr, flush=True))  # fmt: skip


async def token(args: argparse.Namespace) -> int:
    from synoptic_gateway.tokens import SignInError

    try:
        print(await source(args).token())
    except SignInError as exc:
        print(f"synoptic auth token: {exc}", file=sys.stderr)
        return 1
    return 0


async def login(args: argparse.Namespace) -> int:
    from synoptic_gateway.tokens import SignInError

    args.client_id = args.client_id or DEVICE_CLIENT
    try:
        await source(args).token()
    except SignInError as exc:
        print(f"synoptic auth login: {exc}", file=sys.stderr)
        return 1
    print("signed in", file=sys.stderr)
    return 0


def logout(args: argparse.Namespace) -> int:
    from synoptic_gateway.tokens import DeviceCode

    DeviceCode(_issuer(args), args.client_id).forget()
    print("signed out", file=sys.stderr)
    return 0


async def explain(args: argparse.Namespace) -> int:
    """Print what a token may do and why; 1 if the token is refused."""
    from synoptic_gateway.auth import Authenticator, AuthError
    from synoptic_gateway.tokens import Password, SignInError

    issuer = _issuer(args)
    raw = args.token
    try:
        if args.user:
            password = args.password
            if password is None:
                password = getpass.getpass(f"password of {args.user}: ")
            raw = await Password(issuer, args.client_id, user=args.user,
                                 password=password).token()  # fmt: skip
        elif raw == "-":
            raw = sys.stdin.read().strip()
        elif not raw:
            print("synoptic auth explain: give a TOKEN or --user", file=sys.stderr)
            return 2
    except SignInError as exc:
        print(f"synoptic auth explain: {exc}", file=sys.stderr)
        return 1
    settings = Settings(nats_url="", oidc_issuer=issuer, roles_file=args.roles,
                        oidc_audience=args.audience,
                        oidc_name_claim=args.name_claim)  # fmt: skip
    auth = Authenticator(settings)
    await auth.start()
    try:
        who = await auth.principal(raw)
    except AuthError as exc:
        print(f"refused: {exc}")
        return 1
    finally:
        await auth.close()
    print(describe(who, roles=args.roles))
    return 0


def describe(who, roles: Path | None) -> str:  # who: Principal
    """The text ``explain`` prints."""
    lines = [f"{who.name}" + (f" ({who.display})" if who.display else "")]
    if who.expires is not None:
        until = datetime.fromtimestamp(who.expires, UTC).isoformat(timespec="seconds")
        lines[0] += f", token valid until {until}"
    if who.identity is not None:
        ident = who.identity
        lines.append(f"groups: {', '.join(ident.groups) or '-'}; "
                     f"roles: {', '.join(ident.roles) or '-'}; "
                     f"client: {', '.join(ident.clients) or '-'}")  # fmt: skip
    if roles is None:
        lines.append("no role file: the token's own grant claims only")
    kinds = [("read", who.read), ("write", who.write), ("command", who.command),
             ("screens", who.screens), ("ack", who.ack)]  # fmt: skip
    reasons = {(b.kind, b.pattern): f'rule "{b.rule}" ({b.matched})'
               for b in who.because}  # fmt: skip
    for kind, patterns in kinds:
        if not patterns:
            lines.append(f"{kind:<8} (nothing)")
        for pattern in patterns:
            why = reasons.get((kind, pattern), "the token's own claim")
            lines.append(f"{kind:<8} {pattern:<36} {why}")
    return "\n".join(lines)
