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
from .rate_guide import GuideUI, guide_button, wire
from .rate_guide import build as build_guide
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


LOG_IN = (
    "**Log in to rate.** No rater logins are configured: set `MASC_USERS=alice:pw,...` or "
    "`MASC_USERS_FILE` and restart the app; the app then asks for a login."
)


@dataclass
class RateScreen:
    """The tab's components (`layout`): what `render` fills in for a task, the answers sent back, the buttons, and
    the rating guide's panels and button (`rate_guide`)."""

    guide: GuideUI
    panel: gr.Column
    """The rating panel (hidden while the guide or the practice round is shown)."""
    open_guide: gr.Button
    state: gr.State
    on_screen: gr.Textbox
    """The opaque token of the task the browser shows (never the sample id), sent back with every answer: an answer
    given to a task that is no longer the session's current one (a second key pressed before the first answer came
    back, a response lost on the way) is refused instead of being stored under the wrong sample."""
    who: gr.Markdown
    progress: gr.Markdown
    prompt: gr.Markdown
    refs: gr.Image
    out: gr.Image
    player: gr.Video
    cp: gr.Radio
    pf: gr.Radio
    reason: gr.Textbox
    message: gr.Markdown
    back: gr.Button
    skip: gr.Button
    submit: gr.Button
    flag: gr.Button
    form: gr.Column
    """The task, its answers and buttons: hidden, with the shortcuts and the Guide button, once a crowd study
    participant has finished (`study_page.finished_note`)."""
    keys_box: gr.Accordion

    @property
    def shown(self) -> list:
        """Every output of the tab's events, in the order the page receives them (`bench/rating_load.py` reads the
        token second)."""
        return [
            self.state,
            self.on_screen,
            self.who,
            self.prompt,
            self.refs,
            self.out,
            self.cp,
            self.pf,
            self.reason,
            self.player,
            self.progress,
            self.form,
            self.keys_box,
            self.open_guide,
            self.message,  # last: what a client of the API reads first
        ]

    def form_visible(self, visible: bool) -> dict:
        """The rating form, the shortcuts and the Guide button shown (everybody with a task, or none left) or hidden
        (a crowd study participant who has finished sees the finished page alone)."""
        return {block: gr.update(visible=visible) for block in (self.form, self.keys_box, self.open_guide)}


def build(wb: Workbench, page: gr.Tab) -> tuple:
    """Lay out the tab inside `page` (its task is shown again when the rater comes back to it, `page.select`);
    returns (open handler, its outputs) so the app can show the next task on load."""
    ui = layout(wb)
    # Each rater's events run one at a time (`RatingTasks.one_at_a_time`, a lock per rater, the task state
    # updated in place): a Skip pressed right after Submit sees the task Submit moved on to, and the token check
    # refuses it. Different raters' events are served in parallel, each posted straight to its handler
    # (`ANSWER_QUEUE`), their queries on the event loop for SQLite (`on_event_loop`), in worker threads for
    # PostgreSQL; each handler postprocesses its own outputs (`postprocessed_here`).
    # Every endpoint here is named `rate_*`: the only ones a rater may call (`roles.guard_endpoints`).
    one_at_a_time = (
        dict(queue=False) if ANSWER_QUEUE is None else dict(concurrency_id="rating", concurrency_limit=ANSWER_QUEUE)
    )
    one_at_a_time["postprocess"] = False
    inputs = [ui.state, ui.on_screen, ui.cp, ui.pf, ui.reason]
    shown = ui.shown
    answers = {
        "submit": ui.submit.click(on_answer(wb, ui, "rated"), inputs, shown, api_name="rate_submit", **one_at_a_time),
        "skip": ui.skip.click(on_answer(wb, ui, "skipped"), inputs, shown, api_name="rate_skip", **one_at_a_time),
        "flag": ui.flag.click(on_answer(wb, ui, "flagged"), inputs, shown, api_name="rate_flag", **one_at_a_time),
        "flag_by_enter": ui.reason.submit(
            on_answer(wb, ui, "flagged"), inputs, shown, api_name="rate_flag_by_enter", **one_at_a_time
        ),
    }
    for event in (
        page.select(on_return(wb, ui), [ui.state], shown, api_name="rate_open"),
        *answers.values(),
        ui.back.click(on_back(wb, ui), [ui.state], shown, api_name="rate_back", **one_at_a_time),
    ):
        event.then(None, js=SETTLE_JS)
    wire(wb, ui.guide, page, ui.panel, ui.state, ui.message, ui.open_guide, answers)
    return on_open(wb, ui), shown


def layout(wb: Workbench) -> RateScreen:
    """The tab's components: the guide's panels, then the rating panel (who and progress, the prompt, the references
    and the output, the two scales, the buttons, the flag's reason, the message, the shortcuts)."""
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
    return RateScreen(
        guide=guide,
        panel=panel,
        open_guide=open_guide,
        state=gr.State(TaskState()),
        on_screen=gr.Textbox(visible=False, elem_id="rate-on-screen"),
        who=who,
        progress=progress,
        prompt=prompt,
        refs=refs,
        out=out,
        player=player,
        cp=cp,
        pf=pf,
        reason=reason,
        message=message,
        back=back,
        skip=skip,
        submit=submit,
        flag=flag,
        form=form,
        keys_box=keys_box,
    )


