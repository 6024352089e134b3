"""The importer on screens nobody here wrote (default: the stored corpus,
``importer/tests/realworld``). Two measures, printed as JSON:

- single files (the corpus's own folders, target ≥ 90 %): among the widgets
  of the types the importer maps (:data:`MAPPED`), those that become real
  widgets with every channel resolved, its rules' included (not a placeholder,
  each channel a valid URI once its ``$(MACRO)`` references get values);
- whole sets (``sets/``, each folder a facility's or module's display set,
  imported as one linked site as ``synoptic screens import FOLDER`` does): the
  share of all widgets mapped (target ≥ 97 %), files refused (target 0), links
  resolved inside the set, and links left outside whose file name the set does
  hold (target 0: every link inside a set resolved); with the import's time;
- the issue's goal, a 500-display set imported in ≤ 10 s: the whole path of
  ``synoptic screens import FOLDER`` (its Python start, reading the folder,
  conversion, the site report, validation, the writes to a real nats-server)
  on the largest set kept (IBEX, 541 displays), first into an empty bucket and
  again (every screen unchanged)."""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from synoptic_benchmarks.report import add_save_option, emit, machine
from synoptic_bus.natsserver import NatsServer
from synoptic_importer import SUFFIXES, folder_resolver, import_screen, screen_name
from synoptic_importer.site import Site, import_site
from synoptic_schemas import ChannelError, parse_channel

TARGET_PCT = 90.0
#: Whole sets: share of all widgets mapped, files refused, links unresolved.
SETS_TARGET_PCT = 97.0
CORPUS = Path(__file__).resolve().parents[3] / "importer/tests/realworld"
SETS = CORPUS / "sets"
#: The issue's goal: a set of 500 displays imported (whole path), wall seconds.
GOAL_S = 10.0
#: The set the goal is measured on: the largest kept, over 500 displays.
GOAL_SET = "ibex"
#: ``synoptic`` as a person runs it.
SYNOPTIC = [sys.executable, "-m", "synoptic_bus.cli"]
#: Its environment: Python's bytecode cache written and read, as an installed
#: command has it (an environment that turns it off would time the compiler).
CLI_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: Source types of the issue's list, per format: the coverage's denominator.
MAPPED: dict[str, frozenset[str]] = {
    "bob": frozenset(
        [
            "label",
            "textupdate",
            "textentry",
            "led",
            "multi_state_led",
            "byte_monitor",
            "progressbar",
            "meter",
            "gauge",
            "tank",
            "thermometer",
            "xyplot",
            "stripchart",
            "databrowser",
            "action_button",
            "bool_button",
            "checkbox",
            "combo",
            "choice",
            "radio",
            "slider",
            "scaledslider",
            "spinner",
            "group",
            "rectangle",
            "ellipse",
            "polyline",
            "polygon",
            "arc",
            "picture",
            "embedded",
            "tabs",
            "navtabs",
        ]
    ),
    "opi": frozenset(
        [
            "Label",
            "TextUpdate",
            "TextInput",
            "LED",
            "MultistateLED",
            "bytemonitor",
            "progressbar",
            "MeterWidget",
            "gauge",
            "tank",
            "thermometer",
            "xyGraph",
            "ActionButton",
            "BoolButton",
            "checkbox",
            "combo",
            "choiceButton",
            "radioBox",
            "scaledslider",
            "spinner",
            "groupingContainer",
            "Rectangle",
            "RoundedRectangle",
            "Ellipse",
            "polyline",
            "polygon",
            "arc",
            "Image",
            "linkingContainer",
            "tab",
        ]
    ),
    "wj": frozenset(
        [
            "LABEL",
            "BOX",
            "ATTRIBUTE_DISPLAY",
            "ATTRIBUTE_WRITER",
            "ATTRIBUTE_WRITER_DROPDOWN",
            "COMMAND",
            "COMMAND_EXECUTOR",
            "COMMAND_WRITER",
            "DEVICE_STATUS",
            "ATTRIBUTE_PLOT",
            "ATTRIBUTE_TRACE",
            "SPECTRUM",
            "LED_DISPLAY",
            "BOOLEAN_DISPLAY",
            "BOOLEAN_CONTROLLER",
        ]
    ),
}
#: The browser's formula engine: its functions are read from its source.
FORMULA_TS = CORPUS.parents[2] / "ui/src/lib/transport/local/formula.ts"
_FUNCTION = re.compile(r"([A-Za-z_]\w*)\s*\(")
_STRINGS = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
_MACRO = re.compile(r"\$\(([^()$=]*)(=[^()$]*)?\)|\$\{([^{}$=]*)(=[^{}$]*)?\}")
_QUOTED = re.compile(r"`([^`]*)`|'([^']*)'")


