"""``synoptic screens …``: screens in the bus's key-value bucket, for people who keep
them in git (list, get, put, export, import, history, revert, delete)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from synoptic_bus.connect import NatsClient, connect
from synoptic_bus.screens import (
    ConflictError,
    ScreenBucket,
    ScreenNotFoundError,
    ScreensConfig,
    StoreUnavailableError,
)
from synoptic_bus.sitestore import counts, store_site, unchanged_set
from synoptic_bus.viagateway import add_option as add_gateway_option
from synoptic_bus.viagateway import function as gateway_function
from synoptic_importer import (
    MAX_SOURCE_BYTES,
    SUFFIXES,
    folder_resolver,
    import_screen,
    parse_macro_args,
    screen_name,
)
from synoptic_importer.archive import (
    MAX_MEMBERS,
    MAX_TOTAL_BYTES,
    ArchiveError,
    SetFiles,
    keeps,
    read_zip,
)
from synoptic_importer.site import import_site, plan_set
from synoptic_schemas.errors import ContractError
from synoptic_schemas.screens import (
    DEFAULT_BUCKET,
    check_name,
    parse_json,
)

#: Exit codes: 1 not found / conflict / invalid input, 2 usage, 3 store unavailable
EXIT_FAILED, EXIT_UNAVAILABLE = 1, 3


def default_seed_dir() -> Path:
    """``$SYNOPTIC_SCREENS_DIR``, else ``screens`` in the working directory."""
    return Path(os.environ.get("SYNOPTIC_SCREENS_DIR", "screens"))


def default_user() -> str:
    """Who the CLI writes as: ``$SYNOPTIC_USER``, else the login name."""
    try:
        return os.environ.get("SYNOPTIC_USER") or getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``synoptic screens`` to the ``synoptic`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--nats", help="NATS URL (default $SYNOPTIC_NATS_URL)")
    common.add_argument("--bucket", default=DEFAULT_BUCKET, help="KV bucket")
    writer = argparse.ArgumentParser(add_help=False)
    writer.add_argument("--by", default=None, help="author (default $SYNOPTIC_USER)")
    writer.add_argument("--summary", "-m", default="", help="what changed")

    screens = sub.add_parser("screens", help="screens in the bus's KV bucket")
    cmds = screens.add_subparsers(dest="screens_command", required=True)

    p = cmds.add_parser("list", parents=[common], help="every screen")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=_run(cmd_list))

    p = cmds.add_parser("get", parents=[common], help="print a screen's JSON")
    p.add_argument("name", help="screen name")
    p.add_argument("--revision", "-r", type=int, default=None,
                   help="that revision (default the current one)")  # fmt: skip
    p.set_defaults(func=_run(cmd_get))

    p = cmds.add_parser("put", parents=[common, writer], help="write a screen")
    p.add_argument("name", help="screen name")
    p.add_argument("file", help="JSON file, or - for standard input")
    p.add_argument("--base", type=int, default=None,
                   help="revision this edit is based on (0: create only; default: "
                        "the current one, i.e. overwrite)")  # fmt: skip
    add_gateway_option(p)
    p.set_defaults(func=_run(cmd_put))

    p = cmds.add_parser("export", parents=[common], help="write screens as files")
    p.add_argument("names", nargs="*", help="default: every screen")
    p.add_argument("--dir", type=Path, default=Path("."), help="target folder")
    p.set_defaults(func=_run(cmd_export))

    p = cmds.add_parser(
        "import", parents=[common, writer],
        help="write screen files: <name>.json, convert .bob/.opi/.wj, or a whole "
             "display set (a folder or a .zip) as linked screens",
    )  # fmt: skip
    p.add_argument("files", nargs="+", type=Path,
                   help="<name>.json screens, Phoebus .bob, CS-Studio .opi, Taranta .wj; "
                        "a folder (read recursively) or a .zip: one linked set")  # fmt: skip
    p.add_argument("--set", dest="set_name", default=None,
                   help="a folder's or zip's set name (default: its name)")  # fmt: skip
    p.add_argument("--home", default=None,
                   help="the set's home display, a path in it (default: found)")  # fmt: skip
    p.add_argument("--overwrite", action="store_true",
                   help="replace screens edited in the browser since their import")  # fmt: skip
    p.add_argument("--dry-run", action="store_true",
                   help="convert and report, write nothing")  # fmt: skip
    p.add_argument("--macro", action="append", default=[], metavar="NAME=VALUE",
                   help="macro for .bob/.opi/.wj (repeat; over the file's own)")  # fmt: skip
    p.add_argument("--tango-host", default=None,
                   help="Tango host:port of .wj attributes (default $TANGO_HOST)")  # fmt: skip
    p.add_argument("--report", choices=["text", "json"], default="text",
                   help="coverage report of converted files")  # fmt: skip
    p.set_defaults(func=_run(cmd_import))

    p = cmds.add_parser("history", parents=[common], help="a screen's revisions")
    p.add_argument("name", help="screen name")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=_run(cmd_history))

    p = cmds.add_parser("revert", parents=[common, writer], help="restore a revision")
    p.add_argument("name", help="screen name")
    p.add_argument("revision", type=int, help="the revision to restore")
    p.add_argument("--base", type=int, default=None, help="default: the current one")
    p.set_defaults(func=_run(cmd_revert))

    p = cmds.add_parser(
        "delete", parents=[common, writer], help="delete (history kept)"
    )
    p.add_argument("name", help="screen name")
    p.add_argument("--base", type=int, default=None, help="default: the current one")
    add_gateway_option(p)
    p.set_defaults(func=_run(cmd_delete))


Command = Callable[[ScreenBucket, argparse.Namespace], Awaitable[int]]


def _run(command: Command) -> Callable[[argparse.Namespace], Awaitable[int]]:
    """Connect, open the bucket, run ``command``; known failures become one line
    on stderr and an exit code."""

    async def run(args: argparse.Namespace) -> int:
        if getattr(args, "gateway", None):
            return await via_gateway(args)
        try:
            nc: NatsClient = await connect(
                args.nats, name="synoptic-screens", retry_on_failed_connect=False
            )
        except Exception as exc:  # NoServersError, OSError, TimeoutError
            print(f"screens: NATS not reachable: {exc}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        try:
            bucket = await ScreenBucket.open(nc, ScreensConfig(args.bucket))
            return await command(bucket, args)
        except StoreUnavailableError as exc:
            print(f"screens: {exc}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        except (ScreenNotFoundError, ConflictError, ContractError) as exc:
            print(f"screens: {exc}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            await nc.close()

    return run


async def via_gateway(args: argparse.Namespace) -> int:
    """``screens put|delete --gateway URL``: through the gateway's screen API,
    signed in (the gateway names the author: the signed-in user)."""
    call = gateway_function("screen")
    try:
        base = args.base
        if base is None:  # the current revision: overwrite
            status, answer = await call(args.gateway, "GET", args.name, None)
            base = answer.get("revision", 0) if status == 200 else 0
        if args.screens_command == "put":
            data = (
                sys.stdin.buffer.read()
                if args.file == "-"
                else await asyncio.to_thread(Path(args.file).read_bytes)
            )
            body = {"screen": parse_json(data), "base_revision": base,
                    "summary": args.summary}  # fmt: skip
            status, answer = await call(args.gateway, "PUT", args.name, body)
        else:
            status, answer = await call(args.gateway, "DELETE", args.name,
                                        None, base_revision=base)  # fmt: skip
    except ConnectionError as exc:
        print(f"screens: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except ContractError as exc:
        print(f"screens: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if status != 200:
        reason = answer.get("reason") or answer.get("msg") or answer
        print(f"screens: {args.name}: {answer.get('error', status)}: {reason}",
              file=sys.stderr)  # fmt: skip
        return EXIT_UNAVAILABLE if status == 503 else EXIT_FAILED
    verb = "saved" if args.screens_command == "put" else "deleted"
    print(f"{verb} {args.name} revision {answer.get('revision')}")
    return 0


async def cmd_list(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    entries = [e for e in await bucket.entries() if not e.deleted]
    if args.json:
        print(json.dumps([{**e.summary(), "title": (e.screen or {}).get("title", "")}
                          for e in entries]))  # fmt: skip
        return 0
    for e in entries:
        title = (e.screen or {}).get("title", "")
        print(f"{e.name:<32} r{e.revision:<6} {e.rev.at:<24} {e.rev.by:<16} {title}")
    return 0


def _pretty(screen: dict[str, Any]) -> str:
    return json.dumps(screen, ensure_ascii=False, indent=1) + "\n"


async def cmd_get(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    entry = await bucket.get(args.name, args.revision)
    assert entry.screen is not None
    sys.stdout.write(_pretty(entry.screen))
    return 0


async def _base(bucket: ScreenBucket, name: str, base: int | None) -> int:
    if base is not None:
        return base
    current = await bucket.latest(name)
    return 0 if current is None else current.revision


def _said(verb: str, entry: Any) -> int:
    print(f"{verb} {entry.name} revision {entry.revision}")
    return 0


async def cmd_put(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    data = (
        sys.stdin.buffer.read()
        if args.file == "-"
        else await asyncio.to_thread(Path(args.file).read_bytes)
    )
    screen = parse_json(data, bucket.limit)
    base = await _base(bucket, args.name, args.base)
    by = args.by or default_user()
    entry = await bucket.put(args.name, screen, base, by, args.summary)
    return _said("saved", entry)


async def cmd_export(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    names = [check_name(n) for n in args.names]
    entries = (
        [await bucket.get(n) for n in names]
        if names
        else [e for e in await bucket.entries() if not e.deleted]
    )
    folder: Path = args.dir
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    for entry in entries:
        assert entry.screen is not None
        path = folder / f"{entry.name}.json"
        await asyncio.to_thread(path.write_text, _pretty(entry.screen), "utf-8")
        print(f"exported {entry.name} revision {entry.revision} to {path}")
    return 0


async def _load(path: Path, args: argparse.Namespace, limit: int) -> tuple[str, Any]:
    """A file's screen name and screen: JSON as it is, other formats converted
    (their coverage report printed)."""
    converted = path.suffix.lower() in SUFFIXES
    size = (await asyncio.to_thread(path.stat)).st_size
    most = MAX_SOURCE_BYTES if converted else limit
    if size > most:  # refused before it is read
        raise ValueError(f"{size} bytes exceed the limit of {most}")
    data = await asyncio.to_thread(path.read_bytes)
    if not converted:
        return path.name.removesuffix(".json"), parse_json(data, limit)
    imported = await asyncio.to_thread(
        import_screen, data, path.name, macros=parse_macro_args(args.macro),
        tango_host=args.tango_host, resolve=folder_resolver(path.parent),
        siblings=frozenset(screen_name(f.name) for f in args.files
                           if f.suffix.lower() in SUFFIXES),
    )  # fmt: skip
    report = imported.report
    print(json.dumps(report.as_dict()) if args.report == "json" else report.text())
    return imported.name, imported.screen


def read_folder(folder: Path) -> SetFiles:
    """A folder's set: the files an import reads, found recursively (hidden
    ones left out), each at most the import limit, at most
    :data:`MAX_MEMBERS` files and :data:`MAX_TOTAL_BYTES` in all."""
    out = SetFiles(folder.resolve().name)
    total = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")) or not path.is_file():
            continue
        if not keeps(rel):
            out.ignored.append(rel)
            continue
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            out.ignored.append(rel)
            continue
        total += size
        if len(out.files) >= MAX_MEMBERS or total > MAX_TOTAL_BYTES:
            raise ArchiveError(f"{folder}: more than {MAX_MEMBERS} files or "
                               f"{MAX_TOTAL_BYTES} bytes")  # fmt: skip
        out.files[rel] = path.read_bytes()
    return out


def _read_set(path: Path) -> SetFiles:
    if path.is_dir():
        return read_folder(path)
    size = path.stat().st_size
    if size > MAX_TOTAL_BYTES:
        raise ArchiveError(f"{size} bytes exceed the limit of {MAX_TOTAL_BYTES}")
    return read_zip(path.read_bytes(), path.stem)


async def _import_set(
    bucket: ScreenBucket, path: Path, args: argparse.Namespace
) -> int:
    """A folder or zip imported as one linked site: its report, then what was
    written. Exit 1 when a file was refused or a write failed."""
    found = await asyncio.to_thread(_read_set, path)
    options: dict[str, Any] = {"macros": parse_macro_args(args.macro),
                               "tango_host": args.tango_host, "home": args.home}  # fmt: skip
    plan = await asyncio.to_thread(
        plan_set, found.files, args.set_name or found.name, **options
    )
    same = await unchanged_set(bucket, plan)
    if same is not None:  # every screen as converting it again would make it
        if args.report == "json":
            print(json.dumps({"report": None, "counts": counts(same),
                              "dry_run": args.dry_run, "converted": False,
                              "screens": [o.as_dict() for o in same]}))  # fmt: skip
        else:
            print(f"set {plan.set}: {len(same)} screens unchanged since their import "
                  "(the same files, options and importer): nothing converted or "
                  "written")  # fmt: skip
        return 0
    site = await asyncio.to_thread(
        import_site, found.files, args.set_name or found.name, **options
    )
    report = site.report()
    by = args.by or default_user()
    outcomes = await store_site(bucket, site, by, overwrite=args.overwrite,
                                dry_run=args.dry_run, summary=args.summary)  # fmt: skip
    done = counts(outcomes)
    if args.report == "json":
        print(json.dumps({"report": report.as_dict(), "counts": done,
                          "dry_run": args.dry_run, "converted": True,
                          "screens": [o.as_dict() for o in outcomes]}))  # fmt: skip
    else:
        print(report.text())
        for o in outcomes:
            if o.action != "unchanged":
                rev = f" revision {o.revision}" if o.revision else ""
                why = f": {o.reason}" if o.reason else ""
                verb = f"would be {o.action}" if args.dry_run else o.action
                print(f"{verb} {o.name}{rev}{why}")
        total = ", ".join(f"{n} {a}" for a, n in sorted(done.items()))
        print(f"set {site.set}: {len(outcomes)} screens ({total})"
              + (" — dry run, nothing written" if args.dry_run else ""))  # fmt: skip
    return EXIT_FAILED if site.refused or done.get("failed") else 0


async def cmd_import(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    """Each file becomes the screen named by its file name: created when absent,
    a new revision when its content differs, left alone when equal. A folder or
    a zip is a set: its displays become linked screens (:func:`_import_set`)."""
    by = args.by or default_user()
    failed = 0
    seen: dict[str, Path] = {}
    for path in args.files:
        if path.is_dir() or path.suffix.lower() == ".zip":
            try:
                failed += await _import_set(bucket, path, args)
            except (ArchiveError, OSError, ValueError) as exc:
                failed += 1
                print(f"screens: {path}: {exc}", file=sys.stderr)
            continue
        try:
            name, screen = await _load(path, args, bucket.limit)
            check_name(name)
            if name in seen:
                raise ValueError(f"screen name {name!r} is also {seen[name]}'s")
            seen[name] = path
            current = await bucket.latest(name)
            if current is not None and not current.deleted and current.screen == screen:
                print(f"unchanged {name} revision {current.revision}")
                continue
            base = 0 if current is None else current.revision
            summary = args.summary or f"imported from {path.name}"
            _said("imported", await bucket.put(name, screen, base, by, summary))
        except (ContractError, ConflictError, OSError, ValueError) as exc:
            failed += 1
            print(f"screens: {path}: {exc}", file=sys.stderr)
    return EXIT_FAILED if failed else 0


async def cmd_history(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    entries = await bucket.history(args.name)
    if not entries:
        raise ScreenNotFoundError(f"no screen {args.name!r}")
    if args.json:
        print(json.dumps([{"revision": e.revision, "op": "delete" if e.deleted else "put",
                           **e.rev.as_dict()} for e in entries]))  # fmt: skip
        return 0
    for e in entries:
        op = "delete" if e.deleted else "put"
        print(f"r{e.revision:<6} {op:<6} {e.rev.at:<24} {e.rev.by:<16} {e.rev.summary}")
    return 0


async def cmd_revert(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    base = await _base(bucket, args.name, args.base)
    by = args.by or default_user()
    return _said("reverted", await bucket.revert(args.name, args.revision, base, by))


async def cmd_delete(bucket: ScreenBucket, args: argparse.Namespace) -> int:
    base = await _base(bucket, args.name, args.base)
    by = args.by or default_user()
    return _said("deleted", await bucket.delete(args.name, base, by, args.summary))


__all__ = ["default_seed_dir", "default_user", "register"]
