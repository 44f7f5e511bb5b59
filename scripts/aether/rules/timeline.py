"""A run as a timeline: each ant's start and end by wave, its model and tokens, the merges — as
terminal text and as a self-contained SVG (`aether status --timeline`; read by colony/timeline.py).
Pure: times are epoch seconds handed in."""

from __future__ import annotations

import html as _html
import re

from aether.core import clock

BAR = 40  # characters of the text view's time axis
SVG_WIDTH, LABEL, ROW, TOP = 960, 260, 24, 56  # the picture's width, its label column, a row, the header
COLOURS = {"builder": "#d08c2a", "watcher": "#3f8f5f", "route-setter": "#4f6fb0", "scout": "#7a5ca8", "colonizer": "#8a6d3b"}
OTHER = "#777777"
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # not allowed in XML: a name with one would break the picture


def escape(text: str) -> str:
    return _html.escape(CONTROL.sub("?", str(text)))


HOOKS_SAID = "Hooks: the time each ant's calls spent in PreToolUse hooks (the guard's included), as the mod measured it."
HELPER_SAID = (
    "Helper: the time of the helper's calls that worked on this run, from each call's start to its last change "
    "(the Agent hooks' calls included; the time a call waits, for the lock or for ants, is not)."
)
MEASURED_BY = "(make bench-guard and make bench-scale measure them)"


def footnote(found: list, helper: tuple | None = None) -> str:
    """What the times drawn are, and what the view does not draw (said, not left out): hook time
    where the mod measured it, the helper's time where its steps recorded it."""
    said, missing = [], []
    if any(r.get("hooks_ms") is not None for r in found):
        said.append(HOOKS_SAID)
        missing.append("the hooks of ants the markdown runtime ran")
    else:
        missing.append("the time in hooks")
    if helper:
        said.append(HELPER_SAID)
    else:
        missing.append("the time in the helper")
    return " ".join([*said, f"Not recorded here: {' and '.join(missing)} {MEASURED_BY}."])


def helper_time(run: dict) -> tuple | None:
    """(ms, steps) of the helper's steps for a run, when they were recorded."""
    ms, steps = run.get("helper_ms"), run.get("helper_steps")
    return (ms, steps) if isinstance(ms, int) and isinstance(steps, int) and steps > 0 else None


def _helper(helper: tuple | None) -> str:
    if not helper:
        return ""
    ms = helper[0]
    took = f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s" if ms < 60_000 else clock.elapsed(ms / 1000)
    return f" · helper {took} in {helper[1]} step(s)"


def _group(spawn: dict, node: dict | None) -> str:
    """Where an ant sits in the run: its wave (builders), or what it does (lead, review, verify …)."""
    if node is None:
        return "lead" if spawn.get("kind") == "lead" else str(spawn.get("kind") or "other")
    role = str(node.get("role") or "worker")
    return f"wave {node.get('wave')}" if role == "worker" and node.get("wave") is not None else role


def rows(spawns: list, nodes: dict, parse=clock.parse_iso, hooks: dict | None = None) -> list:
    """[{id, group, caste, start, end, seconds, tokens, model, status, hooks_ms, hooked_calls}] in
    the order the ants were handed out; `start` is when it was launched (else handed out), `end`
    when its answer was recorded (None: not yet), or later by the time Claude Code says the ant
    ran. hooks: {ref: (ms, calls)}, the time its calls spent in PreToolUse hooks where measured."""
    out = []
    for spawn in spawns:
        start_at = spawn.get("launched_at") or spawn.get("dispatched_at")
        try:
            start = parse(start_at)
        except (TypeError, ValueError):
            continue
        try:
            end = parse(spawn.get("recorded_at")) if spawn.get("recorded_at") else None
        except (TypeError, ValueError):
            end = None
        usage = spawn.get("usage") if isinstance(spawn.get("usage"), dict) else {}
        node = nodes.get(spawn.get("local"))
        ran = usage.get("duration_ms")
        if end is not None and isinstance(ran, int) and not isinstance(ran, bool) and ran > 0:
            end = max(end, start + ran / 1000)  # Claude Code's own measure: finer than the records' seconds
        out.append(
            {
                "id": spawn.get("local"),
                "group": _group(spawn, node if isinstance(node, dict) else None),
                "caste": str(spawn.get("subagent_type") or "").removeprefix("ant:"),
                "start": start,
                "end": end,
                "seconds": None if end is None else max(0.0, end - start),
                "tokens": usage.get("total_tokens"),
                "model": str(usage.get("model") or spawn.get("model") or "") or None,
                "status": spawn.get("status"),
                "hooks_ms": (hooks or {}).get(spawn.get("ref"), (None, 0))[0],
                "hooked_calls": (hooks or {}).get(spawn.get("ref"), (None, 0))[1],
            }
        )
    return out


def _hooks(r: dict) -> str:
    return f" · hooks {r['hooks_ms']} ms in {r['hooked_calls']} call(s)" if r.get("hooks_ms") is not None else ""


def merges(nodes: dict) -> list:
    """[{id, t, outcome}] of the builders' results merged back (isolated builders only)."""
    found = [
        {"id": nid, "t": node["merged_t"], "outcome": node.get("merge")}
        for nid, node in nodes.items()
        if isinstance(node, dict) and isinstance(node.get("merged_t"), (int, float))
    ]
    return sorted(found, key=lambda m: m["t"])


def span(found: list, merged: list, now: float) -> tuple:
    """(first start, last end) of the run; a running ant ends now."""
    starts = [r["start"] for r in found]
    ends = [r["end"] if r["end"] is not None else now for r in found] + [m["t"] for m in merged]
    first = min(starts) if starts else now
    return first, max([first, *ends])


