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


def build(wb: Workbench) -> BrowseTab:
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

    def rating_state(ds: str | None, user: str | None) -> dict:
        """The rating row for dataset `ds`: what its mark means, and which of Mark / Stop works."""
        infos = {d.name: d for d in wb.samples.datasets(user=user)}
        info = infos.get(ds or "")
        if info is None:
            marked = [n for n, d in infos.items() if d.for_rating]
            text = (
                "**Rating tasks** come from the datasets marked for rating: "
                + (", ".join(f"'{n}'" for n in marked) or "none yet")
                + ". Pick a dataset above to mark or unmark it."
            )
            return {rating_note: text, mark: gr.update(interactive=False), unmark: gr.update(interactive=False)}
        state = (
            "marked for rating: raters get its samples as tasks"
            if info.for_rating
            else "not marked for rating: raters get no tasks from it"
        )
        return {
            rating_note: f"**Dataset '{info.name}'** ({info.samples} samples) is {state}.",
            mark: gr.update(interactive=not info.for_rating),
            unmark: gr.update(interactive=info.for_rating),
        }

    def on_refresh(ds, me, su, sort_by, desc, page_no, request: gr.Request):
        try:
            user = user_of(request)
            choices = wb.samples.filters(user=user)
            found = wb.samples.browse(
                user=user,
                dataset=ds or None,
                method=me or None,
                subject=su or None,
                sort=sort_by or "id",
                descending=bool(desc),
                page=page_no or 1,
                page_size=BROWSE_PAGE_SIZE,
            )
            rating = rating_state(ds, user)
        except WorkbenchError as exc:
            return {message: warn(exc)}
        return {
            page: found.page,
            dataset: gr.update(choices=[""] + choices["dataset"]),
            method: gr.update(choices=[""] + choices["method"]),
            subject: gr.update(choices=[""] + choices["subject"]),
            sort: gr.update(choices=found.headers, value=sort_by or "id"),
            table: {"headers": found.headers, "data": found.rows},
            message: found.summary(),
            **rating,
        }

    def first_page(ds, me, su, sort_by, desc, request: gr.Request):
        return on_refresh(ds, me, su, sort_by, desc, 1, request)

    def step(by: int):
        def handler(ds, me, su, sort_by, desc, page_no, request: gr.Request):
            return on_refresh(ds, me, su, sort_by, desc, max(1, int(page_no or 1) + by), request)

        return handler

    outs = [page, dataset, method, subject, sort, table, message, rating_note, mark, unmark]
    ins = [dataset, method, subject, sort, descending, page]
    refresh.click(on_refresh, ins, outs, api_name="browse")
    page.submit(on_refresh, ins, outs)
    previous.click(step(-1), ins, outs)
    following.click(step(1), ins, outs)
    for comp in (dataset, method, subject, sort, descending):
        comp.input(first_page, ins[:-1], outs)

    def set_rating(on: bool):
        def handler(ds, request: gr.Request):
            user = user_of(request)
            try:
                done = wb.samples.set_for_rating(ds or "", on, user=user)
                return {**rating_state(ds, user), message: done}
            except WorkbenchError as exc:
                return {message: warn(exc)}

        return handler

    rating_out = [rating_note, mark, unmark, message]
    mark.click(set_rating(True), [dataset], rating_out, api_name="mark_for_rating")
    unmark.click(set_rating(False), [dataset], rating_out, api_name="unmark_for_rating")

    def on_select(evt: gr.SelectData):
        row = evt.row_value or []
        return str(row[0]) if row else gr.update()

    table.select(on_select, None, [sample_id])

    def on_poster(sid, request: gr.Request):
        if not str(sid or "").strip():
            return {poster: None, open_msg: ""}
        try:
            picture, caption = poster_preview(wb, sid, user=user_of(request))
        except WorkbenchError as exc:
            return {poster: None, open_msg: warn(exc)}
        return {poster: picture, open_msg: caption}

    sample_id.change(on_poster, [sample_id], [poster, open_msg], api_name="browse_poster", show_progress="hidden")

    def on_export(kind, ds, request: gr.Request):
        try:
            path, n = wb.samples.export(kind, user=user_of(request), dataset=ds or None, folder=wb.scratch.new_folder())
        except WorkbenchError as exc:
            return {download: None, export_msg: warn(exc)}
        return {
            download: str(path),
            export_msg: f"exported {n} sample(s) to {path.name} (skips and flags with their reasons included)",
        }

    export.click(on_export, [fmt, dataset], [download, export_msg], api_name="export")
    return BrowseTab(sample_id, open_btn, refresh, message, open_msg, on_refresh, ins, outs)


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
