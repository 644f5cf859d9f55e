"""Browse and export tab: stored samples with latest metric values (headed by their display names) and mean
human ratings; mark a dataset for rating; open a sample in the Score tab (with every field and its masks);
download the export of the samples or of the pairwise judgments (`pairwise_export`). Messages appear next to the
button that caused them; an opening that fails stays here."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..imaging import InputVideo
from ..workbench import Workbench, sample_fingerprint
from ..workbench.browse import BROWSE_PAGE_SIZE, EXPORT_FORMATS
from ..workbench.masks import MaskSession, target_names
from ..workbench.video_session import VideoSession
from . import pairwise_export
from . import score_actions as act
from .feedback import warn
from .users import user_of
from .video_media import open_video, poster_preview

SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
"""File name suffix of an opened sample's image handed to the browser, by its stored media type."""


@dataclass
class BrowseTab:
    sample_id: gr.Textbox
    open: gr.Button
    refresh: gr.Button
    message: gr.Markdown
    open_msg: gr.Markdown
    on_refresh: object
    """Handler filling the table from the filter inputs (`inputs` -> `outputs`)."""
    inputs: list
    outputs: list


@dataclass
class BrowseView:
    """The Browse tab's components."""

    dataset: gr.Dropdown
    method: gr.Dropdown
    subject: gr.Dropdown
    sort: gr.Dropdown
    descending: gr.Checkbox
    refresh: gr.Button
    previous: gr.Button
    page: gr.Number
    following: gr.Button
    message: gr.Markdown
    rating_note: gr.Markdown
    mark: gr.Button
    unmark: gr.Button
    table: gr.Dataframe
    sample_id: gr.Textbox
    open_btn: gr.Button
    open_msg: gr.Markdown
    poster: gr.Image
    fmt: gr.Radio
    export: gr.Button
    download: gr.File
    export_msg: gr.Markdown


def _layout(wb: Workbench) -> BrowseView:
    """The tab's filters, table, sample row and export row, top to bottom."""
    with gr.Row():
        dataset = gr.Dropdown(
            [], value=None, label="Dataset", allow_custom_value=True, elem_id="browse-dataset", min_width=120
        )
        method = gr.Dropdown(
            [], value=None, label="Method", allow_custom_value=True, elem_id="browse-method", min_width=120
        )
        subject = gr.Dropdown(
            [], value=None, label="Subject", allow_custom_value=True, elem_id="browse-subject", min_width=120
        )
        sort = gr.Dropdown(["id"], value="id", label="Sort by", elem_id="browse-sort", min_width=120)
        descending = gr.Checkbox(False, label="Descending", elem_id="browse-desc", min_width=110)
    with gr.Row(equal_height=True):
        refresh = gr.Button("Refresh", elem_id="browse-refresh", scale=0, min_width=120)
        previous = gr.Button("◀ Previous page", elem_id="browse-prev", scale=0, min_width=140)
        page = gr.Number(1, label="Page", precision=0, minimum=1, elem_id="browse-page", scale=0, min_width=90)
        following = gr.Button("Next page ▶", elem_id="browse-next", scale=0, min_width=120)
        message = gr.Markdown(elem_id="browse-message", elem_classes=["action-message"], min_width=200)
    with gr.Row(equal_height=True, elem_id="rating-row"):
        rating_note = gr.Markdown(elem_id="browse-rating", min_width=260)
        mark = gr.Button("Mark for rating", size="sm", elem_id="browse-mark", scale=0, min_width=150)
        unmark = gr.Button("Stop rating tasks", size="sm", elem_id="browse-unmark", scale=0, min_width=150)
    table = gr.Dataframe(
        interactive=False,
        wrap=False,
        elem_id="browse-table",
        max_height=420,
        pinned_columns=1,
        show_row_numbers=False,
        max_chars=48,
    )
    with gr.Row(equal_height=False):
        with gr.Column(scale=2, min_width=320):
            with gr.Row(equal_height=True):
                sample_id = gr.Textbox(
                    "",
                    label="Sample id (or click a row)",
                    placeholder="pick a sample first",
                    max_lines=1,
                    elem_id="browse-sample-id",
                    min_width=160,
                )
                open_btn = gr.Button("Open in the Score tab", elem_id="browse-open", min_width=180)
            open_msg = gr.Markdown(elem_id="browse-open-message", elem_classes=["action-message"])
        poster = gr.Image(
            label="Its output (a video: the poster frame)",
            interactive=False,
            height=170,
            elem_id="browse-poster",
            buttons=[],
            scale=1,
            min_width=220,
        )
    with gr.Row(equal_height=False):
        fmt = gr.Radio(
            list(EXPORT_FORMATS),
            value="csv",
            label="Export format",
            elem_id="export-format",
            min_width=160,
            info="imagefolder: images, masks and metadata for Hugging Face datasets (a zip)",
        )
        export = gr.Button("Export", elem_id="export", min_width=120)
        download = gr.File(label="Download", interactive=False, elem_id="export-file", min_width=200, height=110)
    export_msg = gr.Markdown(elem_id="export-message", elem_classes=["action-message"])
    pairwise_export.build(wb, dataset)
    return BrowseView(
        dataset=dataset,
        method=method,
        subject=subject,
        sort=sort,
        descending=descending,
        refresh=refresh,
        previous=previous,
        page=page,
        following=following,
        message=message,
        rating_note=rating_note,
        mark=mark,
        unmark=unmark,
        table=table,
        sample_id=sample_id,
        open_btn=open_btn,
        open_msg=open_msg,
        poster=poster,
        fmt=fmt,
        export=export,
        download=download,
        export_msg=export_msg,
    )