def _tokens(n) -> str:
    if not isinstance(n, int):
        return "—"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _when(seconds: float | None) -> str:
    return "running" if seconds is None else clock.elapsed(seconds)


def text(title: str, found: list, merged: list, now: float, helper: tuple | None = None) -> str:
    """The terminal view: one line per ant, its bar placed on the run's time axis."""
    first, last = span(found, merged, now)
    length = max(last - first, 1e-9)
    tokens = sum(r["tokens"] for r in found if isinstance(r["tokens"], int))
    lines = [f"TIMELINE · {title} · {len(found)} ant(s) · {clock.elapsed(last - first)} · {_tokens(tokens)} tokens{_helper(helper)}"]
    lines.append(f"{'':<18}0s{'':>{BAR - 2 - len(clock.elapsed(last - first))}}{clock.elapsed(last - first)}")
    group = None
    for r in found:
        left = round((r["start"] - first) / length * BAR)
        right = round(((r["end"] if r["end"] is not None else now) - first) / length * BAR)
        right = min(BAR, max(right, left + 1))
        bar = "·" * left + "█" * (right - left) + "·" * (BAR - right)
        label = r["group"] if r["group"] != group else ""
        group = r["group"]
        spent = f"{r['model'] or '—'} · {_tokens(r['tokens'])} tokens{_hooks(r)}"
        lines.append(f"{label:<9}{str(r['id'])[:8]:<9}{bar}  {_when(r['seconds']):>7}  {r['caste']:<12} {spent}")
    for m in merged:
        at = "·" * round((m["t"] - first) / length * (BAR - 1))
        lines.append(f"{'merge':<9}{str(m['id'])[:8]:<9}{at}▲  {m['outcome']} at {clock.elapsed(m['t'] - first)}")
    if not found:
        lines.append("  (no ant of this run has started)")
    lines.append(footnote(found, helper))
    return "\n".join(lines)


def svg(title: str, found: list, merged: list, now: float, helper: tuple | None = None) -> str:
    """The same timeline as a self-contained SVG: a bar per ant on a time axis, merges as marks."""
    first, last = span(found, merged, now)
    length = max(last - first, 1e-9)
    notes = [n if n.endswith(".") else n + "." for n in footnote(found, helper).split(". ")]  # a line each: the picture is 960 wide
    height = TOP + ROW * (len(found) + 1) + 16 + 16 * len(notes)

    def x(t: float) -> float:
        return LABEL + (t - first) / length * (SVG_WIDTH - LABEL - 150)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH}" height="{height}" viewBox="0 0 {SVG_WIDTH} {height}" '
        'font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{SVG_WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="12" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    if helper:
        parts.append(
            f'<text x="{SVG_WIDTH - 12}" y="22" text-anchor="end" fill="#555">{escape(_helper(helper).removeprefix(" · "))}</text>'
        )
    for i in range(5):  # the time axis: five ticks
        t = first + length * i / 4
        parts.append(f'<line x1="{x(t):.1f}" y1="{TOP - 14}" x2="{x(t):.1f}" y2="{height - 24}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{TOP - 18}" text-anchor="middle" fill="#555">{escape(clock.elapsed(t - first))}</text>')
    for i, r in enumerate(found):
        parts += _svg_ant(r, TOP + i * ROW, x, now)
    parts += _svg_merges(merged, TOP + len(found) * ROW, x, first)
    for i, note in enumerate(notes):
        parts.append(f'<text x="12" y="{height - 8 - 16 * (len(notes) - 1 - i)}" fill="#777">{escape(note)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _svg_ant(r: dict, y: float, x, now: float) -> list:
    """One ant's row: its group, id and caste, its bar (a tooltip says all), and what it spent."""
    width = max(x(r["end"] if r["end"] is not None else now) - x(r["start"]), 3)
    tip = f"{r['id']} ({r['caste']}): {_when(r['seconds'])}, {r['model'] or 'model not reported'}, {_tokens(r['tokens'])} tokens{_hooks(r)}"
    opacity = "0.45" if r["end"] is None else "0.9"  # a running ant's bar is pale
    return [
        f'<text x="12" y="{y + 15}">{escape(r["group"])}</text>',
        f'<text x="110" y="{y + 15}" font-weight="bold">{escape(str(r["id"]))}</text>',
        f'<text x="170" y="{y + 15}" fill="#555">{escape(r["caste"])}</text>',
        f'<rect x="{x(r["start"]):.1f}" y="{y + 4}" width="{width:.1f}" height="{ROW - 8}" rx="3" '
        f'fill="{COLOURS.get(r["caste"], OTHER)}" fill-opacity="{opacity}"><title>{escape(tip)}</title></rect>',
        f'<text x="{x(r["start"]) + width + 6:.1f}" y="{y + 15}" fill="#333">'
        f"{escape(_when(r['seconds']))} · {escape(r['model'] or '—')} · {escape(_tokens(r['tokens']))}</text>",
    ]


def _svg_merges(merged: list, base: float, x, first: float) -> list:
    """A mark on the time axis for each result merged back."""
    parts = [
        f'<path d="M{x(m["t"]):.1f},{base + 4} l-5,10 h10 z" fill="#222"><title>{escape(str(m["id"]))} merged back: '
        f"{escape(str(m['outcome']))} at {escape(clock.elapsed(m['t'] - first))}</title></path>"
        for m in merged
    ]
    return parts + ([f'<text x="12" y="{base + 15}">merges</text>'] if merged else [])


def html(title: str, picture: str) -> str:
    """The SVG in a page of its own (opens in any browser; nothing fetched)."""
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
        f'<body style="margin:24px;font-family:system-ui,sans-serif">\n{picture}</body></html>\n'
    )
