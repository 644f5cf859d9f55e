"""Crowd studies in the Raters tab (admins): create a study of the tab's dataset and see its secret link once, list
the studies with their participants started and finished, see a study's participants, close a study (the same use
cases as `masc-ui study`)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.studies import MAX_GOLD_RATE, MAX_TASKS, StudyLink
from .users import user_of

NOTE = (
    "A crowd study sends participants of a crowd platform (Prolific or another) to rate tasks of the dataset picked "
    "above, without a login: each opens the study's secret link with their participant id (`PROLIFIC_PID`, or "
    "`participant`), rates **tasks per participant** tasks (gold tasks mixed in at the study's gold rate) and then "
    "gets the **completion code** or is sent to the **redirect URL**. The same participant id resumes where it left "
    "off and never gets a second round. The link is shown **once**: only a hash of its secret is stored. A closed "
    "study takes no new participant. A participant's answers are stored under the rater `study<N>:<participant id>`."
)
PARTICIPANT_HEADERS = ["participant", "rater", "platform study", "platform session", "started", "finished"]


def build(wb: Workbench, page: gr.Tab, dataset: gr.Dropdown) -> None:
    """The panel, inside the Raters tab `page`; studies are created for the tab's `dataset`."""
    with gr.Accordion("Crowd studies", open=True, elem_id="study-box"):
        gr.Markdown(NOTE, elem_id="study-note")
        with gr.Row(equal_height=True):
            name = gr.Textbox(label="Study name (admins only)", elem_id="study-name", max_lines=1, min_width=180)
            tasks = gr.Number(
                20, precision=0, minimum=1, maximum=MAX_TASKS, label="Tasks per participant", elem_id="study-tasks"
            )
            gold_rate = gr.Number(
                0.0, minimum=0, maximum=MAX_GOLD_RATE, step=0.05, label="Gold rate (0-0.5)", elem_id="study-gold"
            )
        with gr.Row(equal_height=True):
            code = gr.Textbox(label="Completion code", placeholder="e.g. CRWD4821", elem_id="study-code", max_lines=1)
            redirect = gr.Textbox(
                label="Redirect URL (optional)",
                placeholder="https://app.prolific.com/submissions/complete?cc=CRWD4821",
                elem_id="study-redirect",
                max_lines=1,
                min_width=280,
            )
        with gr.Row(equal_height=True):
            create = gr.Button("Create the study", variant="primary", elem_id="study-create", scale=0, min_width=180)
            message = gr.Markdown(elem_id="study-message", elem_classes=["action-message"])
        link = gr.Textbox(
            label="The study's link (shown once: copy it now)",
            elem_id="study-link",
            interactive=False,
            visible=False,
            buttons=["copy"],
        )
        table = gr.Dataframe(interactive=False, wrap=False, elem_id="study-table", label="Studies")
        with gr.Row(equal_height=True):
            study_id = gr.Number(None, precision=0, minimum=1, label="Study id", elem_id="study-id", min_width=120)
            show = gr.Button("Show its participants", elem_id="study-show", scale=0, min_width=200)
            close = gr.Button("Close the study", variant="stop", elem_id="study-close", scale=0, min_width=160)
        participants = gr.Dataframe(
            interactive=False, wrap=True, elem_id="study-participants", label="Participants", visible=False
        )

    def listing(user: str | None) -> dict:
        headers, rows = wb.studies.table(user=user)
        return {"headers": headers, "data": rows}

    def on_open(request: gr.Request):
        try:
            return listing(user_of(request)), gr.update()
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    def on_create(ds, study_name, n, rate, completion, url, request: gr.Request):
        user = user_of(request)
        try:
            made = wb.studies.create(
                user=user,
                dataset=(ds or "").strip(),
                name=study_name or "",
                tasks=_whole(n, "tasks per participant"),
                gold_rate=float(rate if rate is not None else 0.0),
                completion_code=completion,
                redirect_url=url,
            )
            rows = listing(user)
        except WorkbenchError as exc:
            return gr.update(), gr.update(), f"⚠ {exc}"
        return (
            rows,
            gr.update(value=made.url(_base_of(request)), visible=True),
            f"study {made.study.id} is open: copy its link now (it is not shown again) and give it to the crowd "
            f"platform as the study's URL; {_what_they_get(made)}",
        )

    def on_show(sid, request: gr.Request):
        user = user_of(request)
        try:
            found = wb.studies.participants(user=user, study_id=_whole(sid, "the study id"))
            studies = listing(user)
        except WorkbenchError as exc:
            return gr.update(), gr.update(), f"⚠ {exc}"
        rows = [
            [
                p.participant,
                p.rater,
                p.platform_study or "",
                p.platform_session or "",
                f"{p.started_at:%Y-%m-%d %H:%M}",
                f"{p.finished_at:%Y-%m-%d %H:%M}" if p.finished_at else "",
            ]
            for p in found
        ]
        return (
            studies,
            gr.update(value={"headers": PARTICIPANT_HEADERS, "data": rows}, visible=True),
            f"study {int(sid)}: {len(rows)} participant(s), {sum(1 for r in rows if r[-1])} finished",
        )

    def on_close(sid, request: gr.Request):
        user = user_of(request)
        try:
            closed = wb.studies.close(user=user, study_id=_whole(sid, "the study id"))
            return listing(user), f"study {closed.id} is closed: its link takes no new participant"
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    page.select(on_open, None, [table, message], api_name="study_list")
    create.click(
        on_create, [dataset, name, tasks, gold_rate, code, redirect], [table, link, message], api_name="study_create"
    )
    show.click(on_show, [study_id], [table, participants, message], api_name="study_participants")
    close.click(on_close, [study_id], [table, message], api_name="study_close")


def _whole(value: object, what: str) -> int:
    from ..errors import InputError

    if value is None or isinstance(value, bool) or not float(value).is_integer():  # type: ignore[arg-type]
        raise InputError(f"give {what} as a whole number")
    return int(value)  # type: ignore[call-overload]


def _what_they_get(made: StudyLink) -> str:
    study = made.study
    parts = [f"participants rate {study.tasks_per_participant} task(s) of {study.dataset}"]
    if study.completion_code:
        parts.append(f"then see the code {study.completion_code}")
    if study.redirect_url:
        parts.append("then are sent to the redirect URL")
    return ", ".join(parts)


def _base_of(request: gr.Request) -> str:
    """The app's address as the admin's browser sees it: the page's own URL (its `Referer`), else its origin."""
    headers = getattr(request, "headers", None) or {}
    page = headers.get("referer") or ""
    parts = urlsplit(page)
    if parts.scheme in ("http", "https") and parts.netloc:
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return headers.get("origin") or ""
