"""The scorer catalogue in the Score tab: metric choices labelled with their model's size and the catalogue
explanations (VQAScore's question and P(Yes)/P(No), ITMScore's P(match),
FaceSim's faces and aligned crops, FaceScore's faces with scores).

The Score tab hooks these in with a few lines (`metric_choices` for its checkbox group, `build` under MaSC's
Explain). Every handler here is registered on the app and so wrapped by `roles.guard_endpoints`
(admin-only, like the rest of the Score tab); the use case checks the role again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench, sample_fingerprint
from ..workbench.model_sizes import metric_size_text
from .gpu import gpu
from .staleness import CATALOGUE_LABEL, ResultOutputs, stale_note
from .users import user_of

EXPLAIN_API = "explain_catalogue"
"""Api name of the catalogue explanation (rate-limited as a model call, `roles.HEAVY`)."""
RESULT = "catalogue explanation"
"""What the explanation is called in the "out of date" notes (`staleness.RESULTS`)."""
SIZES_NOTE = (
    "Sizes: the model each metric loads on first use (once per process, with a progress message); "
    "demo checkpoints are tiny random weights."
)


@dataclass
class CataloguePanel:
    explain: gr.Button
    stale: gr.HTML
    """The "out of date" note of the explanation, next to it (the Score tab's note under Run says it too)."""
    pictures: gr.Gallery
    notes: gr.Markdown
    explained: Any = None
    """The explain button's click event (the Score tab chains its "out of date" check to it)."""


def metric_choices(wb: Workbench, specs: Sequence[Any]) -> list[tuple[str, str]]:
    """(label, metric name) of each spec: the display name, and its model's size when it has a checkpoint
    (`model_sizes.metric_size_text`), e.g. `VQAScore · demo checkpoint 2.1 MB`."""
    choices = []
    for spec in specs:
        size = metric_size_text(spec, wb.settings)
        choices.append((f"{spec.display_name} · {size}" if size else spec.display_name, spec.name))
    return choices


def build(
    wb: Workbench,
    sample_of: Callable[..., Any],
    inputs: list,
    metrics: gr.CheckboxGroup,
    status: gr.Markdown,
    computed: gr.State,
    stale: gr.HTML,
) -> CataloguePanel:
    """The catalogue explanation: a button, a gallery of the pictures, the text. `sample_of(*inputs)` is the Score
    tab's sample on screen; `metrics` its metric selection (the explanation covers the chosen catalogue metrics,
    with Run's values when Run scored the same selection); `computed` and `stale` the Score tab's fingerprints of
    the results shown and its "out of date" note (`staleness`), which the explanation follows like every result."""
    gr.Markdown(SIZES_NOTE, elem_id="metric-sizes-note")
    explain = gr.Button(CATALOGUE_LABEL, elem_id="explain-catalogue")
    here = gr.HTML(elem_id="catalogue-stale")
    pictures = gr.Gallery(
        label="Faces found, aligned face crops, face scores",
        columns=4,
        object_fit="contain",
        interactive=False,
        elem_id="catalogue-pictures",
        buttons=["download"],
        height="auto",
    )
    notes = gr.Markdown(elem_id="catalogue-notes")
    panel = CataloguePanel(explain, here, pictures, notes)
    panel.explained = explain.click(
        explain_handler(wb, sample_of, panel, ResultOutputs(status, computed, stale)),
        [*inputs, metrics, computed],
        [pictures, notes, status, computed, stale, here],
        concurrency_limit=2,
        api_name=EXPLAIN_API,
    )
    return panel


def stale_here(now: str | None, computed: Any) -> str:
    """The note next to the explanation when it was computed on another sample than the one (fingerprint `now`) on
    screen (`staleness.stale_note` of this result only)."""
    return stale_note(now, computed, [RESULT], element_id="catalogue-stale-note")


def explain_handler(
    wb: Workbench,
    sample_of: Callable[..., Any],
    panel: CataloguePanel,
    score: ResultOutputs,
) -> Callable[..., dict]:
    """The Explain handler: (the Score tab's six inputs: reference, more references, output, prompt, subject, mask
    session; the metric names; the fingerprints of the results shown; request, progress) -> the panel's pictures and
    notes, the note here, and the Score tab's status line, fingerprints and "out of date" note under Run (`score`).
    A bad input or a refused role is a message, never a traceback; the explanation shown is then gone, and so is its
    fingerprint (the note under Run is left as it is)."""

    @gpu
    def on_explain_catalogue(
        ref,
        extra,
        out,
        prompt_text,
        subject_text,
        session,
        names,
        fingerprints,
        request: gr.Request,
        progress=gr.Progress(),
    ) -> dict:
        try:
            sample = sample_of(ref, extra, out, prompt_text, subject_text, session)
            found = wb.scoring.explain_catalogue(
                sample, names or None, user=user_of(request), progress=lambda f, what: progress(f, desc=what)
            )
        except WorkbenchError as exc:
            return {
                panel.pictures: [],
                panel.notes: f"⚠ {exc}",
                panel.stale: "",
                **score.answer(wb.status().line(), fingerprints, RESULT, None),
            }
        return {
            panel.pictures: [(p.image, p.caption) for p in found.pictures],
            panel.notes: found.markdown(),
            panel.stale: "",
            **score.answer(wb.status().line(), fingerprints, RESULT, sample_fingerprint(sample)),
        }

    return on_explain_catalogue
