"""What the Score tab's buttons do, one small function per action, each answering next to its own button.

The inputs on screen are one sample: new images reset what belonged to the previous one (scores, maps, the
method, the example's name, the link to a stored sample); any other change after Run or Explain marks the results
"out of date" until they are computed again (`freshness`)."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

import gradio as gr

from .. import overlays
from ..errors import InputError, WorkbenchError
from ..workbench import Workbench, format_value, sample_fingerprint
from ..workbench.explain import Explanation
from ..workbench.masks import MaskSession
from . import catalogue_panel, mask_panel, sensitivity_panel, video_panel
from .feedback import warn
from .gpu import gpu
from .staleness import NOTHING, Computed, keys_of, stale_note
from .users import user_of

NEW_SAMPLE = (
    "**New sample** — not in the database yet: Save stores it (with its masks and scores) in the dataset below."
)


def sample_on_screen(wb: Workbench, session: MaskSession, ref, extra, out, prompt: str | None, subject: str | None):
    """The sample on screen (`Scoring.make_sample`) from the images the session decoded at upload, with the masks
    that belong to them; the output is the video on screen when there is one (`MaskSession.video`, with its mask)."""
    refs, out_path = mask_panel.image_paths(ref, extra, out)
    if len(refs) > wb.settings.max_references:
        raise InputError(wb.scoring.too_many_references(len(refs)))
    ref_imgs = [mask_panel.session_image(wb, session, r, f"reference image {i + 1}") for i, r in enumerate(refs)]
    if session.video.loaded:
        ref_masks, _ = mask_panel.masks_for_sample(session, ref_imgs, None)
        return wb.scoring.make_sample(ref_imgs, session.video.video, prompt, subject, ref_masks, session.video.masks)
    out_img = None if out_path is None else mask_panel.session_image(wb, session, out_path, "output image")
    ref_masks, out_mask = mask_panel.masks_for_sample(session, ref_imgs, out_img)
    return wb.scoring.make_sample(ref_imgs, out_img, prompt, subject, ref_masks, out_mask)


def screen_sample(wb: Workbench) -> Callable[..., Any]:
    """`sample_of(ref, extra, out, prompt, subject, session)`: the sample on screen, in the order of the Score tab's
    inputs (what its panels are given)."""

    def sample_of(ref, extra, out, prompt: str | None, subject: str | None, session: MaskSession):
        return sample_on_screen(wb, session, ref, extra, out, prompt, subject)

    return sample_of


def mask_sources(session: MaskSession) -> dict[str, str]:
    """Where each mask of the sample on screen came from, for Save (the video's mask for a video output)."""
    sources = dict(session.sources)
    if session.video.loaded:
        sources.pop("out", None)
        sources.update(session.video.mask_sources())
    return sources


def link_text(session: MaskSession, dataset: str | None = None, method: str | None = None) -> str:
    """What the Save buttons will do with the inputs on screen."""
    if session.stored_sample is None:
        return NEW_SAMPLE
    where = f" in dataset '{html.escape(dataset)}'" if dataset else ""
    how = f", method '{html.escape(method)}'" if method else ""
    return (
        f"**Stored sample #{session.stored_sample}**{where}{how} — Save adds your new masks and scores to it; "
        "'Save as a new sample' stores what is on screen as another sample."
    )


def freshness(
    wb: Workbench,
    session: MaskSession,
    ref,
    extra,
    out,
    prompt,
    subject,
    computed: Computed | None,
) -> tuple[str, str, str]:
    """The "out of date" notes (under Run; next to the catalogue explanation; next to the mask-sensitivity check):
    shown when a result on screen (score table, maps, catalogue explanation, mask sensitivity) was computed on other inputs than those on screen now (`computed`: their
    fingerprints, `staleness.Computed`)."""
    if not any(keys_of(computed)):
        return "", "", ""
    try:
        now = sample_fingerprint(sample_on_screen(wb, session, ref, extra, out, prompt, subject))
    except WorkbenchError:
        now = None
    return (
        stale_note(now, computed),
        catalogue_panel.stale_here(now, computed),
        sensitivity_panel.stale_here(now, computed),
    )


def explain_summary(wb: Workbench, ex: Explanation) -> str:
    """What the maps and the two numbers mean, for the note under the maps."""
    parts = []
    cp_spec, pf_spec = wb.scoring.metric_spec("cp"), wb.scoring.metric_spec("pf")
    x = ex.extras
    if math.isfinite(ex.cp):
        per_ref = [v for v in (x.get("cp_per_ref") or []) if v is not None]
        each = (
            (" (per reference: " + ", ".join(f"{format_value(v)}" for v in per_ref) + ")") if len(per_ref) > 1 else ""
        )
        fg = f" over {x['cp_n_ref_fg']} subject patches" if x.get("cp_n_ref_fg") else ""
        parts.append(
            f"**{cp_spec.display_name} {format_value(ex.cp)}**{each} — {cp_spec.convention} Computed{fg}. "
            "*CP map:* each subject patch of the reference coloured by its best cosine to the output "
            "(bright = found in the output, dark = missing). *Best match:* each output patch coloured by its "
            "best cosine to any reference subject patch (where the subject was found)."
        )
    if math.isfinite(ex.pf):
        stripped = x.get("prompt_text")
        text = f" Prompt compared (subject words removed): “{html.escape(str(stripped))}”." if stripped else ""
        pooled = (
            f" {x['pf_n_bg_pooled']} background patches pooled, {x['pf_n_fg']} subject patches hidden."
            if x.get("pf_n_bg_pooled") is not None and x.get("pf_n_fg") is not None
            else ""
        )
        parts.append(
            f"**{pf_spec.display_name} {format_value(ex.pf)}** — {pf_spec.convention}{text}{pooled} "
            "*PF map:* where the pooling head looked in the output's background."
        )
    if ex.lines is not None:
        parts.append(
            f"*Correspondences:* the {ex.top_k} strongest matches between reference 1's subject patches "
            "and the output, coloured by cosine."
        )
    parts += [f"⚠ {n}" for n in ex.notes]
    parts.append("Ranges: both [-1, 1], higher is better.")
    return "\n\n".join(parts)


def cleared_results(tab: Any) -> dict:
    """The Score tab's results, maps and action messages emptied (new inputs)."""
    return {
        tab.scores: "",
        tab.report: None,
        tab.computed: NOTHING,
        tab.stale: "",
        tab.cp_map: None,
        tab.best_map: None,
        tab.lines: None,
        tab.pf_map: None,
        tab.explain_notes: "",
        tab.run_msg: "",
        tab.explain_msg: "",
        tab.save_msg: "",
        tab.video.plot: None,
        tab.video.plot_box: gr.Column(visible=False),
        tab.catalogue.pictures: [],
        tab.catalogue.notes: "",
        tab.catalogue.stale: "",
        tab.sensitivity.table: "",
        tab.sensitivity.stale: "",
    }


def on_new_images(tab: Any):
    """A user's upload or removal of an image: the previous sample's results, method, example name and link
    go; the masks of images that changed are dropped by the mask panel (they belong to their image)."""

    def handler(session: MaskSession, dataset: str | None):
        session.stored_sample = None
        session.pending.clear()
        return {
            **cleared_results(tab),
            tab.method: "",
            tab.example: None,
            tab.load_msg: "",
            tab.link: link_text(session, dataset),
            tab.masks.session: session,
        }

    return handler


def upload_notes(wb: Workbench):
    """Notes on the images on screen (transparency flattened, an image refused and why), each under its slot: the
    references' under the reference image, the output's under the output image. And Segment Anything starts
    encoding the images in the background, so that the first click finds them ready."""

    def handler(session: MaskSession, ref, extra, out):
        images, notes = mask_panel.images_on_screen(wb, session, ref, extra, out)
        wb.segmentation.pre_encode(images.values())
        refs = [n for key, shown in notes.items() if key != "out" for n in shown]
        return "\n".join(f"- {n}" for n in refs), "\n".join(f"- {n}" for n in notes.get("out", []))

    return handler


def run_result(report: Any) -> str:
    how = "reused cached scores" if report.cached else f"computed in {report.seconds:.2f} s"
    return f"scored {len(report.rows)} metric(s) ({how})"


def score_table(wb: Workbench, report: Any, x100: bool, caption: str = "") -> str:
    from .score_table import score_table_html

    return score_table_html(report, x100=x100, demo=wb.status().is_demo, caption=caption)


def on_load_example(wb: Workbench, tab: Any):
    """Load an example pair with its masks: a new sample (nothing of the previous one stays). Masks the user made and
    did not save are replaced only on a second press (`MaskSession.confirm_replace`)."""
    from ..workbench.examples import load_example

    def handler(name: str | None, session: MaskSession, dataset: str | None):
        if not name:
            return {tab.load_msg: warn("choose an example pair in the list first")}
        try:
            ex = load_example(name)
            unsaved = session.confirm_replace(f"example:{name}", f"loading example '{ex.title}'", "Load example")
            if unsaved:
                return {tab.load_msg: warn(unsaved), tab.masks.session: session}
            ref = mask_panel.session_image(wb, session, str(ex.ref), "reference image 1")
            out = mask_panel.session_image(wb, session, str(ex.out), "output image")
            session.reset()
            session.set_mask("ref0", ex.ref_mask, "imported", ref, undoable=False)
            session.set_mask("out", ex.out_mask, "imported", out, undoable=False)
            session.mark_saved()
        except WorkbenchError as exc:
            return {tab.load_msg: warn(exc)}
        return {
            **cleared_results(tab),
            tab.ref_image: str(ex.ref),
            tab.extra_refs: None,
            tab.out_image: str(ex.out),
            tab.out_video: None,
            tab.prompt: ex.prompt,
            tab.subject: ex.subject,
            tab.method: "",
            tab.masks.session: session,
            tab.link: link_text(session, dataset),
            tab.load_msg: f"loaded example '{ex.title}' with its masks",
        }

    return handler


def on_run(wb: Workbench, tab: Any):
    @gpu
    def handler(
        ref,
        extra,
        out,
        prompt,
        subject,
        session: MaskSession,
        names,
        x100,
        computed,
        request: gr.Request,
        progress=gr.Progress(),
    ):
        user, progress = user_of(request), _progress(progress)
        try:
            if not names:
                return {tab.run_msg: warn("choose at least one metric (the Metrics boxes above Run)")}
            sample = sample_on_screen(wb, session, ref, extra, out, prompt, subject)
            report = wb.scoring.score(sample, names, user=user, progress=progress)
        except WorkbenchError as exc:
            return {
                tab.run_msg: warn(exc),
                tab.scores: "",
                tab.report: None,
                **tab.results.answer(wb.status().line(), computed, "score table", None),
            }
        return {
            tab.scores: score_table(wb, report, x100),
            tab.report: report,
            tab.run_msg: run_result(report),
            **tab.results.answer(wb.status().line(), computed, "score table", sample_fingerprint(sample)),
        }

    return handler


def on_explain(wb: Workbench, tab: Any):
    @gpu
    def handler(
        ref, extra, out, prompt, subject, session: MaskSession, computed, request: gr.Request, progress=gr.Progress()
    ):
        user, progress = user_of(request), _progress(progress)
        empty = {tab.cp_map: None, tab.best_map: None, tab.lines: None, tab.pf_map: None, tab.explain_notes: ""}
        frame = None
        try:
            sample = sample_on_screen(wb, session, ref, extra, out, prompt, subject)
            if session.video.loaded:
                frame, ex = video_panel.explain_frame(wb, session.video, sample, user=user, progress=progress)
            else:
                ex = wb.scoring.explain(sample, user=user, progress=progress)
        except WorkbenchError as exc:
            return {
                **empty,
                tab.explain_msg: warn(exc),
                **tab.results.answer(wb.status().line(), computed, "maps", None),
            }
        cp_maps = [img for img in ex.cp_ref if img is not None]
        drawn = sum(x is not None for x in (*ex.cp_ref, ex.out_best, ex.lines, ex.pf_attention))
        shown = ", ".join(f"{k} {format_value(v)}" for k, v in (("CP", ex.cp), ("PF", ex.pf)) if math.isfinite(v))
        msg = f"{drawn} map(s) drawn" + (f" ({shown})" if shown else "") + "; what they show is explained below them"
        notes = explain_summary(wb, ex)
        if frame is not None:
            where = f"frame {frame.index} ({frame.time_s:.2f} s) of the output video"
            msg = f"maps of {where}: {msg} (click another frame of the strip, then Explain, for another)"
            notes = f"**Maps of {where}**; the values are this frame's.\n\n{notes}"
        return {
            tab.cp_map: overlays.side_by_side(cp_maps) if cp_maps else None,
            tab.best_map: ex.out_best,
            tab.lines: ex.lines,
            tab.pf_map: ex.pf_attention,
            tab.explain_notes: notes,
            tab.explain_msg: msg if drawn else warn(msg),
            **tab.results.answer(wb.status().line(), computed, "maps", sample_fingerprint(sample)),
        }

    return handler


def on_save(wb: Workbench, tab: Any, *, as_new: bool):
    """Save (adds to the stored sample on screen, if any) or Save as a new sample."""

    @gpu
    def handler(
        ref,
        extra,
        out,
        prompt,
        subject,
        session: MaskSession,
        names,
        dataset,
        method,
        x100,
        computed,
        request: gr.Request,
        progress=gr.Progress(),
    ):
        user, progress = user_of(request), _progress(progress)
        try:
            sample = sample_on_screen(wb, session, ref, extra, out, prompt, subject)
            saved = wb.saving.save(
                sample,
                user=user,
                dataset=dataset,
                method=method or None,
                mask_sources=mask_sources(session),
                names=names or None,
                progress=progress,
                sample_id=None if as_new else session.stored_sample,
            )
        except WorkbenchError as exc:
            return {tab.save_msg: warn(exc)}
        session.stored_sample = saved.sample_id
        session.mark_saved()
        return {
            tab.save_msg: saved.message,
            tab.masks.session: session,
            tab.scores: score_table(wb, saved.report, x100),
            tab.report: saved.report,
            tab.link: link_text(session, (dataset or "").strip(), (method or "").strip() or None),
            **tab.results.answer(wb.status().line(), computed, "score table", sample_fingerprint(sample)),
        }

    return handler


def on_freshness(wb: Workbench):
    def handler(ref, extra, out, prompt, subject, session: MaskSession, computed):
        return freshness(wb, session, ref, extra, out, prompt, subject, computed)

    return handler


def _progress(progress: gr.Progress):
    """The workbench's progress callback (fraction, what) on a Gradio progress bar."""
    return lambda fraction, what: progress(fraction, desc=what)
