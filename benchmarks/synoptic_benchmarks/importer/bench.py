"""Import of a 500-widget Phoebus ``.bob`` (target ≤ 200 ms): the display is made
here (labels, text updates, LEDs, bars and groups over ``sim://BENCH:SCALAR:…``
channels, with colours, fonts and a rule), converted ``--runs`` times in this
process; prints JSON. ``--out DIR`` also writes the converted screen there as
``imported-500.json`` (the browser benchmark opens it), and the screen of a
small display whose button opens it (``imported-menu.json``: the browser
benchmark follows that link)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from synoptic_importer import import_screen

TARGET_MS = 200
#: Widgets per group of ten (one group frame + nine widgets).
_KINDS = ("textupdate", "led", "textupdate", "progressbar", "textupdate", "led",
          "textupdate", "label", "textupdate")  # fmt: skip


def make_bob(widgets: int = 500) -> bytes:
    """A display of ``widgets`` widgets: groups of nine widgets each (the group
    counts as one), every PV-bound one on its own ``sim://BENCH:SCALAR:`` channel."""
    parts: list[str] = []
    n = channel = 0
    while n < widgets:
        g = n // 10
        gx, gy = g % 5 * 200, g // 5 * 130
        inner: list[str] = []
        n += 1
        for k, kind in enumerate(_KINDS):
            if n >= widgets:
                break
            n += 1
            x, y = 5 + k % 3 * 64, 20 + k // 3 * 34
            body = f"<x>{x}</x><y>{y}</y><width>60</width><height>24</height>"
            if kind == "label":
                body += f"<text>G{g} label</text>"
            else:
                body += f"<pv_name>sim://BENCH:SCALAR:{channel:05d}</pv_name>"
                channel += 1
            if kind == "textupdate":
                body += ('<font><font name="Default Bold" family="Liberation Sans" '
                         'style="BOLD" size="14.0"/></font><background_color>'
                         '<color name="Read_Background" red="240" green="240" '
                         'blue="240"/></background_color><rules><rule name="hi" '
                         'prop_id="foreground_color" out_exp="false"><exp '
                         'bool_exp="pv0 &gt; 0.5"><value><color name="MAJOR" '
                         'red="255" green="0" blue="0"/></value></exp><pv_name>'
                         f"sim://BENCH:SCALAR:{channel - 1:05d}</pv_name></rule>"
                         "</rules>")  # fmt: skip
            inner.append(f'<widget type="{kind}" version="2.0.0"><name>W{n}</name>'
                         f"{body}</widget>")  # fmt: skip
        parts.append(f'<widget type="group" version="2.0.0"><name>Group {g}</name>'
                     f"<x>{gx}</x><y>{gy}</y><width>195</width><height>125</height>"
                     f"{''.join(inner)}</widget>")  # fmt: skip
    rows = (widgets // 10 + 4) // 5
    return (f'<?xml version="1.0" encoding="UTF-8"?><display version="2.0.0">'
            f"<name>Imported 500</name><width>1000</width><height>{rows * 130}</height>"
            f"{''.join(parts)}</display>").encode()  # fmt: skip


#: The text of the menu's button that opens the 500-widget display.
LINK_TEXT = "Open the 500"


def make_menu() -> bytes:
    """A display with one button opening ``imported-500.bob`` in its place
    (an open-display action passing a macro), as a facility's menu screen."""
    return (b'<?xml version="1.0" encoding="UTF-8"?><display version="2.0.0">'
            b"<name>Menu</name><width>400</width><height>100</height>"
            b'<widget type="action_button" version="3.0.0"><name>B</name><text>'
            + LINK_TEXT.encode() + b"</text><actions><action type=\"open_display\">"
            b"<file>imported-500.bob</file><macros><S>1</S></macros>"
            b"<target>replace</target></action></actions><x>10</x><y>10</y>"
            b"<width>200</width><height>40</height></widget></display>")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--widgets", type=int, default=500)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", type=Path, help="write imported-500.json here")
    args = parser.parse_args()
    data = make_bob(args.widgets)
    times: list[float] = []
    imported = None
    for _ in range(max(1, min(args.runs, 1000))):
        t0 = time.perf_counter()
        imported = import_screen(data, "imported-500.bob")
        times.append((time.perf_counter() - t0) * 1000)
    assert imported is not None
    if args.out:
        (args.out / "imported-500.json").write_text(json.dumps(imported.screen))
        menu = import_screen(make_menu(), "imported-menu.bob").screen
        (args.out / "imported-menu.json").write_text(json.dumps(menu))
    times.sort()
    print(json.dumps({
        "benchmark": "import",
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "bob_bytes": len(data),
        "widgets": imported.report.widgets,
        "channels": sum(len(w.get("channels", [])) for w in imported.screen["widgets"]),
        "runs": len(times),
        "import_ms": {"median": round(statistics.median(times), 1),
                      "p95": round(times[int(0.95 * (len(times) - 1))], 1),
                      "max": round(times[-1], 1), "target": TARGET_MS},
    }))  # fmt: skip


if __name__ == "__main__":
    main()
