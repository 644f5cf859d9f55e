"""Feedback where the eye is: every button's message goes to a Markdown next to that button, and a problem is
also raised as a toast (`gr.Warning`), so it is seen wherever the user looks. Never `gr.Error`: it would mark
every output of the event with an "Error" badge."""

from __future__ import annotations

import gradio as gr
from gradio.context import LocalContext

WARNING_SECONDS = 8
"""How long a toast stays up."""


def warn(problem: object) -> str:
    """Show `problem` (a message or an exception) as a toast and return it as the button's message, `⚠ ...`.
    Only an event that went through Gradio's queue can show a toast; for one posted straight to its handler (the
    Rate tab's answers, `rate_tab.ANSWER_QUEUE`) Gradio would print the text to the server's log instead, so only
    the message is returned (the page brings a warning there into view, `page_assets.KEYBOARD_JS`)."""
    text = str(problem).removeprefix("⚠").strip()
    if LocalContext.event_id.get(None) is not None:
        gr.Warning(text, duration=WARNING_SECONDS)
    return f"⚠ {text}"