def render(
    wb: Workbench,
    ui: RateScreen,
    user: str | None,
    task: TaskView | None,
    msg: str = "",
    st: TaskState | None = None,
    counts: RaterProgress | None = None,
) -> dict:
    """Every output of the tab for `task` shown to `user` (None: not logged in; no task: none left), with `msg`
    under the buttons; `st` remembers the task shown (a new one when None), `counts` is the user's progress (asked
    for when None)."""
    st = st if st is not None else TaskState()
    st.show(task if user is not None else None)
    if user is None:
        st.media = None  # the boxes are set by updates below: the next render sends updates again
        return {
            ui.state: st,
            ui.on_screen: "",
            ui.who: LOG_IN,
            ui.prompt: "",
            ui.refs: None,
            ui.out: None,
            ui.cp: None,
            ui.pf: None,
            ui.reason: "",
            ui.player: gr.update(value=None, visible=False),
            ui.progress: "",
            ui.message: msg,
            **ui.form_visible(True),
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
            **ui.form_visible(finished is None),
            ui.state: st,
            ui.on_screen: "",
            ui.who: who_md,
            ui.prompt: finished or "**No task left for you.** Thank you!",
            ui.refs: None,
            ui.out: image,
            ui.cp: None,
            ui.pf: None,
            ui.reason: "",
            ui.player: video,
            ui.progress: prog,
            ui.message: msg,
        }
    prompt_md = f"**Prompt:** {literal(task.prompt)}"
    if task.problem:
        msg = f"{msg}; {warn(task.problem)}" if msg else warn(task.problem)
    earlier = ""
    if task.status:
        why = f" — reason: “{literal(task.reason)}”" if task.reason else ""
        earlier = f" · your earlier answer: **{task.status}**{why}"
    return {
        **ui.form_visible(True),
        ui.state: st,
        ui.on_screen: task.token,
        ui.who: who_md + earlier,
        ui.prompt: prompt_md,
        ui.refs: task.refs_picture,
        ui.out: image,
        ui.cp: task.scores.get("cp"),
        ui.pf: task.scores.get("pf"),
        ui.reason: task.reason or "",
        ui.player: video,
        ui.progress: prog,
        ui.message: msg,
    }


def _rating_event(wb: Workbench, ui: RateScreen, handler: Callable) -> Callable:
    """`handler` as a rating answer event runs it: postprocessing its own outputs (`postprocessed_here`), on the
    event loop for an in-process database (`on_event_loop`)."""
    handler = postprocessed_here(handler, ui.shown)
    return on_event_loop(handler) if wb.ratings.database_in_process else handler


def on_open(wb: Workbench, ui: RateScreen) -> Callable[..., dict]:
    """The handler of the page's load: the user's next task."""

    def handler(request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None)
        try:
            with wb.ratings.one_at_a_time(user):
                task, prog = wb.ratings.next_task_and_progress(user)
                return render(wb, ui, user, task, "", None, prog)
        except WorkbenchError as exc:
            return render(wb, ui, user, None, warn(exc))

    handler.__name__ = "on_open"
    return handler


def on_return(wb: Workbench, ui: RateScreen) -> Callable[..., dict]:
    """The handler of the rater coming back to the tab: the task on screen stays as it is, with the scores chosen and
    not yet submitted, while it is still their next task; otherwise the next task is shown."""

    def handler(st: TaskState, request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None)
        try:
            with wb.ratings.one_at_a_time(user):
                task, prog = wb.ratings.next_task_and_progress(user)
                if task is not None and st.token and task.sample_id == st.sample_id:
                    return {ui.state: st, ui.progress: prog.text()}
                return render(wb, ui, user, task, "", st, prog)
        except WorkbenchError as exc:
            return render(wb, ui, user, None, warn(exc), st)

    handler.__name__ = "on_return"
    return handler


def on_answer(wb: Workbench, ui: RateScreen, status: str) -> Callable:
    """The handler of an answer stored as `status` (`rated`, `skipped`, `flagged`) for the task on screen, then the
    next task; refused (nothing stored, the task and the scores chosen stay on screen) when the token sent is not the
    task on screen or the use case refuses it."""

    def handler(st: TaskState, token: str, cp_score, pf_score, why, request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None, warn("log in to rate"))
        with wb.ratings.one_at_a_time(user):
            if st.sample_id is None:
                return {ui.state: st, ui.message: warn("there is no task on screen")}
            if not token or token != st.token:
                changed = "nothing saved: the task changed while you answered; check the task shown now and answer it"
                return {ui.state: st, ui.message: warn(changed)}
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
                return {ui.state: st, ui.message: warn(f"not saved: {exc}")}
            except WorkbenchError as exc:
                # Nothing was stored: keep the task and the chosen scores on screen so the rater can retry.
                return {ui.state: st, ui.message: warn(f"not saved: {exc}")}
            try:
                task, prog = wb.ratings.next_task_and_progress(user)
                return render(wb, ui, user, task, done.message, st, prog)
            except WorkbenchError as exc:
                return render(wb, ui, user, None, f"{done.message}; " + warn(f"next task: {exc}"), st)

    return _rating_event(wb, ui, handler)


def on_back(wb: Workbench, ui: RateScreen) -> Callable:
    """The handler of Back: the user's previous task with its answer, to change and submit, or to skip with the
    answer kept."""

    def handler(st: TaskState, request: gr.Request) -> dict:
        user = user_of(request)
        if user is None:
            return render(wb, ui, None, None, warn("log in to rate"))
        with wb.ratings.one_at_a_time(user):
            try:
                task = wb.ratings.previous_task(user, st.sample_id)
            except WorkbenchError as exc:
                return {ui.state: st, ui.message: warn(exc)}
            if task is None:
                return {ui.state: st, ui.message: "this is your first task: there is nothing before it"}
            return render(
                wb,
                ui,
                user,
                task,
                "back to your previous task: change the scores and submit, or press Skip to "
                "go on with your answer kept",
                st,
            )

    handler.__name__ = "on_back"
    return _rating_event(wb, ui, handler)
