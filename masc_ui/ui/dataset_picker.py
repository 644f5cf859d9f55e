"""The dataset picker of the admin analysis views (Leaderboard, the Agreement tab's pairwise section): a dropdown
whose choices are the stored datasets, refreshed each time its tab is opened."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from .users import user_of


def dataset_picker(elem_id: str, *, label: str = "Dataset") -> gr.Dropdown:
    return gr.Dropdown([], value=None, label=label, allow_custom_value=True, elem_id=elem_id)


def refresh_on_open(wb: Workbench, page: gr.Tab, picker: gr.Dropdown, message: gr.Markdown, api_name: str) -> None:
    """When `page` is opened, offer the stored datasets in `picker` (the current choice kept, else the first);
    a refusal or a database error goes to `message`."""

    def on_open(current, request: gr.Request):
        try:
            names = wb.samples.filters(user=user_of(request))["dataset"]
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"
        value = current if current in names else (names[0] if names else None)
        return gr.update(choices=names, value=value), "" if names else "no dataset is stored yet"

    page.select(on_open, [picker], [picker, message], api_name=api_name)
