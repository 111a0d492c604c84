"""``turbocubes wordstat QUERY``: a frequency with Wordstat's operators, in the terminal.

    turbocubes wordstat 'купить слона'
    turbocubes wordstat '"!купить слона" -дешево' --months 12 --device mobile
    turbocubes wordstat 'купить слона' --json

Reads the store named by the configuration (``store.url``), as the page and the
API do, with the same privacy threshold. Exit codes: 0 answered, 2 a query
that cannot be read (the message says where).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

import orjson

from shared.clock import SystemClock
from shared.config import Settings, load_settings
from shared.stores import open_configured
from shared.wordstat.frequency import Frequency, frequency, frequency_json
from shared.wordstat.operators import WordstatSyntaxError, parse

__all__ = ["render_text", "run", "wordstat_command"]

_BAR = 40  # characters of the longest month's bar


def run(args: argparse.Namespace) -> int:
    """``turbocubes wordstat`` with its parsed arguments."""
    return asyncio.run(wordstat_command(load_settings(args.config), args))


def render_text(f: Frequency, months: int) -> str:
    period = "this month" if months == 1 else f"the last {months} months"
    lines = [f"{f.query}: {f.total.display} searches {period}" + (" (a lower bound)" if f.approximate else "")]
    top = max((c.visible or 0 for _, c in f.months), default=0) or 1
    lines.append("")
    for month, c in f.months:
        bar = "#" * round(_BAR * (c.visible or 0) / top) if c.visible else ("." if c.n else "")
        lines.append(f"  {month // 100}-{month % 100:02d} {c.display:>9} {bar}")
    for title, shares in (("regions", f.regions), ("devices", f.devices)):
        if shares:
            parts = ", ".join(
                f"{s.key} {s.count.display}" + (f" ({s.share:.0%})" if s.share is not None else "") for s in shares
            )
            lines.append(f"{title}: {parts}")
    if f.similar:
        lines.append("queries:")
        lines.extend(f"  {c.display:>9}  {q}" for q, c in f.similar)
    return "\n".join(lines)


async def wordstat_command(settings: Settings, args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    cfg = settings.wordstat
    try:
        query = parse(args.query)
    except WordstatSyntaxError as exc:
        print(f"turbocubes wordstat: {exc}", file=sys.stderr)
        return 2
    months = min(max(args.months, 1), cfg.history_months)
    stores = await open_configured(settings.store, pool_size=2)
    try:
        f = await frequency(
            stores.wordstat,
            query,
            now=SystemClock().now(),
            threshold=cfg.privacy_threshold,
            history_months=cfg.history_months,
            period_months=months,
            region=args.region,
            device=args.device,
        )
    finally:
        await stores.close()
    if args.json:
        data = frequency_json(f, threshold=cfg.privacy_threshold, period_months=months)
        out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(render_text(f, months) + "\n")
    return 0
