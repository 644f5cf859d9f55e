"""Rate tab: blind 0-4 ratings of the next assigned sample, keyboard first (see launch.KEYBOARD_JS)."""
from __future__ import annotations

import html
import time
from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench_store import ANCHORS, TaskView, criterion_choices

SHORTCUTS = ("**Keyboard:** <span class='kbd'>0</span>–<span class='kbd'>4</span> score the highlighted scale "
             "(concept preservation first, then prompt following) · <span class='kbd'>C</span> / "
             "<span class='kbd'>P</span> pick a scale · <span class='kbd'>Enter</span> submit · "
             "<span class='kbd'>S</span> skip · <span class='kbd'>F</span> flag · <span class='kbd'>B</span> back "
             "to the previous task")


@dataclass
class TaskState:
    """Per-session: the task on screen and when it appeared."""

    sample_id: int | None = None
    order: int | None = None
    shown_at: float = 0.0


def build(wb: Workbench) -> tuple:
    """Lay out the tab; returns (open handler, its outputs) so the app can show the next task on load."""
    with gr.Column(elem_id="rate-panel"):
        who = gr.Markdown(elem_id="rate-who")
        gr.Markdown(SHORTCUTS, elem_id="rate-shortcuts")
        prompt = gr.Markdown(elem_id="rate-prompt")
        with gr.Row(equal_height=True):
            refs = gr.Gallery(label="Reference(s) of the subject", columns=2, height=460, object_fit="contain",
                              elem_id="rate-refs", interactive=False, buttons=["fullscreen"])
            out = gr.Image(label="Generated image", height=460, interactive=False, elem_id="rate-out",
                           buttons=["fullscreen"])
        with gr.Row():
            cp = gr.Radio(criterion_choices("cp"), label=ANCHORS["cp"][0], elem_id="rate-cp")
            pf = gr.Radio(criterion_choices("pf"), label=ANCHORS["pf"][0], elem_id="rate-pf")
        with gr.Row():
            back = gr.Button("Back (B)", elem_id="rate-back")
            skip = gr.Button("Skip (S)", elem_id="rate-skip")
            flag = gr.Button("Flag a problem (F)", elem_id="rate-flag")
            submit = gr.Button("Submit (Enter)", variant="primary", elem_id="rate-submit")
        progress = gr.Markdown(elem_id="rate-progress")
        message = gr.Markdown(elem_id="rate-message")
    state = gr.State(TaskState())
    shown = [state, who, prompt, refs, out, cp, pf, progress, message]

    def user_of(request: gr.Request | None) -> str | None:
        return getattr(request, "username", None) if request is not None else None

    def render(user: str | None, task: TaskView | None, msg: str = ""):
        if user is None:
            note = ("**Log in to rate.** No rater logins are configured: set `MASC_USERS=alice:pw,...` or "
                    "`MASC_USERS_FILE` and restart the app; the app then asks for a login.")
            return TaskState(), note, "", [], None, None, None, "", msg
        who_md = f"Rating as **{html.escape(user)}**"
        try:
            prog = wb.records.progress(user).text()
        except WorkbenchError as exc:
            prog = f"⚠ progress unavailable: {exc}"
        if task is None:
            return TaskState(), who_md, "**No task left for you.** Thank you!", [], None, None, None, prog, msg
        prompt_md = f"### Prompt\n> {html.escape(task.prompt)}"
        status_note = f" (your earlier answer: {task.status})" if task.status else ""
        return (TaskState(task.sample_id, task.presentation_order, time.time()), who_md + status_note, prompt_md,
                task.refs, task.out, task.scores.get("cp"), task.scores.get("pf"), prog, msg)

    def on_open(request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None)
        try:
            return render(user, wb.records.next_task(user))
        except WorkbenchError as exc:
            return render(user, None, f"⚠ {exc}")

    def answer(status: str):
        def handler(st: TaskState, cp_score, pf_score, request: gr.Request):
            user = user_of(request)
            if user is None:
                return render(None, None, "⚠ log in to rate")
            if st.sample_id is None:
                return (st, *[gr.update()] * 7, "⚠ there is no task on screen")
            seconds = max(0.0, time.time() - st.shown_at) if st.shown_at else None
            try:
                wb.records.submit(user, st.sample_id, {"cp": cp_score, "pf": pf_score}, status=status,
                                  seconds_spent=seconds, presentation_order=st.order)
            except WorkbenchError as exc:
                # Nothing was stored: keep the task and the chosen scores on screen so the rater can retry.
                return (st, *[gr.update()] * 7, f"⚠ not saved: {exc}")
            done = f"saved sample #{st.sample_id} ({status})"
            try:
                return render(user, wb.records.next_task(user), done)
            except WorkbenchError as exc:
                return render(user, None, f"{done}; ⚠ next task: {exc}")
        return handler

    def on_back(st: TaskState, request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None, "⚠ log in to rate")
        try:
            task = wb.records.previous_task(user, st.sample_id)
        except WorkbenchError as exc:
            return (st, *[gr.update()] * 7, f"⚠ {exc}")
        if task is None:
            return (st, *[gr.update()] * 7, "this is your first task: there is nothing before it")
        return render(user, task, f"back to sample #{task.sample_id}: change the scores and submit")

    submit.click(answer("rated"), [state, cp, pf], shown, concurrency_limit=None, api_name="rate_submit")
    skip.click(answer("skipped"), [state, cp, pf], shown, concurrency_limit=None, api_name="rate_skip")
    flag.click(answer("flagged"), [state, cp, pf], shown, concurrency_limit=None, api_name="rate_flag")
    back.click(on_back, [state], shown, concurrency_limit=None, api_name="rate_back")
    return on_open, shown
