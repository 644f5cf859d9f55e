"""The Rate tab's rating guide and practice round (`workbench.rating_guide`, `workbench.practice`): before a
rater's first task of a dataset with a guide (and again after the guide changes), the guide with its examples and
a "Start rating" button; then, when the dataset has one, the practice round, each answer followed by what was
expected; then the real tasks. The "Guide" button beside the tasks shows the guide again on demand.

The rating panel is hidden meanwhile (its keyboard keys are off while it is hidden, `page_assets.KEYBOARD_JS`); the
practice round answers to the same keys (digits and C / P on its scales, Enter to submit and then to go on), and
Enter on the guide presses its Start rating button. The
guide's Markdown comes rendered by the use case (no raw HTML, no images); prompts, notes and feedback are shown as
plain text (`plain_text.literal`). Nothing here names the dataset, a method or a metric."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.practice import PracticeTask
from ..workbench.rating_guide import MAX_EXAMPLES, GuideView
from ..workbench.ratings import ANCHORS, criterion_choices
from .feedback import warn
from .plain_text import literal
from .users import user_of

PRACTICE_KEYS = (
    "**Keyboard:** <span class='kbd'>0</span>–<span class='kbd'>4</span> score the highlighted scale · "
    "<span class='kbd'>C</span> / <span class='kbd'>P</span> pick a scale · <span class='kbd'>Enter</span> submit, "
    "then go on"
)
"""The practice round's keys (`page_assets.KEYBOARD_JS`), as the rating panel's `SHORTCUTS` say them."""
EXAMPLE_HEIGHT = 220
PRACTICE_HEIGHT = "clamp(190px, calc(100vh - 720px), 420px)"


@dataclass
class GuideState:
    """Per session (on the server): what the guide and practice panels show."""

    dataset: str | None = None
    """The dataset whose guide or practice round is on screen (never sent to the browser)."""
    version: int | None = None
    mode: str = ""
    """`first` (shown before rating: Start rating records it as read), `demand` (the Guide button), `practice`."""
    practice: int | None = None
    """The practice task on screen (its sample id; kept on the server)."""
    answered: bool = False


@dataclass
class GuideUI:
    """The components of the guide and practice panels."""

    state: Any
    guide_box: Any
    guide_title: Any
    guide_text: Any
    examples: list[tuple[Any, Any, Any, Any]] = field(default_factory=list)
    start: Any = None
    practice_box: Any = None
    p_header: Any = None
    p_prompt: Any = None
    p_refs: Any = None
    p_out: Any = None
    p_cp: Any = None
    p_pf: Any = None
    p_submit: Any = None
    p_skip: Any = None
    p_feedback: Any = None
    p_next: Any = None

    def outputs(self) -> list:
        slots = [c for slot in self.examples for c in slot]
        return [
            self.state,
            self.guide_box,
            self.guide_title,
            self.guide_text,
            *slots,
            self.start,
            self.practice_box,
            self.p_header,
            self.p_prompt,
            self.p_refs,
            self.p_out,
            self.p_cp,
            self.p_pf,
            self.p_submit,
            self.p_skip,
            self.p_feedback,
            self.p_next,
        ]


def build() -> GuideUI:
    """Lay out the (hidden) guide and practice panels; call inside the Rate tab, before its rating panel."""
    with gr.Column(visible=False, elem_id="rate-guide") as guide_box:
        guide_title = gr.Markdown(elem_id="rate-guide-title")
        guide_text = gr.HTML(elem_id="rate-guide-text")
        examples = []
        for i in range(MAX_EXAMPLES):
            with gr.Column(visible=False, elem_id=f"rate-guide-example-{i + 1}", elem_classes=["guide-example"]) as box:
                with gr.Row(equal_height=True):
                    refs = gr.Image(
                        label="Reference(s)", height=EXAMPLE_HEIGHT, interactive=False, min_width=200, buttons=[]
                    )
                    out = gr.Image(
                        label="Generated image", height=EXAMPLE_HEIGHT, interactive=False, min_width=200, buttons=[]
                    )
                text = gr.Markdown(latex_delimiters=[], elem_classes=["guide-example-text"])
            examples.append((box, refs, out, text))
        start = gr.Button("Start rating", variant="primary", elem_id="rate-guide-start")
    with gr.Column(visible=False, elem_id="rate-practice") as practice_box:
        p_header = gr.Markdown(elem_id="rate-practice-header")
        p_prompt = gr.Markdown(elem_id="rate-practice-prompt", latex_delimiters=[])
        with gr.Row(equal_height=True):
            p_refs = gr.Image(
                label="Reference(s) of the subject",
                height=PRACTICE_HEIGHT,
                interactive=False,
                min_width=240,
                buttons=["fullscreen"],
            )
            p_out = gr.Image(
                label="Generated image",
                height=PRACTICE_HEIGHT,
                interactive=False,
                min_width=240,
                buttons=["fullscreen"],
            )
        with gr.Row():
            p_cp = gr.Radio(criterion_choices("cp"), label=ANCHORS["cp"][0], elem_id="rate-practice-cp", min_width=300)
            p_pf = gr.Radio(criterion_choices("pf"), label=ANCHORS["pf"][0], elem_id="rate-practice-pf", min_width=300)
        p_feedback = gr.Markdown(elem_id="rate-practice-feedback", elem_classes=["action-message"], latex_delimiters=[])
        with gr.Row(equal_height=True):
            p_submit = gr.Button("Submit practice answer", variant="primary", elem_id="rate-practice-submit")
            p_next = gr.Button("Next", variant="primary", visible=False, elem_id="rate-practice-next")
            p_skip = gr.Button("Skip the practice round", visible=False, elem_id="rate-practice-skip")
    return GuideUI(
        gr.State(GuideState()),
        guide_box,
        guide_title,
        guide_text,
        examples,
        start,
        practice_box,
        p_header,
        p_prompt,
        p_refs,
        p_out,
        p_cp,
        p_pf,
        p_submit,
        p_skip,
        p_feedback,
        p_next,
    )


def guide_button() -> Any:
    """The "Guide" button of the rating panel."""
    return gr.Button("Guide", size="sm", elem_id="rate-guide-open", scale=0, min_width=80)


def example_text(prompt: str, answers: list[str], note: str) -> str:
    """An example's caption: its prompt, expected answers and why, as plain text in Markdown."""
    lines = [f"**Prompt:** {literal(prompt)}", *(f"- **Expected** {literal(a)}" for a in answers)]
    if note:
        lines += ["", f"*Why:* {literal(note)}"]
    return "\n".join(lines)


