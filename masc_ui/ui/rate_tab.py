"""Rate tab: blind 0-4 ratings of the next assigned sample, keyboard first (see launch.KEYBOARD_JS)."""
from __future__ import annotations

import html
import time
from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.ratings import ANCHORS, RaterProgress, TaskView, criterion_choices
from .users import user_of
from .video_media import build_player, task_media

RATING_CONCURRENCY = 32
"""Rating events of different raters handled at once (each is a query and a write, milliseconds)."""
SHORTCUTS = ("**Keyboard:** <span class='kbd'>0</span>–<span class='kbd'>4</span> score the highlighted scale "
             "(concept preservation first, then prompt following) · <span class='kbd'>C</span> / "
             "<span class='kbd'>P</span> pick a scale · <span class='kbd'>Enter</span> submit · "
             "<span class='kbd'>S</span> skip · <span class='kbd'>F</span> flag · <span class='kbd'>B</span> back "
             "to the previous task")


@dataclass
class TaskState:
    """Per-session (kept on the server): the task on screen, the opaque token the browser knows it by, and
    when it appeared. Updated in place, so a rater's next event sees the task the previous one moved on to."""

    sample_id: int | None = None
    order: int | None = None
    shown_at: float = 0.0
    token: str = ""

    def show(self, task: "TaskView | None") -> None:
        self.sample_id = None if task is None else task.sample_id
        self.order = None if task is None else task.presentation_order
        self.shown_at = time.time() if task is not None else 0.0
        self.token = "" if task is None else task.token


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
            player = build_player(460)
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
    # The opaque token of the task the browser shows (never the sample id), sent back with every answer: an answer
    # given to a task that is no longer the session's current one (a second key pressed before the first answer
    # came back, a response lost on the way) is refused instead of being stored under the wrong sample.
    on_screen = gr.Textbox(visible=False, elem_id="rate-on-screen")
    shown = [state, on_screen, who, prompt, refs, out, cp, pf, progress, player, message]
    keep = [gr.update()] * (len(shown) - 2)

    def render(user: str | None, task: TaskView | None, msg: str = "", st: TaskState | None = None,
               progress: RaterProgress | None = None):
        st = st if st is not None else TaskState()
        st.show(task if user is not None else None)
        if user is None:
            note = ("**Log in to rate.** No rater logins are configured: set `MASC_USERS=alice:pw,...` or "
                    "`MASC_USERS_FILE` and restart the app; the app then asks for a login.")
            return st, "", note, "", [], None, None, None, "", gr.update(value=None, visible=False), msg
        who_md = f"Rating as **{html.escape(user)}**"
        try:
            prog = (progress or wb.ratings.progress(user)).text()
        except WorkbenchError as exc:
            prog = f"⚠ progress unavailable: {exc}"
        if task is None:
            image, video = task_media(None)
            return st, "", who_md, "**No task left for you.** Thank you!", [], image, None, None, prog, video, msg
        prompt_md = f"### Prompt\n> {html.escape(task.prompt)}"
        status_note = f" (your earlier answer: {task.status})" if task.status else ""
        image, video = task_media(task)
        return (st, task.token, who_md + status_note, prompt_md,
                task.refs, image, task.scores.get("cp"), task.scores.get("pf"), prog, video, msg)

    def _next(user: str):
        task, prog = wb.ratings.next_task_and_progress(user)
        return task, "", None, prog

    def on_open(request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None)
        try:
            with wb.ratings.one_at_a_time(user):
                return render(user, *_next(user))
        except WorkbenchError as exc:
            return render(user, None, f"⚠ {exc}")

    def answer(status: str):
        def handler(st: TaskState, screen: str, cp_score, pf_score, request: gr.Request):
            user = user_of(request)
            if user is None:
                return render(None, None, "⚠ log in to rate")
            with wb.ratings.one_at_a_time(user):
                if st.sample_id is None:
                    return (st, *keep, "⚠ there is no task on screen")
                if not screen or screen != st.token:
                    return (st, *keep, "⚠ nothing saved: the task changed while you answered; "
                                       "check the task shown now and answer it")
                seconds = max(0.0, time.time() - st.shown_at) if st.shown_at else None
                try:
                    wb.ratings.submit(user, st.sample_id, {"cp": cp_score, "pf": pf_score}, status=status,
                                      seconds_spent=seconds, presentation_order=st.order)
                except WorkbenchError as exc:
                    # Nothing was stored: keep the task and the chosen scores on screen so the rater can retry.
                    return (st, *keep, f"⚠ not saved: {exc}")
                done = f"saved your answer ({status})"
                try:
                    task, prog = wb.ratings.next_task_and_progress(user)
                    return render(user, task, done, st, prog)
                except WorkbenchError as exc:
                    return render(user, None, f"{done}; ⚠ next task: {exc}", st)
        return handler

    def on_back(st: TaskState, request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None, "⚠ log in to rate")
        with wb.ratings.one_at_a_time(user):
            try:
                task = wb.ratings.previous_task(user, st.sample_id)
            except WorkbenchError as exc:
                return (st, *keep, f"⚠ {exc}")
            if task is None:
                return (st, *keep, "this is your first task: there is nothing before it")
            return render(user, task, "back to your previous task: change the scores and submit", st)

    # Each rater's events run one at a time (`RatingTasks.one_at_a_time`, a lock per rater, the task state
    # updated in place): a Skip pressed right after Submit sees the task Submit moved on to, and the token check
    # above refuses it. Different raters are served in parallel, apart from the heavy work of the Score tab.
    one_at_a_time = dict(concurrency_id="rating", concurrency_limit=RATING_CONCURRENCY)
    submit.click(answer("rated"), [state, on_screen, cp, pf], shown, api_name="rate_submit", **one_at_a_time)
    skip.click(answer("skipped"), [state, on_screen, cp, pf], shown, api_name="rate_skip", **one_at_a_time)
    flag.click(answer("flagged"), [state, on_screen, cp, pf], shown, api_name="rate_flag", **one_at_a_time)
    back.click(on_back, [state], shown, api_name="rate_back", **one_at_a_time)
    return on_open, shown
