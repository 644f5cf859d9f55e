"""Video outputs outside the Score tab's panel: the rater's player (Rate), the poster of a stored sample (Browse), and a
stored video sample brought back into the Score tab (Browse's Open)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from ..imaging import InputVideo
from ..workbench import Workbench
from ..workbench.blind_files import VIDEO_FILE_SUFFIXES
from ..workbench.browse import StoredSample
from ..workbench.ratings import TaskView
from ..workbench.video_session import VideoSession


def build_player(height: int = 460) -> gr.Video:
    """The Rate tab's player of a video output (hidden for an image output). The browser loads the whole file
    (`preload="auto"`), so the poster (first) frame shows before playback. Built visible: Gradio's video frontend
    throws ("reading 'canvas'") when a player built hidden gets an update before it was ever shown; the page-load
    handler hides it at once for an image task."""
    return gr.Video(
        label="Generated video (press play; rate it as an image)",
        height=height,
        interactive=False,
        loop=True,
        autoplay=False,
        visible=True,
        elem_id="rate-out-video",
        buttons=["fullscreen"],
    )


def task_media(task: TaskView | None, shown: str | None = None) -> tuple[Any, Any]:
    """(output image, player) for `task`: a video output plays in the player (the image hidden); an image output
    shows in the image (the player hidden and emptied); no task: both empty, the player hidden.

    `shown` is what the screen shows now (`media_kind` of the task rendered last; None when not known): when it is
    the same kind, plain values are returned, not updates: Gradio builds a new component for every property update,
    which a rater would pay for on every submit (see `bench/rating_load.py`)."""
    if media_kind(task) == shown:
        if task is None:
            return None, None
        return (None, str(task.out_video)) if task.is_video else (task.out, None)
    if task is None:
        return gr.update(value=None, visible=True), gr.update(value=None, visible=False)
    if task.is_video:
        return gr.update(value=None, visible=False), gr.update(value=str(task.out_video), visible=True)
    return gr.update(value=task.out, visible=True), gr.update(value=None, visible=False)


def media_kind(task: TaskView | None) -> str:
    """Which of the two output boxes a task uses: `video`, `image`, or `none` (no task)."""
    return "none" if task is None else "video" if task.is_video else "image"


def poster_preview(wb: Workbench, sample_id: Any, *, user: str | None) -> tuple[Any, str]:
    """(picture, caption) standing for stored sample `sample_id` in Browse: its output image, or its video's poster
    (first) frame; (None, reason) when there is nothing to show."""
    if sample_id is None:
        return None, ""
    poster = wb.samples.poster(int(sample_id), user=user)
    if poster is None:
        return None, f"sample #{int(sample_id)} has no images (ratings only)"
    kind = "poster (first) frame of the output video" if poster.name.endswith(" frame 0") else "output image"
    return poster.pixels, f"sample #{int(sample_id)}: {kind}"


def open_video(wb: Workbench, stored: StoredSample, vs: VideoSession) -> str:
    """Put a stored video sample on screen in the Score tab: `vs` holds the stored video and its stored mask (reused
    on every frame, from the frame it was drawn on); returns the file to hand to the video box (the stored bytes,
    so a Save of the opened sample finds the same video)."""
    video = stored.out
    if not isinstance(video, InputVideo):
        raise TypeError("open_video: the stored sample's output is not a video")
    path = wb.scratch.new_folder() / f"output{VIDEO_FILE_SUFFIXES.get(video.media_type, '.mp4')}"
    path.write_bytes(video.data)
    vs.show(str(path), video, wb.videos.sampled_frames(video))
    if stored.out_mask is not None:
        vs.set_masks(stored.out_mask, stored.mask_sources.get("out", "imported"), undoable=False)
    return str(path)
