"""The score table: every metric side by side with its range, direction and convention (as a tooltip)."""
from __future__ import annotations

import html

from ..workbench import ScoreReport


def score_table_html(report: ScoreReport, *, x100: bool = False, demo: bool = False, caption: str = "") -> str:
    """The table of `report`; `caption` (e.g. "stored values of sample #2") is shown above it."""
    head = ("<tr><th>metric</th><th>value</th><th>range</th><th>direction</th><th>convention</th></tr>")
    rows = []
    for r in report.rows:
        cls = ' class="na"' if r.value is None else ""
        shown_range = f"[{r.lo * 100:g}, {r.hi * 100:g}] (x100)" if x100 and r.value is not None else r.range_text
        rows.append(
            f'<tr data-metric="{html.escape(r.metric)}" title="{html.escape(r.convention)}">'
            f"<td><b>{html.escape(r.display_name)}</b></td>"
            f'<td{cls} data-value="{"" if r.value is None else repr(r.value)}">{html.escape(r.text(x100))}</td>'
            f"<td>{html.escape(shown_range)}</td><td>{html.escape(r.direction)}</td>"
            f"<td><small>{html.escape(r.convention)}</small></td></tr>")
    note = ('<p class="demo-banner">demo weights: numbers are not meaningful</p>' if demo else "")
    title = f'<p class="score-caption" id="score-caption">{html.escape(caption)}</p>' if caption else ""
    return (f'{note}{title}<div class="score-table-wrap"><table class="score-table" id="score-table">{head}'
            f'{"".join(rows)}</table></div>')