class GuideEvents:
    """The guide's and the practice round's handlers; each answers with a dict keyed by the guide's components
    (`GuideUI`), the rating panel (`panel`) and its message line (`message`)."""

    def __init__(self, wb: Workbench, ui: GuideUI, panel: Any, message: Any) -> None:
        self.wb, self.ui, self.panel, self.message = wb, ui, panel, message

    def hidden(self, gs: GuideState) -> dict:
        return {
            self.ui.state: gs,
            self.ui.guide_box: gr.update(visible=False),
            self.ui.practice_box: gr.update(visible=False),
        }

    def show_tasks(self, gs: GuideState, st: Any, msg: str | None = None) -> dict:
        gs.mode, gs.dataset, gs.practice = "", None, None
        if st is not None and st.sample_id is not None:
            st.shown_at = time.time()  # the time spent on a task counts from when the task shows
        out = {**self.hidden(gs), self.panel: gr.update(visible=True)}
        if msg is not None:
            out[self.message] = msg
        return out

    def show_guide(self, gs: GuideState, guide: GuideView, mode: str) -> dict:
        gs.mode, gs.dataset, gs.version = mode, guide.dataset, guide.version
        practice = ""
        if mode == "first" and guide.practice_tasks:
            practice = f" Then a practice round of {guide.practice_tasks} task(s) shows you what is expected."
        title = (
            "## Rating guide\nRead this before you start: it says how to score the tasks that follow." + practice
            if mode == "first"
            else "## Rating guide"
        )
        out = {
            **self.hidden(gs),
            self.ui.guide_box: gr.update(visible=True),
            self.ui.guide_title: title,
            self.ui.guide_text: guide.html,
            self.ui.start: gr.update(value="Start rating" if mode == "first" else "Back to rating"),
            self.panel: gr.update(visible=False),
        }
        for i, (box, refs, img, text) in enumerate(self.ui.examples):
            if i < len(guide.examples):
                e = guide.examples[i]
                out[box] = gr.update(visible=True)
                out[refs] = e.refs_picture
                out[img] = e.out
                out[text] = example_text(e.prompt, e.answers(), e.note)
            else:
                out[box] = gr.update(visible=False)
        return out

    def show_practice(self, gs: GuideState, task: PracticeTask) -> dict:
        gs.mode, gs.dataset, gs.practice, gs.answered = "practice", task.dataset, task.sample_id, False
        return {
            **self.hidden(gs),
            self.ui.practice_box: gr.update(visible=True),
            self.ui.p_header: f"### Practice task {task.number} of {task.of}\nYour practice answers are not ratings: "
            "after each one you see the expected answer. " + PRACTICE_KEYS,
            self.ui.p_prompt: f"**Prompt:** {literal(task.view.prompt)}",
            self.ui.p_refs: task.view.refs_picture,
            self.ui.p_out: task.view.out,
            self.ui.p_cp: gr.update(value=None, interactive=True),
            self.ui.p_pf: gr.update(value=None, interactive=True),
            self.ui.p_submit: gr.update(visible=True),
            self.ui.p_next: gr.update(visible=False),
            self.ui.p_skip: gr.update(visible=task.skippable),
            self.ui.p_feedback: "",
            self.panel: gr.update(visible=False),
        }

    def step(self, gs: GuideState, st: Any, user: str) -> dict:
        """What comes before the rater's next task: the guide, the practice round, or the tasks."""
        found = self.wb.guides.next_step(user)
        if found.kind == "guide" and found.guide is not None:
            return self.show_guide(gs, found.guide, "first")
        if found.kind == "practice" and found.dataset is not None:
            task = self.wb.practice.next_task(user, found.dataset)
            if task is not None:
                return self.show_practice(gs, task)
        return self.show_tasks(gs, st)

    def on_open(self, gs: GuideState, st: Any, request: gr.Request):
        user = user_of(request)
        if user is None:
            return self.hidden(gs)
        if gs.mode == "practice" and gs.practice is not None:
            return {self.ui.state: gs}  # a practice task on screen stays as it is
        try:
            return self.step(gs, st, user)
        except WorkbenchError as exc:
            return {**self.show_tasks(gs, st), self.message: warn(exc)}

    def on_answered(self, gs: GuideState, st: Any, request: gr.Request):
        """After an answer: the guide or practice round of the new task's dataset when it is due (one read)."""
        user = user_of(request)
        if user is None or st is None or st.sample_id is None:
            return {self.ui.state: gs}
        try:
            found = self.wb.guides.step_before(user, st.sample_id)
            if found.kind == "guide" and found.guide is not None:
                return self.show_guide(gs, found.guide, "first")
            if found.kind == "practice" and found.dataset is not None:
                task = self.wb.practice.next_task(user, found.dataset)
                if task is not None:
                    return self.show_practice(gs, task)
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.message: warn(exc)}
        return {self.ui.state: gs}

    def on_start(self, gs: GuideState, st: Any, request: gr.Request):
        user = user_of(request)
        if user is None:
            return self.hidden(gs)
        try:
            if gs.mode == "first" and gs.dataset is not None and gs.version is not None:
                self.wb.guides.mark_read(user, gs.dataset, gs.version)
                return self.step(gs, st, user)
            return self.show_tasks(gs, st)
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.message: warn(exc), self.ui.guide_title: warn(exc)}

    def on_guide(self, gs: GuideState, st: Any, request: gr.Request):
        user = user_of(request)
        if user is None:
            return self.hidden(gs)
        try:
            guide = self.wb.guides.guide_for_task(user, getattr(st, "sample_id", None))
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.message: warn(exc)}
        if guide is None:
            return {self.ui.state: gs, self.message: "there is no rating guide for this task"}
        return self.show_guide(gs, guide, "demand")

    def on_practice_answer(self, gs: GuideState, cp: Any, pf: Any, request: gr.Request):
        user = user_of(request)
        if user is None or gs.practice is None or gs.dataset is None or gs.answered:
            return {self.ui.state: gs, self.ui.p_feedback: warn("there is no practice task on screen")}
        try:
            done = self.wb.practice.answer(user, gs.dataset, gs.practice, {"cp": cp, "pf": pf})
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.ui.p_feedback: warn(f"not saved: {exc}")}
        gs.answered = True
        return {
            self.ui.state: gs,
            self.ui.p_feedback: "<br>".join(literal(line) for line in done.text().splitlines()),
            self.ui.p_cp: gr.update(interactive=False),
            self.ui.p_pf: gr.update(interactive=False),
            self.ui.p_submit: gr.update(visible=False),
            self.ui.p_next: gr.update(visible=True, value="Start rating" if done.left == 0 else "Next practice task"),
        }

    def on_practice_next(self, gs: GuideState, st: Any, request: gr.Request):
        user = user_of(request)
        if user is None:
            return self.hidden(gs)
        try:
            return self.step(gs, st, user)
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.ui.p_feedback: warn(exc)}

    def on_practice_skip(self, gs: GuideState, st: Any, request: gr.Request):
        user = user_of(request)
        if user is None or gs.dataset is None:
            return self.hidden(gs)
        try:
            self.wb.practice.skip(user, gs.dataset)
            return self.step(gs, st, user)
        except WorkbenchError as exc:
            return {self.ui.state: gs, self.ui.p_feedback: warn(exc)}


