"""Compare tab (admins): two stored outputs of one reference side by side — the reference, both outputs, every
metric's latest stored value of each with the difference (left - right) and the side it prefers, and MaSC's patch
maps of both drawn on the same colour scales (`masc_ui.workbench.compare.Comparisons`)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench, format_value
from ..workbench.compare import Comparison
from .users import user_of


@dataclass
class CompareTab:
    sample_id: gr.Textbox
    take: object
    """Handler (sample id) -> this tab's sample id, partner choices and message: hand a sample over from
    another tab (e.g. the row selected in Browse) with `event(take, [id component], take_outputs)`."""
    take_outputs: list


def build(wb: Workbench) -> CompareTab:
    with gr.Row(equal_height=True):
        sample_id = gr.Textbox(
            "",
            label="Sample id (the left output)",
            placeholder="pick a sample first",
            max_lines=1,
            elem_id="cmp-sample-id",
        )
        find = gr.Button("Find outputs of the same reference", elem_id="cmp-find")
        partner = gr.Dropdown(
            [], value=None, label="Compare with (right output)", allow_custom_value=True, elem_id="cmp-partner"
        )
        run = gr.Button("Compare", variant="primary", elem_id="cmp-run")
    message = gr.Markdown(elem_id="cmp-message")
    summary = gr.Markdown(elem_id="cmp-summary")
    with gr.Row(equal_height=True):
        refs = gr.Gallery(
            label="Reference(s)",
            columns=1,
            height=280,
            object_fit="scale-down",
            allow_preview=False,
            elem_id="cmp-refs",
        )
        left_out = gr.Image(label="Left output", type="pil", interactive=False, height=280, elem_id="cmp-left")
        right_out = gr.Image(label="Right output", type="pil", interactive=False, height=280, elem_id="cmp-right")
    table = gr.Dataframe(
        headers=["metric", "left", "right", "left - right", "better"],
        interactive=False,
        wrap=False,
        elem_id="cmp-table",
        label="Latest stored values (better: the side the metric's direction prefers)",
    )
    reasons = gr.Markdown(elem_id="cmp-reasons", elem_classes=["table-note"])
    gr.Markdown("### MaSC patch maps, both on the same colour scales", elem_id="cmp-maps-title")
    maps = []
    with gr.Row():
        for side in ("left", "right"):
            with gr.Column(min_width=300):
                maps += [
                    gr.Image(
                        label=f"{side}: CP over the reference", type="pil", interactive=False, elem_id=f"cmp-{side}-cp"
                    ),
                    gr.Image(
                        label=f"{side}: best match of each output patch",
                        type="pil",
                        interactive=False,
                        elem_id=f"cmp-{side}-best",
                    ),
                    gr.Image(label=f"{side}: PF attention", type="pil", interactive=False, elem_id=f"cmp-{side}-pf"),
                    gr.Image(
                        label=f"{side}: strongest correspondences",
                        type="pil",
                        interactive=False,
                        elem_id=f"cmp-{side}-lines",
                    ),
                ]

    def on_find(chosen, request: gr.Request):
        if not str(chosen or "").strip():
            return {message: "⚠ pick a sample first: type its id, or click a row in Browse"}
        try:
            choices = wb.compare.partners(chosen, user=user_of(request))
        except WorkbenchError as exc:
            return {partner: gr.update(choices=[], value=None), message: f"⚠ {exc}"}
        if not choices:
            return {
                partner: gr.update(choices=[], value=None),
                message: f"⚠ sample #{str(chosen).strip()} has no other stored output of the same reference images",
            }
        return {
            partner: gr.update(choices=choices, value=choices[0][1]),
            message: f"{len(choices)} other output(s) of this reference; pick one and press Compare",
        }

    def take(chosen, request: gr.Request):
        if not str(chosen or "").strip():
            return {sample_id: gr.update()}  # Gradio reads an empty dict as one value, not as "nothing changes"
        return {sample_id: str(chosen).strip(), **on_find(chosen, request)}

    outputs = [message, summary, refs, left_out, right_out, table, reasons, *maps]

    def on_compare(left_id, right_id, request: gr.Request, progress=gr.Progress()):
        if not str(left_id or "").strip() or right_id in (None, ""):
            return {message: "⚠ pick a sample first, then the output to compare it with"}
        try:
            comparison = wb.compare.compare(
                left_id, right_id, user=user_of(request), progress=lambda f, d: progress(f, desc=d)
            )
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}
        headers, rows = comparison.table()
        pictures = []
        for side in (comparison.left, comparison.right):
            ex = side.explanation
            pictures += [ex.cp_ref[0] if ex.cp_ref else None, ex.out_best, ex.pf_attention, ex.lines]
        notes = comparison.reason_notes()
        return {
            message: "",
            summary: summary_markdown(comparison, demo=wb.status().is_demo),
            refs: [r.pixels for r in comparison.refs],
            left_out: _pixels(comparison.left.out),
            right_out: _pixels(comparison.right.out),
            table: {"headers": headers, "data": rows},
            reasons: "\n\n".join(["**n/a** in the table:", *notes]) if notes else "",
            **dict(zip(maps, pictures, strict=True)),
        }

    gr.on([find.click, sample_id.submit], on_find, [sample_id], [partner, message], api_name="compare_partners")
    run.click(on_compare, [sample_id, partner], outputs, concurrency_limit=2, api_name="compare")
    return CompareTab(sample_id, take, [sample_id, partner, message])


def summary_markdown(c: Comparison, *, demo: bool = False) -> str:
    """Who is left and right (sample, method, key, seed, prompt), the colour scales, and the comparison's notes."""

    def side(name: str, s) -> str:
        parts = [
            f"**{name}: #{s.sample_id}**",
            f"method `{s.method}`" if s.method else "no method",
            f"key `{s.external_key}`" if s.external_key else "",
            f"seed {s.seed}" if s.seed is not None else "",
        ]
        return " · ".join(p for p in parts if p) + f" — prompt: {html.escape(s.prompt) or '(none)'}"

    lines = [f"Subject: **{html.escape(c.subject or '?')}**", "", side("left", c.left), "", side("right", c.right)]
    if c.scales is not None:
        lines += [
            "",
            f"Colour scales shared by both sides: cosine maps {format_value(c.scales.cosine[0], 3)} … "
            f"{format_value(c.scales.cosine[1], 3)}; PF attention {format_value(c.scales.pf[0], 3)} … "
            f"{format_value(c.scales.pf[1], 3)}",
        ]
    if c.notes:
        lines += ["", *(f"- {html.escape(n)}" for n in c.notes)]
    if demo:
        lines += ["", "*demo weights: numbers are not meaningful*"]
    return "\n".join(lines)


def _pixels(image):
    return getattr(image, "pixels", None)
