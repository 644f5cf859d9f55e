"""The mask-sensitivity check in the Score tab: how far the chosen mask-dependent metrics (MaSC CP and PF, the
`*_seg` metrics) move when the sample's masks are eroded and dilated by a few pixels and, optionally, replaced by
the masks segmented by the subject's name (`wb.mask_sensitivity`). A table (one row per metric: its value with the
sample's own masks, each variant's, the spread) and notes on the variants skipped or doubtful.

Like every result of the Score tab it follows the one staleness rule (`staleness`): flagged out of date, here and
under Run, when the inputs change; cleared by new images. Its handler is registered on the app and so wrapped by
`roles.guard_endpoints` (admin-only); the use case checks the role again.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench, sample_fingerprint
from ..workbench.mask_sensitivity import DEFAULT_SHIFTS_PX, SensitivityReport
from ..workbench.score_files import parse_shifts
from .gpu import gpu
from .staleness import SENSITIVITY_LABEL, ResultOutputs, stale_note
from .users import user_of

SENSITIVITY_API = "mask_sensitivity"
"""Api name of the check (rate-limited as a model call, `roles.HEAVY`)."""
RESULT = "mask sensitivity"
"""What the check is called in the "out of date" notes (`staleness.RESULTS`)."""
SHIFTS_LABEL = "Erode and dilate by (pixels, e.g. 3 or 2,5)"


@dataclass
class SensitivityPanel:
    check: gr.Button
    shifts: gr.Textbox
    by_name: gr.Checkbox
    stale: gr.HTML
    """The "out of date" note of the check, next to it (the note under Run says it too)."""
    table: gr.HTML
    checked: Any = None
    """The button's click event (the Score tab chains its "out of date" check to it)."""


def build(
    wb: Workbench,
    sample_of: Callable[..., Any],
    inputs: list,
    metrics: gr.CheckboxGroup,
    status: gr.Markdown,
    computed: gr.State,
    stale: gr.HTML,
) -> SensitivityPanel:
    """The check's controls, its note and its table, in a closed accordion. `sample_of(*inputs)` is the Score tab's
    sample on screen, `metrics` its metric selection (the mask-dependent ones are checked), `computed` and `stale`
    the Score tab's fingerprints of the results shown and its "out of date" note."""
    with gr.Accordion("Mask sensitivity (CP, PF and the *_seg metrics with other masks)", open=False):
        with gr.Row(equal_height=True):
            shifts = gr.Textbox(
                ",".join(str(px) for px in DEFAULT_SHIFTS_PX),
                label=SHIFTS_LABEL,
                elem_id="sensitivity-shifts",
                min_width=200,
            )
            by_name = gr.Checkbox(
                True, label="also segment by the subject's name (SAM 3)", elem_id="sensitivity-by-name", min_width=200
            )
            check = gr.Button(SENSITIVITY_LABEL, elem_id="check-sensitivity", min_width=200)
        here = gr.HTML(elem_id="sensitivity-stale")
        table = gr.HTML(elem_id="sensitivity-table")
    panel = SensitivityPanel(check, shifts, by_name, here, table)
    panel.checked = check.click(
        check_handler(wb, sample_of, panel, ResultOutputs(status, computed, stale)),
        [*inputs, metrics, shifts, by_name, computed],
        [table, status, computed, stale, here],
        concurrency_limit=2,
        api_name=SENSITIVITY_API,
    )
    return panel


def stale_here(now: str | None, computed: Any) -> str:
    """The note next to the check when it was computed on another sample than the one (fingerprint `now`) on screen
    (`staleness.stale_note` of this result only)."""
    return stale_note(now, computed, [RESULT], element_id="sensitivity-stale-note")


def report_html(report: SensitivityReport) -> str:
    """The check as HTML: a table (metric, own masks, each variant, spread) and the notes (variants skipped or
    doubtful, values that could not be computed and why), all text escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in report.header())
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in report.rows())
    notes = [f"{label} skipped: {reason}" for label, reason in report.skipped.items()]
    notes += [f"{label}: {note}" for label, note in report.notes.items()]
    notes += [
        f"{m.display_name} with {label}: n/a ({reason})" for m in report.metrics for label, reason in m.reasons.items()
    ]
    listed = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (
        '<div class="score-table-wrap"><table class="score-table" id="sensitivity-values">'
        f"<tr>{head}</tr>{rows}</table></div>"
        '<p class="value-note">spread: the highest value minus the lowest, in the metric\'s own units.</p>'
        + (f'<ul class="sensitivity-notes">{listed}</ul>' if listed else "")
    )


def check_handler(
    wb: Workbench,
    sample_of: Callable[..., Any],
    panel: SensitivityPanel,
    score: ResultOutputs,
) -> Callable[..., dict]:
    """The button's handler: (the Score tab's inputs; metric names; shifts text; by name; fingerprints; request)
    -> the panel's table, the note here, and the Score tab's status line, fingerprints and "out of date" note under
    Run (`score`). A bad input or a refused role is a message in place of the table, never
    a traceback; the check shown is then gone (the note under Run is left as it is)."""

    @gpu
    def on_check_sensitivity(
        ref,
        extra,
        out,
        prompt_text,
        subject_text,
        session,
        names,
        steps_text,
        by_subject,
        fingerprints,
        request: gr.Request,
    ) -> dict:
        try:
            sample = sample_of(ref, extra, out, prompt_text, subject_text, session)
            steps = parse_shifts(str(steps_text or ""), what=f"“{SHIFTS_LABEL}”")
            report = wb.mask_sensitivity.run(
                sample, names or None, user=user_of(request), shifts=steps, by_name=bool(by_subject)
            )
        except WorkbenchError as exc:
            return {
                panel.table: f'<p class="action-message" id="sensitivity-message">⚠ {html.escape(str(exc))}</p>',
                panel.stale: "",
                **score.answer(wb.status().line(), fingerprints, RESULT, None),
            }
        return {
            panel.table: report_html(report),
            panel.stale: "",
            **score.answer(wb.status().line(), fingerprints, RESULT, sample_fingerprint(sample)),
        }

    return on_check_sensitivity