class BrowseEvents:
    """The Browse tab's handlers; each answers with a dict keyed by the tab's components (`v`)."""

    def __init__(self, wb: Workbench, v: BrowseView) -> None:
        self.wb, self.v = wb, v

    def rating_state(self, ds: str | None, user: str | None) -> dict:
        """The rating row for dataset `ds`: what its mark means, and which of Mark / Stop works."""
        v = self.v
        infos = {d.name: d for d in self.wb.samples.datasets(user=user)}
        info = infos.get(ds or "")
        if info is None:
            marked = [n for n, d in infos.items() if d.for_rating]
            text = (
                "**Rating tasks** come from the datasets marked for rating: "
                + (", ".join(f"'{n}'" for n in marked) or "none yet")
                + ". Pick a dataset above to mark or unmark it."
            )
            return {v.rating_note: text, v.mark: gr.update(interactive=False), v.unmark: gr.update(interactive=False)}
        state = (
            "marked for rating: raters get its samples as tasks"
            if info.for_rating
            else "not marked for rating: raters get no tasks from it"
        )
        return {
            v.rating_note: f"**Dataset '{info.name}'** ({info.samples} samples) is {state}.",
            v.mark: gr.update(interactive=not info.for_rating),
            v.unmark: gr.update(interactive=info.for_rating),
        }

    def on_refresh(self, ds, me, su, sort_by, desc, page_no, request: gr.Request):
        v = self.v
        try:
            user = user_of(request)
            choices = self.wb.samples.filters(user=user)
            found = self.wb.samples.browse(
                user=user,
                dataset=ds or None,
                method=me or None,
                subject=su or None,
                sort=sort_by or "id",
                descending=bool(desc),
                page=page_no or 1,
                page_size=BROWSE_PAGE_SIZE,
            )
            rating = self.rating_state(ds, user)
        except WorkbenchError as exc:
            return {v.message: warn(exc)}
        return {
            v.page: found.page,
            v.dataset: gr.update(choices=[""] + choices["dataset"]),
            v.method: gr.update(choices=[""] + choices["method"]),
            v.subject: gr.update(choices=[""] + choices["subject"]),
            v.sort: gr.update(choices=found.headers, value=sort_by or "id"),
            v.table: {"headers": found.headers, "data": found.rows},
            v.message: found.summary(),
            **rating,
        }

    def first_page(self, ds, me, su, sort_by, desc, request: gr.Request):
        return self.on_refresh(ds, me, su, sort_by, desc, 1, request)

    def step(self, by: int):
        """The handler of a page button: the page `by` pages from the one shown (never before the first)."""

        def handler(ds, me, su, sort_by, desc, page_no, request: gr.Request):
            return self.on_refresh(ds, me, su, sort_by, desc, max(1, int(page_no or 1) + by), request)

        return handler

    def set_rating(self, on: bool):
        """The handler of Mark for rating (`on`) or Stop rating tasks."""

        def handler(ds, request: gr.Request):
            user = user_of(request)
            try:
                done = self.wb.samples.set_for_rating(ds or "", on, user=user)
                return {**self.rating_state(ds, user), self.v.message: done}
            except WorkbenchError as exc:
                return {self.v.message: warn(exc)}

        return handler

    @staticmethod
    def on_select(evt: gr.SelectData):
        row = evt.row_value or []
        return str(row[0]) if row else gr.update()

    def on_poster(self, sid, request: gr.Request):
        v = self.v
        if not str(sid or "").strip():
            return {v.poster: None, v.open_msg: ""}
        try:
            picture, caption = poster_preview(self.wb, sid, user=user_of(request))
        except WorkbenchError as exc:
            return {v.poster: None, v.open_msg: warn(exc)}
        return {v.poster: picture, v.open_msg: caption}

    def on_export(self, kind, ds, request: gr.Request):
        v, wb = self.v, self.wb
        try:
            path, n = wb.samples.export(kind, user=user_of(request), dataset=ds or None, folder=wb.scratch.new_folder())
        except WorkbenchError as exc:
            return {v.download: None, v.export_msg: warn(exc)}
        return {
            v.download: str(path),
            v.export_msg: f"exported {n} sample(s) to {path.name} (skips and flags with their reasons included)",
        }


