"""The status line (profile, device, dtype, loaded models) and, in the demo profile, the warning banner."""

from __future__ import annotations

import html

import gradio as gr

from ..workbench import DEMO_BANNER, Workbench


def banner_html(wb: Workbench) -> str:
    """The demo warning: its first sentence always in view, the rest (what the weights are, how to get real
    ones, why the demo profile was chosen) one click away, so it does not push the controls off small screens."""
    status = wb.status()
    if not status.is_demo:
        return ""
    why = f" ({html.escape(status.profile.reason)})" if status.profile.reason else ""
    head, _, rest = DEMO_BANNER.partition(". ")
    return (
        f'<details class="demo-banner" id="demo-banner"><summary>⚠ {html.escape(head)}</summary>'
        f"{html.escape(rest)}{why}</details>"
    )


def storage_banner_html(wb: Workbench) -> str:
    """The permanent banner of a Space without persistent storage (empty elsewhere)."""
    warning = wb.status().storage_warning
    return f'<div class="demo-banner" id="storage-banner">⚠ {html.escape(warning)}</div>' if warning else ""


def status_text(wb: Workbench) -> str:
    return wb.status().line()


def build_banners(wb: Workbench) -> list[gr.HTML]:
    """Lay out the demo and storage banners (every role sees them); returns them."""
    return [
        gr.HTML(banner_html(wb), visible=wb.status().is_demo, elem_id="demo-banner-box"),
        gr.HTML(storage_banner_html(wb), visible=bool(wb.status().storage_warning), elem_id="storage-banner-box"),
    ]


def build_line(wb: Workbench) -> gr.Markdown:
    """Lay out the status line (the operator's: profile, device, models; admins only); returns it so other tabs
    can refresh it."""
    return gr.Markdown(status_text(wb), elem_classes=["status-line"], elem_id="status-line")
