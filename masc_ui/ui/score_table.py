"""The score table: every metric side by side with its range, direction and convention (as a tooltip); for a video
output, how each value was made from the frames; for a judge, its full answer (its reasoning) under the value."""

from __future__ import annotations

import html
from collections.abc import Mapping

from ..workbench import ScoreReport
from ..workbench.metric_presets import registry_order


def score_table_html(report: ScoreReport, *, x100: bool = False, demo: bool = False, caption: str = "") -> str:
    """The table of `report`, one row per metric in the registry's order (not the order the metrics were
    chosen in); `caption` (e.g. "stored values of sample #2") is shown above it."""
    head = "<tr><th>metric</th><th>value</th><th>range</th><th>direction</th><th>convention</th></tr>"
    notes = frame_notes(report)
    answers = judge_answers(report)
    rows = []
    by_name = {r.metric: r for r in report.rows}
    for r in (by_name[n] for n in registry_order([r.metric for r in report.rows])):
        cls = ' class="na"' if r.value is None else ""
        shown_range = f"[{r.lo * 100:g}, {r.hi * 100:g}] (x100)" if x100 and r.value is not None else r.range_text
        note = notes.get(r.metric)
        under = f'<br><small class="value-note">{html.escape(note)}</small>' if note else ""
        if r.metric in answers:
            under += (
                '<details class="judge-answer"><summary>the judge\'s answer</summary>'
                f'<div class="judge-answer-text">{html.escape(answers[r.metric])}</div></details>'
            )
        rows.append(
            f'<tr data-metric="{html.escape(r.metric)}" title="{html.escape(r.convention)}">'
            f"<td><b>{html.escape(r.display_name)}</b></td>"
            f'<td{cls} data-value="{"" if r.value is None else repr(r.value)}">{html.escape(r.text(x100))}{under}</td>'
            f"<td>{html.escape(shown_range)}</td><td>{html.escape(r.direction)}</td>"
            f"<td><small>{html.escape(r.convention)}</small></td></tr>"
        )
    note = '<p class="demo-banner">demo weights: numbers are not meaningful</p>' if demo else ""
    title = f'<p class="score-caption" id="score-caption">{html.escape(caption)}</p>' if caption else ""
    return (
        f'{note}{title}<div class="score-table-wrap"><table class="score-table" id="score-table">{head}'
        f"{''.join(rows)}</table></div>"
    )


def judge_answers(report: ScoreReport | None) -> dict[str, str]:
    """metric -> the judge's full answer behind its value (extras `answer`: the DreamBench++ judge's reasoning and
    score, each reference's answer under `reference <i>:`), for the values that carry one."""
    values = report.values if report is not None else {}
    return {
        name: answer for name, value in values.items() if isinstance(answer := (value.extras or {}).get("answer"), str)
    }


def frame_notes(report: ScoreReport | None) -> dict[str, str]:
    """metric -> how its value of a video output was made: `mean over N sampled frames` for an image metric scored
    per frame, `over N frames (the metric's own rule)` for a video metric that kept per-frame values."""
    notes: dict[str, str] = {}
    for name, value in (report.values if report is not None else {}).items():
        extras = value.extras or {}
        per_frame, sampling = extras.get("per_frame"), extras.get("frames")
        if not isinstance(per_frame, list):
            continue
        if isinstance(sampling, Mapping):
            have = extras.get("n_frames_with_value", len(per_frame))
            missing = f", {len(per_frame) - have} without a value" if have != len(per_frame) else ""
            distinct = len(set(sampling.get("indices") or []))
            repeats = f" ({distinct} distinct: a short video)" if 0 < distinct < len(per_frame) else ""
            notes[name] = f"mean over {len(per_frame)} sampled frames{repeats}{missing}"
        else:
            notes[name] = f"over {len(per_frame)} frames (the metric's own rule)"
    return notes
