"""The score table: every metric side by side with its range, direction and convention (as a tooltip)."""
from __future__ import annotations

import html
from typing import Mapping

from ..workbench import ScoreReport


def score_table_html(report: ScoreReport, *, x100: bool = False, demo: bool = False,
                     notes: Mapping[str, str] | None = None) -> str:
    """`notes`: metric -> a line under its value (e.g. "mean over 32 sampled frames" for a video output)."""
    head = ("<tr><th>metric</th><th>value</th><th>range</th><th>direction</th><th>convention</th></tr>")
    rows = []
    for r in report.rows:
        cls = ' class="na"' if r.value is None else ""
        shown_range = f"[{r.lo * 100:g}, {r.hi * 100:g}] (x100)" if x100 and r.value is not None else r.range_text
        rows.append(
            f'<tr data-metric="{html.escape(r.metric)}" title="{html.escape(r.convention)}">'
            f"<td><b>{html.escape(r.display_name)}</b></td>"
            f'<td{cls} data-value="{"" if r.value is None else repr(r.value)}">{html.escape(r.text(x100))}'
            f"{_note((notes or {}).get(r.metric))}</td>"
            f"<td>{html.escape(shown_range)}</td><td>{html.escape(r.direction)}</td>"
            f"<td><small>{html.escape(r.convention)}</small></td></tr>")
    note = ('<p class="demo-banner">demo weights: numbers are not meaningful</p>' if demo else "")
    return f'{note}<table class="score-table" id="score-table">{head}{"".join(rows)}</table>'


def _note(text: str | None) -> str:
    return f'<br><small class="value-note">{html.escape(text)}</small>' if text else ""