def _opened(text: str) -> str:
    """``text`` with every macro reference given a value (``$(P)`` → ``P1``)."""
    return _MACRO.sub(lambda m: f"{m.group(1) or m.group(3) or 'M'}1", text)


def formula_functions(source: Path = FORMULA_TS) -> frozenset[str] | None:
    """The function names the browser's formulas know (None: no UI source here)."""
    try:
        text = source.read_text()
    except OSError:
        return None
    body = text[
        text.index("const FUNCTIONS") : text.index("};", text.index("const FUNCTIONS"))
    ]
    return frozenset(re.findall(r"(\w+):\s*(?:math1|\()", body))


_FUNCTIONS = formula_functions()


def channel_resolves(uri: str) -> bool:
    """Whether a channel is live once its macros have values: a URI the
    gateway accepts, or a browser-side one (local, simulated function, formula
    whose channels resolve and whose functions the browser knows)."""
    uri = _opened(uri)
    if uri.startswith(("=", "eq://")):
        names = [a or b for a, b in _QUOTED.findall(uri)]
        calls = set(_FUNCTION.findall(_STRINGS.sub("", uri)))
        if _FUNCTIONS is not None and not calls <= _FUNCTIONS:
            return False  # a function the browser's formulas do not know
        return all(channel_resolves(n if "://" in n else f"ca://{n}") for n in names)
    if uri.startswith("loc://") or (uri.startswith("sim://") and "(" in uri):
        return True
    try:
        parse_channel(uri)
    except ChannelError:
        return False
    return True


def is_live(widget: dict[str, Any]) -> bool:
    """Not a placeholder, and each channel of it and of its rules resolves (a
    command widget's command too)."""
    if widget["type"] == "placeholder":
        return False
    channels = [*widget.get("channels", []),
                *(r["channel"] for r in widget.get("rules", []) if "channel" in r)]  # fmt: skip
    if widget["type"] == "command":
        channels.append(widget["options"]["command"])
    return all(channel_resolves(c) for c in channels)


def measure(folder: Path) -> dict[str, Any]:
    """The coverage report of every screen file under ``folder``."""
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES
                   and SETS not in p.parents)  # fmt: skip
    siblings = frozenset(screen_name(p.name) for p in paths)
    files: list[dict[str, Any]] = []
    total: Counter[str] = Counter()
    per_type: dict[str, Counter[str]] = {}
    reasons: dict[str, str] = {}
    for path in paths:
        imported = import_screen(path.read_bytes(), path.name, siblings=siblings,
                                 resolve=folder_resolver(path.parent),
                                 tango_host="tango-host:10000")  # fmt: skip
        source = imported.report.source
        counts: Counter[str] = Counter()
        for kind, widget in imported.report.items:
            key = f"{source}:{kind}"
            mapped = kind in MAPPED[source]
            live = is_live(widget)
            counts["widgets"] += 1
            counts["mapped_type"] += mapped
            counts["live"] += mapped and live
            entry = per_type.setdefault(key, Counter())
            entry["widgets"] += 1
            entry["live"] += live
            if not live:
                why = (
                    widget.get("options", {}).get("reason")
                    or "a channel does not resolve"
                )
                reasons.setdefault(key, why)
        total.update(counts)
        files.append({"file": str(path.relative_to(folder)), "source": source,
                      **counts, "pct": _pct(counts["live"], counts["mapped_type"]),
                      "rules_skipped": sum("rule " in s for s in imported.report.skipped),
                      "scripts": sum("(not run)" in s for s in imported.report.skipped)})  # fmt: skip
    gaps = {k: {"widgets": c["widgets"], "not_live": c["widgets"] - c["live"],
                "mapped_type": k.split(":", 1)[1] in MAPPED[k.split(":", 1)[0]],
                "reason": reasons[k]}
            for k, c in sorted(per_type.items()) if c["live"] < c["widgets"]}  # fmt: skip
    return {
        "benchmark": "import-real",
        "machine": machine(),
        "corpus": _shown(folder),
        "screens": len(files),
        "widgets": total["widgets"],
        "widgets_of_mapped_types": total["mapped_type"],
        "live": total["live"],
        "coverage_pct": _pct(total["live"], total["mapped_type"]),
        "target_pct": TARGET_PCT,
        "gaps": gaps,
        "files": files,
    }


def _shown(folder: Path) -> str:
    """The folder relative to the repository when it is inside it."""
    root = CORPUS.parents[2]
    resolved = folder.resolve()
    return (
        str(resolved.relative_to(root))
        if resolved.is_relative_to(root)
        else folder.name
    )


