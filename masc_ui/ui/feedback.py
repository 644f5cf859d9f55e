"""Feedback where the eye is: every button's message goes to a Markdown next to that button, and a problem is
also raised as a toast (`gr.Warning`), so it is seen wherever the user looks. Never `gr.Error`: it would mark
every output of the event with an "Error" badge."""
from __future__ import annotations

import gradio as gr

WARNING_SECONDS = 8
"""How long a toast stays up."""


def warn(problem: object) -> str:
    """Show `problem` (a message or an exception) as a toast and return it as the button's message, `⚠ ...`."""
    text = str(problem).removeprefix("⚠").strip()
    gr.Warning(text, duration=WARNING_SECONDS)
    return f"⚠ {text}"
