"""Rate tab: blind 0-4 ratings of the next assigned sample, keyboard first (see page_assets.KEYBOARD_JS).

Tasks come only from datasets marked for rating. A skip never erases an answer given before (going back and
pressing S moves on, the answer kept); a flag needs a reason, typed in the box under the buttons. The browser
knows a task only by an opaque token, never by its sample id; messages name no sample."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio.data_classes import GradioModel, GradioRootModel
from gradio.utils import is_prop_update

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.ratings import ANCHORS, AnsweredElsewhere, RaterProgress, TaskView, criterion_choices
from . import study_page
from .feedback import warn
from .plain_text import literal
from .rate_guide import build as build_guide
from .rate_guide import guide_button, wire
from .users import user_of
from .video_media import build_player, media_kind, task_media

RATING_CONCURRENCY = 32
"""Queued rating events of different raters handled at once (the Rate pairs tab's; each is a query and a write,
milliseconds)."""
ANSWER_QUEUE: int | None = None
"""How the Rate tab's answer events (submit, skip, flag, back) reach their handler. None, the app: each is posted
straight to it (`queue=False`: one HTTP request answered with the outputs), not through Gradio's queue (a request to
join it, then the answer on an event stream), which costs the server CPU per answer under rating load (measured on
the Performance page, "Rating load"). Each rater's answers still run one at a time (`RatingTasks.one_at_a_time`
and the task token). A number: through the queue, at most that many at once (`bench/rating_load.py --modes global`
sets 1: every answer of every rater through one slot)."""


def on_event_loop(fn: Callable) -> Callable:
    """`fn` as a coroutine function, which Gradio runs on the server's event loop instead of handing it to a worker
    thread. For the rating events on an in-process database (SQLite: `RatingTasks.database_in_process`): each is a
    few milliseconds of queries that never wait on a network. In a worker thread, every query handed the interpreter
    lock to the event loop (busy with the other raters' requests under load) and waited to get it back, which about
    doubled the CPU time of the handler and of the requests around it (`bench/rating_load.py`, README "Rate tab
    under load"). The price: while one runs (milliseconds), the loop serves nothing else; it waits there for the
    answer's commit to reach the disk (a slow disk sync stalls every request) and for another writer of the same
    SQLite file (another process's import or batch transaction) to commit."""

    @functools.wraps(fn)
    async def run_on_loop(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return run_on_loop


def postprocessed_here(fn: Callable, outputs: list) -> Callable:
    """`fn` returning what Gradio would send for `outputs` (a dict keyed by component: those left out stay as they
    are), for an event registered with `postprocess=False`: each
    value (and the value inside a property update) put through its component's own `postprocess` here, in the
    handler's thread. Gradio otherwise hands every output to a worker thread of its own: a dozen hand-offs per
    rating answer, each trading the interpreter lock with the busy event loop under load (`bench/rating_load.py`).
    Session state passes as it is (Gradio never postprocesses it). The Rate tab's components postprocess alike
    whatever their visibility, so the component as built stands for the one a property update makes."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> tuple:
        values = fn(*args, **kwargs)
        if isinstance(values, dict):  # keyed by component: the components it leaves out stay as they are
            values = [values.get(block, gr.update()) for block in outputs]
        return tuple(_postprocessed(block, value) for block, value in zip(outputs, values, strict=True))

    return run


def _postprocessed(block: Any, value: Any) -> Any:
    if block.stateful:
        return value
    if is_prop_update(value):
        return {**value, "value": _postprocessed(block, value["value"])} if "value" in value else value
    done = block.postprocess(value)
    return done.model_dump() if isinstance(done, (GradioModel, GradioRootModel)) else done


SHORTCUTS = (
    "**Keyboard:** <span class='kbd'>0</span>–<span class='kbd'>4</span> score the highlighted scale "
    "(concept preservation first, then prompt following) · <span class='kbd'>C</span> / "
    "<span class='kbd'>P</span> pick a scale · <span class='kbd'>Enter</span> submit · "
    "<span class='kbd'>S</span> skip (an answer you gave before is kept) · <span class='kbd'>F</span> flag "
    "(type the reason first) · <span class='kbd'>B</span> back to the previous task"
)
SETTLE_JS = "() => { window.mascRateSettle && window.mascRateSettle(); }"
"""Run in the page after every event of the tab has answered: the highlight goes to the first scale without a score
(`page_assets.KEYBOARD_JS`)."""
IMAGE_HEIGHT = "clamp(190px, calc(100vh - 720px), 480px)"
"""Height of the rated images: what the window leaves after the scales and buttons (so that they stay in view on
an 800 x 900 screen, under the title row with Log out), between 190 and 480 pixels. Several references are shown
side by side in one picture."""


@dataclass
class TaskState:
    """Per-session (kept on the server): the task on screen, the opaque token the browser knows it by, and
    when it appeared. Updated in place, so a rater's next event sees the task the previous one moved on to."""

    sample_id: int | None = None
    order: int | None = None
    shown_at: float = 0.0
    token: str = ""
    media: str | None = None
    """Which output box the screen shows (`video_media.media_kind` of the task rendered last; None before)."""
    answered_as: tuple = ()
    """The stored answer the screen was built on (`TaskView.answered_as`), checked by `RatingTasks.submit`."""

    def show(self, task: TaskView | None) -> None:
        self.sample_id = None if task is None else task.sample_id
        self.order = None if task is None else task.presentation_order
        self.shown_at = time.time() if task is not None else 0.0
        self.token = "" if task is None else task.token
        self.answered_as = () if task is None else task.answered_as


def build(wb: Workbench, page: gr.Tab) -> tuple:
    """Lay out the tab inside `page` (its task is shown again when the rater comes back to it, `page.select`);
    returns (open handler, its outputs) so the app can show the next task on load."""
    on_loop = wb.ratings.database_in_process
    guide = build_guide()
    with gr.Column(elem_id="rate-panel") as panel:
        with gr.Row(equal_height=True):
            who = gr.Markdown(elem_id="rate-who", min_width=200, latex_delimiters=[])
            progress = gr.Markdown(elem_id="rate-progress", min_width=260)
            open_guide = guide_button()
        prompt = gr.Markdown(elem_id="rate-prompt", latex_delimiters=[])
        with gr.Column(elem_id="rate-form") as form:
            with gr.Row(equal_height=True):
                refs = gr.Image(
                    label="Reference(s) of the subject",
                    height=IMAGE_HEIGHT,
                    interactive=False,
                    elem_id="rate-refs",
                    buttons=["fullscreen"],
                    min_width=240,
                )
                out = gr.Image(
                    label="Generated image",
                    height=IMAGE_HEIGHT,
                    interactive=False,
                    elem_id="rate-out",
                    buttons=["fullscreen"],
                    min_width=240,
                )
                player = build_player(IMAGE_HEIGHT)
            with gr.Row():
                cp = gr.Radio(criterion_choices("cp"), label=ANCHORS["cp"][0], elem_id="rate-cp", min_width=300)
                pf = gr.Radio(criterion_choices("pf"), label=ANCHORS["pf"][0], elem_id="rate-pf", min_width=300)
            can_rate = wb.database.accounts.logins_enabled  # without logins nobody rates: no active answer buttons
            with gr.Row(equal_height=True):
                back = gr.Button("Back (B)", elem_id="rate-back", min_width=90, interactive=can_rate)
                skip = gr.Button("Skip (S)", elem_id="rate-skip", min_width=90, interactive=can_rate)
                submit = gr.Button(
                    "Submit (Enter)", variant="primary", elem_id="rate-submit", min_width=130, interactive=can_rate
                )
                flag = gr.Button("Flag (F)", elem_id="rate-flag", min_width=90, interactive=can_rate)
            reason = gr.Textbox(
                show_label=False,
                label="Reason for a flag",
                placeholder="Reason for a flag (needed to "
                "flag): what is wrong with this task, e.g. 'the output image is blank'",
                elem_id="rate-reason",
                max_lines=1,
                container=False,
            )
        message = gr.Markdown(elem_id="rate-message", elem_classes=["action-message"])
        with gr.Accordion("Keyboard shortcuts", open=False, elem_id="rate-shortcuts-box") as keys_box:
            gr.Markdown(SHORTCUTS, elem_id="rate-shortcuts")
    state = gr.State(TaskState())
    # The opaque token of the task the browser shows (never the sample id), sent back with every answer: an answer
    # given to a task that is no longer the session's current one (a second key pressed before the first answer
    # came back, a response lost on the way) is refused instead of being stored under the wrong sample.
    on_screen = gr.Textbox(visible=False, elem_id="rate-on-screen")
    # the message stays last: what a client of the API reads first
    shown = [
        state,
        on_screen,
        who,
        prompt,
        refs,
        out,
        cp,
        pf,
        reason,
        player,
        progress,
        form,
        keys_box,
        open_guide,
        message,
    ]
    # A crowd study participant who has finished sees the finished page alone: no rating form, no shortcuts, no
    # guide (`study_page.finished_note`); everybody else keeps the form, empty when no task is left.
    form_shown = {form: gr.update(visible=True), keys_box: gr.update(visible=True), open_guide: gr.update(visible=True)}
    form_hidden = {block: gr.update(visible=False) for block in form_shown}

    def render(
        user: str | None,
        task: TaskView | None,
        msg: str = "",
        st: TaskState | None = None,
        counts: RaterProgress | None = None,
    ) -> dict:
        st = st if st is not None else TaskState()
        st.show(task if user is not None else None)
        if user is None:
            note = (
                "**Log in to rate.** No rater logins are configured: set `MASC_USERS=alice:pw,...` or "
                "`MASC_USERS_FILE` and restart the app; the app then asks for a login."
            )
            st.media = None  # the boxes are set by updates below: the next render sends updates again
            return {
                state: st,
                on_screen: "",
                who: note,
                prompt: "",
                refs: None,
                out: None,
                cp: None,
                pf: None,
                reason: "",
                player: gr.update(value=None, visible=False),
                progress: "",
                message: msg,
                **form_shown,
            }
        who_md = f"Rating as **{literal(user)}**"
        try:
            prog = (counts or wb.ratings.progress(user)).text()
        except WorkbenchError as exc:
            prog = f"⚠ progress unavailable: {exc}"
        image, video = task_media(task, st.media)
        st.media = media_kind(task)
        if task is None:
            finished = study_page.finished_note(wb, user)
            return {
                **(form_shown if finished is None else form_hidden),
                state: st,
                on_screen: "",
                who: who_md,
                prompt: finished or "**No task left for you.** Thank you!",
                refs: None,
                out: image,
                cp: None,
                pf: None,
                reason: "",
                player: video,
                progress: prog,
                message: msg,
            }
        prompt_md = f"**Prompt:** {literal(task.prompt)}"
        if task.problem:
            msg = f"{msg}; {warn(task.problem)}" if msg else warn(task.problem)
        earlier = ""
        if task.status:
            why = f" — reason: “{literal(task.reason)}”" if task.reason else ""
            earlier = f" · your earlier answer: **{task.status}**{why}"
        return {
            **form_shown,
            state: st,
            on_screen: task.token,
            who: who_md + earlier,
            prompt: prompt_md,
            refs: task.refs_picture,
            out: image,
            cp: task.scores.get("cp"),
            pf: task.scores.get("pf"),
            reason: task.reason or "",
            player: video,
            progress: prog,
            message: msg,
        }

    def on_open(request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None)
        try:
            with wb.ratings.one_at_a_time(user):
                task, prog = wb.ratings.next_task_and_progress(user)
                return render(user, task, "", None, prog)
        except WorkbenchError as exc:
            return render(user, None, warn(exc))

    def on_return(st: TaskState, request: gr.Request):
        """The rater comes back to the tab: the task on screen stays as it is, with the scores chosen and not yet
        submitted, while it is still their next task; otherwise the next task is shown."""
        user = user_of(request)
        if user is None:
            return render(None, None)
        try:
            with wb.ratings.one_at_a_time(user):
                task, prog = wb.ratings.next_task_and_progress(user)
                if task is not None and st.token and task.sample_id == st.sample_id:
                    return {state: st, progress: prog.text()}
                return render(user, task, "", st, prog)
        except WorkbenchError as exc:
            return render(user, None, warn(exc), st)

    def answer(status: str):
        def handler(st: TaskState, screen: str, cp_score, pf_score, why, request: gr.Request):
            user = user_of(request)
            if user is None:
                return render(None, None, warn("log in to rate"))
            with wb.ratings.one_at_a_time(user):
                if st.sample_id is None:
                    return {state: st, message: warn("there is no task on screen")}
                if not screen or screen != st.token:
                    changed = (
                        "nothing saved: the task changed while you answered; check the task shown now and answer it"
                    )
                    return {state: st, message: warn(changed)}
                seconds = max(0.0, time.time() - st.shown_at) if st.shown_at else None
                try:
                    done = wb.ratings.submit(
                        user,
                        st.sample_id,
                        {"cp": cp_score, "pf": pf_score},
                        status=status,
                        seconds_spent=seconds,
                        presentation_order=st.order,
                        reason=why,
                        shown_as=st.answered_as,
                    )
                except AnsweredElsewhere as exc:
                    # Another tab of this rater answered the task: ask before replacing (Submit again), or keep (Skip).
                    st.answered_as = exc.now
                    return {state: st, message: warn(f"not saved: {exc}")}
                except WorkbenchError as exc:
                    # Nothing was stored: keep the task and the chosen scores on screen so the rater can retry.
                    return {state: st, message: warn(f"not saved: {exc}")}
                try:
                    task, prog = wb.ratings.next_task_and_progress(user)
                    return render(user, task, done.message, st, prog)
                except WorkbenchError as exc:
                    return render(user, None, f"{done.message}; " + warn(f"next task: {exc}"), st)

        handler = postprocessed_here(handler, shown)
        return on_event_loop(handler) if on_loop else handler

    def on_back(st: TaskState, request: gr.Request):
        user = user_of(request)
        if user is None:
            return render(None, None, warn("log in to rate"))
        with wb.ratings.one_at_a_time(user):
            try:
                task = wb.ratings.previous_task(user, st.sample_id)
            except WorkbenchError as exc:
                return {state: st, message: warn(exc)}
            if task is None:
                return {state: st, message: "this is your first task: there is nothing before it"}
            return render(
                user,
                task,
                "back to your previous task: change the scores and submit, or press Skip to "
                "go on with your answer kept",
                st,
            )

    on_back = postprocessed_here(on_back, shown)
    if on_loop:
        on_back = on_event_loop(on_back)

    # Each rater's events run one at a time (`RatingTasks.one_at_a_time`, a lock per rater, the task state
    # updated in place): a Skip pressed right after Submit sees the task Submit moved on to, and the token check
    # above refuses it. Different raters' events are served in parallel, each posted straight to its handler
    # (`ANSWER_QUEUE`), their queries on the event loop for SQLite (`on_event_loop`), in worker threads for
    # PostgreSQL; each handler postprocesses its own outputs (`postprocessed_here`).
    # Every endpoint here is named `rate_*`: the only ones a rater may call (`roles.guard_endpoints`).
    one_at_a_time = (
        dict(queue=False) if ANSWER_QUEUE is None else dict(concurrency_id="rating", concurrency_limit=ANSWER_QUEUE)
    )
    one_at_a_time["postprocess"] = False
    inputs = [state, on_screen, cp, pf, reason]
    answers = {
        "submit": submit.click(answer("rated"), inputs, shown, api_name="rate_submit", **one_at_a_time),
        "skip": skip.click(answer("skipped"), inputs, shown, api_name="rate_skip", **one_at_a_time),
        "flag": flag.click(answer("flagged"), inputs, shown, api_name="rate_flag", **one_at_a_time),
        "flag_by_enter": reason.submit(
            answer("flagged"), inputs, shown, api_name="rate_flag_by_enter", **one_at_a_time
        ),
    }
    for event in (
        page.select(on_return, [state], shown, api_name="rate_open"),
        *answers.values(),
        back.click(on_back, [state], shown, api_name="rate_back", **one_at_a_time),
    ):
        event.then(None, js=SETTLE_JS)
    wire(wb, guide, page, panel, state, message, open_guide, answers)
    return on_open, shown