def read_set(folder: Path) -> dict[str, bytes]:
    """A set's files by their path in it (as the CLI reads a folder)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def unresolved(site: Site, files: dict[str, bytes]) -> list[dict[str, str]]:
    """Links left outside the set whose file name the set holds (under any
    folder, ``.opi`` or ``.bob``): links a resolution missed."""
    names = {posixpath.splitext(posixpath.basename(f))[0].lower() for f in files}
    out = []
    for imported in site.screens:
        for link in imported.report.links:
            stem = posixpath.splitext(posixpath.basename(link.path.replace("\\", "/")))[
                0
            ]
            if link.inside is False and stem.lower() in names:
                out.append({"file": site.files[imported.name], "path": link.path})
    return out


def measure_set(folder: Path) -> dict[str, Any]:
    """One set imported as a linked site: coverage, refusals, links, time."""
    files = read_set(folder)
    cpu, wall = time.process_time(), time.perf_counter()
    site = import_site(files, folder.name)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    report = site.report()
    missed = unresolved(site, files)
    reasons: Counter[str] = Counter()
    for kind, t in report.types.items():
        for reason, n in t["reasons"].items():
            reasons[f"{kind}: {reason[:160]}"] += n
    return {
        "set": folder.name,
        "displays": len(site.screens) + len(site.refused),
        "refused": [r.as_dict() for r in site.refused],
        "widgets": report.widgets,
        "mapped": report.mapped,
        "mapped_pct": report.mapped_pct,
        "links": {k: v for k, v in report.links.items() if k != "outside_list"},
        "links_unresolved": missed,
        "channels": report.channels,
        "home": site.home,
        "import_s": {"cpu": round(cpu, 2), "wall": round(wall, 2)},
        "placeholders": dict(reasons.most_common(12)),
    }


def measure_sets(root: Path = SETS) -> dict[str, Any]:
    """Every set under ``root`` (one folder each) and the totals."""
    sets = [measure_set(d) for d in sorted(root.iterdir()) if d.is_dir()]
    widgets = sum(s["widgets"] for s in sets)
    mapped = sum(s["mapped"] for s in sets)
    return {
        "sets": sets,
        "displays": sum(s["displays"] for s in sets),
        "widgets": widgets,
        "mapped": mapped,
        "mapped_pct": _pct(mapped, widgets),
        "target_pct": SETS_TARGET_PCT,
        "refused": sum(len(s["refused"]) for s in sets),
        "links_resolved": sum(s["links"]["resolved"] for s in sets),
        "links_unresolved": sum(len(s["links_unresolved"]) for s in sets),
    }


def _timed_import(folder: Path, url: str) -> dict[str, Any]:
    """One ``synoptic screens import FOLDER --report json`` run: wall and CPU
    seconds of the command, and how many screens each action took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run([*SYNOPTIC, "screens", "import", str(folder), "--nats", url,
                           "--by", "bench", "--report", "json"], env=CLI_ENV,
                          capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"screens import failed ({done.returncode}): "
                           f"{done.stderr[-2000:]}")  # fmt: skip
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "counts": json.loads(done.stdout)["counts"]}  # fmt: skip


def measure_whole_path(folder: Path = SETS / GOAL_SET) -> dict[str, Any]:
    """The goal's measure: ``synoptic screens import FOLDER`` against a real
    nats-server, into an empty bucket, then again (every screen unchanged);
    the load average at the start of each run."""
    displays = sum(1 for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES)
    runs: dict[str, Any] = {}
    with NatsServer() as server:
        subprocess.run([*SYNOPTIC, "bus", "init", "--nats", server.url], env=CLI_ENV,
                       capture_output=True, timeout=300, check=True)  # fmt: skip
        subprocess.run(
            [sys.executable, "-c", "import synoptic_bus.screencmd"],
            env=CLI_ENV,
            timeout=300,
            check=True,
        )  # the cache, as installed
        for run in ("first", "again"):
            load = round(os.getloadavg()[0], 2)
            runs[run] = {**_timed_import(folder, server.url), "load_avg_1m": load}
    return {"set": folder.name, "displays": displays, "target_s": GOAL_S, **runs}


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 100.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", nargs="?", type=Path, default=CORPUS)
    add_save_option(parser)
    args = parser.parse_args()
    report = measure(args.folder)
    sets = args.folder / "sets"
    if sets.is_dir():
        report["sets"] = measure_sets(sets)
        if (sets / GOAL_SET).is_dir():
            report["whole_path"] = measure_whole_path(sets / GOAL_SET)
    emit("import-real", report, save=args.save)


if __name__ == "__main__":
    main()
