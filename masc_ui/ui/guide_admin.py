"""The Raters tab's "Rating guide" box (admins): a dataset's guide in Markdown, its examples (`SAMPLE:CP:PF:NOTE`,
one per line) and its practice round (how many tasks, which gold tasks, whether raters may skip it), saved as a new
version (`workbench.rating_guide.RatingGuides.set_guide`, the use case of `masc-ui guide set`), with a preview of
the text as raters see it."""

from __future__ import annotations

from typing import Any

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.rating_guide import MAX_EXAMPLES, MAX_PRACTICE_TASKS, example_text
from .users import user_of

GUIDE_NOTE = (
    "Raters see the guide before their first task of this dataset (again after you change it) and with the **Guide** "
    "button. Markdown without raw HTML or images. Examples: one per line, `SAMPLE:CP:PF:NOTE` (the sample's key or "
    f"`#id`, the expected scores 0-4, `-` for none, and why; at most {MAX_EXAMPLES}). The practice round hands each "
    "rater that many of the practice samples (gold tasks: mark them above) before their real tasks, with the accepted "
    "answer and the gold task's note after each answer; practice samples are never real tasks and practice answers "
    "never count as ratings. Same as `masc-ui guide set`."
)


def build(wb: Workbench, dataset: Any) -> None:
    """Lay out the box inside the Raters tab; `dataset` is the tab's dataset picker."""
    with gr.Accordion("Rating guide", open=False, elem_id="guide-box"):
        gr.Markdown(GUIDE_NOTE, elem_id="guide-note")
        text = gr.Textbox(label="Guide (Markdown)", lines=8, max_lines=30, elem_id="guide-text")
        examples = gr.Textbox(
            label="Examples (SAMPLE:CP:PF:NOTE, one per line)",
            lines=3,
            max_lines=MAX_EXAMPLES,
            elem_id="guide-examples",
        )
        with gr.Row(equal_height=True):
            practice = gr.Number(
                0,
                precision=0,
                minimum=0,
                maximum=MAX_PRACTICE_TASKS,
                label="Practice tasks per rater (0 = none)",
                elem_id="guide-practice",
            )
            samples = gr.Textbox(
                label="Practice samples (gold tasks: keys or #ids, comma-separated)",
                max_lines=1,
                elem_id="guide-practice-samples",
            )
            skippable = gr.Checkbox(label="Raters may skip the practice round", elem_id="guide-skippable")
        with gr.Row(equal_height=True):
            save = gr.Button("Save the guide", variant="primary", scale=0, min_width=180, elem_id="guide-save")
            message = gr.Markdown(elem_id="guide-message", elem_classes=["action-message"])
        preview = gr.HTML(elem_id="guide-preview", label="Preview")
    fields = [text, examples, practice, samples, skippable, preview, message]

    def load(ds: str | None, request: gr.Request) -> dict:
        name = (ds or "").strip()
        if not name:
            return {message: ""}
        try:
            summary = wb.guides.summary(user=user_of(request), dataset=name)
            view = wb.guides.preview(user=user_of(request), dataset=name)
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}
        g = summary.guide
        if g is None:
            return {
                text: "",
                examples: "",
                practice: 0,
                samples: "",
                skippable: False,
                preview: "",
                message: f"dataset {name!r} has no rating guide yet",
            }
        return {
            text: g.text,
            examples: "\n".join(example_text(n, e) for n, e in summary.examples),
            practice: g.practice_tasks,
            samples: ", ".join(summary.practice),
            skippable: g.practice_skippable,
            preview: view.html if view else "",
            message: (
                f"rating guide of {name!r}: version {g.version} of {summary.versions}, "
                f"by {g.created_by or 'a local process'}"
            ),
        }

    def on_save(ds, body, lines, n, picked, skip, request: gr.Request) -> dict:
        name = (ds or "").strip()
        if not name:
            return {message: "⚠ pick a dataset first"}
        try:
            number = int(n) if n is not None else 0
        except (TypeError, ValueError):
            return {message: "⚠ the number of practice tasks must be a whole number"}
        try:
            summary = wb.guides.set_guide(
                user=user_of(request),
                dataset=name,
                text=body or "",
                examples=[line for line in (lines or "").splitlines() if line.strip()],
                practice_tasks=number,
                practice_samples=[p.strip() for p in (picked or "").split(",") if p.strip()],
                practice_skippable=bool(skip),
            )
        except WorkbenchError as exc:
            return {message: f"⚠ not saved: {exc}"}
        g = summary.guide
        assert g is not None
        saved = (
            f"saved version {g.version}: {len(summary.examples)} example(s), "
            f"practice round of {g.practice_tasks} task(s)"
        )
        return {**load(name, request), message: saved}

    save.click(on_save, [dataset, text, examples, practice, samples, skippable], fields, api_name="guide_save")
    dataset.change(load, [dataset], fields, api_name="guide_load")
