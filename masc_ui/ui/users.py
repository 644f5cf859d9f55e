"""The acting user of a Gradio request, as every use case takes it."""

from __future__ import annotations

import gradio as gr


def user_of(request: gr.Request | None) -> str | None:
    """The logged-in username of `request`; None when the app runs without logins."""
    return getattr(request, "username", None) if request is not None else None