def build(wb: Workbench) -> BrowseTab:
    v = _layout(wb)
    events = BrowseEvents(wb, v)
    outs = [v.page, v.dataset, v.method, v.subject, v.sort, v.table, v.message, v.rating_note, v.mark, v.unmark]
    ins = [v.dataset, v.method, v.subject, v.sort, v.descending, v.page]
    v.refresh.click(events.on_refresh, ins, outs, api_name="browse")
    v.page.submit(events.on_refresh, ins, outs)
    v.previous.click(events.step(-1), ins, outs)
    v.following.click(events.step(1), ins, outs)
    for comp in (v.dataset, v.method, v.subject, v.sort, v.descending):
        comp.input(events.first_page, ins[:-1], outs, trigger_mode="always_last")  # the latest filters win
    rating_out = [v.rating_note, v.mark, v.unmark, v.message]
    v.mark.click(events.set_rating(True), [v.dataset], rating_out, api_name="mark_for_rating")
    v.unmark.click(events.set_rating(False), [v.dataset], rating_out, api_name="unmark_for_rating")
    v.table.select(events.on_select, None, [v.sample_id], trigger_mode="always_last")
    v.sample_id.change(
        events.on_poster, [v.sample_id], [v.poster, v.open_msg], api_name="browse_poster", show_progress="hidden"
    )
    v.export.click(events.on_export, [v.fmt, v.dataset], [v.download, v.export_msg], api_name="export")
    return BrowseTab(v.sample_id, v.open_btn, v.refresh, v.message, v.open_msg, events.on_refresh, ins, outs)


def open_handler(wb: Workbench, score, browse: BrowseTab, tabs: gr.Tabs):
    """(sample id, session) -> a stored sample in the Score tab: images as their stored bytes (so Save finds the
    same images and the same sample), prompt, subject, dataset, method, its current masks (each at its image's
    size; a stretched one is named in the message), its stored scores, and the link that makes Save add to it.
    A failure stays on the Browse tab, next to the button; so does the warning when the Score tab holds masks the
    user made and did not save (a second press opens the sample anyway)."""

    def handler(sample_id, session: MaskSession, request: gr.Request):
        if not str(sample_id or "").strip():
            return {browse.open_msg: warn("pick a sample first: click a row of the table, or type its id")}
        try:
            user = user_of(request)
            s = wb.samples.open(sample_id, user=user)
            report = wb.samples.stored_report(s.sample_id, user=user)
            shown = VideoSession()
            video = open_video(wb, s, shown) if isinstance(s.out, InputVideo) else None
        except WorkbenchError as exc:
            return {browse.open_msg: warn(exc)}
        unsaved = session.confirm_replace(
            f"open:{s.sample_id}", f"opening sample #{s.sample_id}", "Open in the Score tab"
        )
        if unsaved:
            return {browse.open_msg: warn(unsaved), score.masks.session: session}
        session.reset()
        session.video = shown
        for i, (img, m) in enumerate(zip(s.refs, s.ref_masks)):
            if m is not None:
                session.set_mask(f"ref{i}", m, s.mask_sources.get(f"ref{i}", "imported"), img, undoable=False)
        if s.out_mask is not None and video is None:
            session.set_mask("out", s.out_mask, s.mask_sources.get("out", "imported"), s.out, undoable=False)
        images = {**{f"ref{i}": img for i, img in enumerate(s.refs)}, "out": s.out}
        for target, (proposed, why) in s.proposals.items():
            session.offer(target, proposed, "text-prompted", images[target], doubtful=why)
        session.mark_saved()
        session.stored_sample = s.sample_id
        folder = wb.scratch.new_folder()
        files = []
        for name, img in [(f"reference-{i}", r) for i, r in enumerate(s.refs, 1)] + [("output", s.out)] * (not video):
            path = folder / f"{name}{SUFFIXES.get(img.media_type, '.png')}"
            path.write_bytes(img.data)
            files.append(str(path))
        sample = wb.scoring.make_sample(s.refs, s.out, s.prompt, s.subject, s.ref_masks, s.out_mask)
        note = f"opened sample #{s.sample_id} with its current masks and stored scores"
        if video:
            note += " (its output is a video: the frame strip and the video's mask are under the Masks)"
        if s.proposals:
            labels = {key: label for label, key in target_names(len(s.refs))}
            named = ", ".join(labels[t] for t in s.proposals)
            note += (
                f"\n\nA stored proposed mask waits for {named} (doubtful, not applied): pick that image under "
                "Masks to see it, then apply or discard it"
            )
        if s.warnings:
            note += "\n\n" + "\n".join(f"⚠ {w}" for w in s.warnings)
            warn("; ".join(s.warnings))
        caption = f"Stored values of sample #{s.sample_id} (latest, computed with its current masks)"
        extra = files[1:] if video else files[1:-1]
        return {
            **act.cleared_results(score),
            score.ref_image: files[0],
            score.extra_refs: extra or None,
            score.out_image: None if video else files[-1],
            score.out_video: video,
            score.prompt: s.prompt,
            score.subject: s.subject,
            score.dataset: s.dataset,
            score.method: s.method or "",
            score.example: None,
            score.masks.session: session,
            score.scores: act.score_table(wb, report, False, caption),
            score.report: report,
            score.computed: (sample_fingerprint(sample), None),
            score.load_msg: note,
            score.link: act.link_text(session, s.dataset, s.method),
            browse.open_msg: f"opened sample #{s.sample_id}",
            tabs: gr.Tabs(selected="score"),
        }

    return handler