def wire(
    wb: Workbench,
    ui: GuideUI,
    page: gr.Tab,
    panel: Any,
    task_state: Any,
    message: Any,
    open_guide: Any,
    answers: dict[str, Any] | None = None,
) -> None:
    """Register the guide's events: on opening the tab (beside the rating panel's own), after each answer (`answers`:
    the rating panel's answer events by name; the next task may be the first of a dataset with a guide), Start rating, the
    Guide button, and the practice round's answers. `panel` is the rating panel, `task_state` its `TaskState`,
    `message` its message line, `open_guide` the Guide button."""
    outputs = [*ui.outputs(), panel, message]

    events = GuideEvents(wb, ui, panel, message)

    both = [ui.state, task_state]
    page.select(events.on_open, both, outputs, api_name="rate_guide_step")
    for name, event in (answers or {}).items():
        # straight to the handler, as the answers are (`rate_tab.ANSWER_QUEUE`); nothing is shown as pending
        event.then(
            events.on_answered, both, outputs, api_name=f"rate_guide_after_{name}", queue=False, show_progress="hidden"
        )
    ui.start.click(events.on_start, both, outputs, api_name="rate_guide_start")
    open_guide.click(events.on_guide, both, outputs, api_name="rate_guide_show")
    ui.p_submit.click(events.on_practice_answer, [ui.state, ui.p_cp, ui.p_pf], outputs, api_name="rate_practice_answer")
    ui.p_next.click(events.on_practice_next, both, outputs, api_name="rate_practice_next")
    ui.p_skip.click(events.on_practice_skip, both, outputs, api_name="rate_practice_skip")
