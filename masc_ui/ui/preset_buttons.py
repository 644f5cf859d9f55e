"""The Score tab's preset buttons: a row under the metric checkboxes; each ticks its preset's metrics
(`metric_presets`) among those offered for the sample on screen, and says under the row which members it left out
and why (video metrics without an output video, a judge that cannot be asked). The last button ticks every metric
offered.

Every handler here is registered on the app and so wrapped by `roles.guard_endpoints` (admin-only, like the rest of
the Score tab).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from ..workbench import Workbench
from ..workbench.masks import MaskSession
from ..workbench.metric_presets import ALL_LABEL, ALL_PRESET, PRESETS, offered_preset, preset_label

PRESET_API = "preset_"
"""Api name prefix of the preset buttons (`preset_subject`, ..., `preset_all`)."""

Handler = Callable[[MaskSession | None], dict]


def build(wb: Workbench, metrics: gr.CheckboxGroup, session: gr.State) -> gr.Markdown:
    """The row of preset buttons under `metrics` and the note under it (returned); `session` is the Score tab's
    `MaskSession` state (whether an output video is loaded)."""
    with gr.Row(elem_id="metric-presets"):
        gr.Markdown("Presets:", elem_id="metric-presets-label")
        buttons = [(name, gr.Button(preset_label(name), size="sm", elem_id=f"preset-{name}")) for name in PRESETS]
        buttons.append((ALL_PRESET, gr.Button(ALL_LABEL, size="sm", elem_id=f"preset-{ALL_PRESET}")))
    note = gr.Markdown(elem_id="preset-note", elem_classes=["action-message"])
    for name, button in buttons:
        button.click(
            preset_handler(wb, name, metrics, note), [session], [metrics, note], api_name=f"{PRESET_API}{name}"
        )
    return note


def _video_loaded(session: Any) -> bool:
    video = getattr(session, "video", None)
    return bool(video is not None and video.loaded)


def preset_handler(wb: Workbench, name: str, metrics: gr.CheckboxGroup, note: gr.Markdown) -> Handler:
    """The click handler of preset `name` (`ALL_PRESET`: every metric offered): the metrics it ticks in `metrics` and
    what it left out and why in `note`."""

    def on_preset(session: MaskSession | None = None) -> dict:
        video = _video_loaded(session)
        offered = [spec.name for spec in wb.scoring.metric_specs(video=video)]
        if name == ALL_PRESET:
            return {metrics: offered, note: ""}
        ticked, why = offered_preset(name, offered, video=video)
        return {metrics: ticked, note: why}

    on_preset.__name__ = f"on_preset_{name}"
    return on_preset
