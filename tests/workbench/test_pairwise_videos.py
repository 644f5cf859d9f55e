"""Pairwise tasks with video outputs: videos are paired with videos and images with images; a video pair's view holds
both clips to play (every frame as stored, the container's tags dropped, the files named by a keyed hash) and their
poster frames; a pair of mixed kinds is shown side by side as what each output is; an answer is stored as for images."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from pairwise_samples import decoded, png, shown
from PIL import Image

from masc_ui.imaging import open_video, poster_frame, read_frames
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pairwise import PairwiseTasks, output_kind, plan_of
from masc_ui.workbench.recorder import video_info
from storage import PairChoice, open_store
from tests.video_files import encode_video, synthetic_frames

VIDEO_METHODS = ("clip-a", "clip-b", "clip-c")
IMAGE_METHODS = ("still-a", "still-b")
PROMPT = "a green square sliding right"


@pytest.fixture()
def store(database_url, tmp_path: Path):
    with open_store(database_url, tmp_path / "data") as opened:
        yield opened


@pytest.fixture()
def outputs(store) -> dict[int, str]:
    """One reference and prompt; a WebM output of each VIDEO_METHODS (its title tag names the method) and a PNG output
    of each IMAGE_METHODS. Sample id -> method."""
    ref = store.images.add(png(1))
    methods = {}
    for k, method in enumerate(VIDEO_METHODS):
        data = encode_video(synthetic_frames(6 + 2 * k), "webm", metadata={"title": f"made by {method}"})
        sample = store.samples.add(
            "clips",
            references=[ref],
            output=store.images.add(data, media_type="video/webm"),
            prompt=PROMPT,
            subject="square",
            method=method,
            external_key=f"v/{method}",
            info={"video": video_info(open_video(data))},
        )
        methods[sample.id] = method
    for k, method in enumerate(IMAGE_METHODS):
        sample = store.samples.add(
            "clips",
            references=[ref],
            output=store.images.add(png(100 + k)),
            prompt=PROMPT,
            subject="square",
            method=method,
            external_key=f"i/{method}",
        )
        methods[sample.id] = method
    store.samples.set_for_rating("clips", True)
    return methods


def tasks_of(store, folder: Path) -> PairwiseTasks:
    return PairwiseTasks(Database.of(store), Settings(rating_overlap=2), folder)


def _frames(data: bytes) -> list[np.ndarray]:
    video = open_video(data)
    return [np.asarray(f.image.pixels) for f in read_frames(video, range(video.frame_count))]


def _tags(data: bytes) -> dict[str, str]:
    import av

    with av.open(io.BytesIO(data)) as container:
        return {**container.metadata, **container.streams.video[0].metadata}


def test_videos_are_paired_with_videos_and_images_with_images(store, outputs):
    state = store.pairwise.state("x")
    kinds = {c.sample_id: output_kind(c) for c in state.candidates}
    assert kinds == {i: "video" if m in VIDEO_METHODS else "image" for i, m in outputs.items()}
    pairs = plan_of(state).pairs
    assert len(pairs) == 3 + 1  # the three videos two by two, the two images
    assert all(kinds[int(p.a)] == kinds[int(p.b)] for p in pairs)


def test_a_video_pair_plays_both_clips_blind_and_takes_an_answer(store, outputs, tmp_path: Path):
    tasks = tasks_of(store, tmp_path / "files")
    seen = set()
    while (view := tasks.next_task("alice")) is not None:
        record = store.pairwise.task("alice", view.token)
        left, right = store.samples.get(record.left_sample_id), store.samples.get(record.right_sample_id)
        assert np.array_equal(shown(view.refs[0]), decoded(store.images.read(left.references[0])))
        if outputs[left.id] in IMAGE_METHODS:
            assert not view.has_video and view.left_video is None and view.right_video is None
            assert np.array_equal(shown(view.left), decoded(store.images.read(left.output)))
        else:
            assert view.has_video and view.left_media_type == view.right_media_type == "video/webm"
            for sample, image, video in ((left, view.left, view.left_video), (right, view.right, view.right_video)):
                stored = store.images.read(sample.output)
                played = video.read_bytes()
                frames = _frames(stored)
                assert len(_frames(played)) == len(frames)
                assert all(np.array_equal(a, b) for a, b in zip(_frames(played), frames))  # every frame as stored
                assert _tags(stored)["title"] == f"made by {outputs[sample.id]}"
                assert "title" not in _tags(played) and b"made by" not in played  # the tag that names the method
                assert video.suffix == ".webm" and re.fullmatch("[0-9a-f]{64}", video.stem)
                assert video.stem != sample.output  # not the stored file's hash: nothing to look it up by
                assert np.array_equal(shown(image), np.asarray(poster_frame(open_video(stored)).pixels))
                assert image.suffix == ".png" and sample.output not in image.name
                seen.add(video)
            assert view.left_video != view.right_video
        tasks.submit("alice", view.token, {"cp": "left", "pf": "tie"}, both_bad={"pf": True}, seconds_spent=6.0)
        judged = store.pairwise.task("alice", view.token).judgments
        assert {c: (j.winner, j.both_bad, j.status) for c, j in judged.items()} == {
            "cp": ("left", False, "rated"),
            "pf": ("tie", True, "rated"),
        }
    assert len(seen) == 3 and tasks.progress("alice").judged == 4

    video_task = next(x for x in store.pairwise.tasks(rater="alice") if outputs[x.left_sample_id] in VIDEO_METHODS)
    again = tasks.task_for("alice", video_task.token)
    assert {again.left_video, again.right_video} <= seen  # the files are made once, then handed out again
    other_process = tasks_of(store, tmp_path / "other")
    view = other_process.next_task("bob")
    while view is not None and not view.has_video:
        other_process.skip("bob", view.token)
        view = other_process.next_task("bob")
    assert view is not None and {view.left_video.name, view.right_video.name}.isdisjoint({p.name for p in seen})


def test_a_pair_of_a_video_and_an_image_shows_each_as_it_is(store, outputs, tmp_path: Path):
    video_id = next(i for i, m in outputs.items() if m in VIDEO_METHODS)
    image_id = next(i for i, m in outputs.items() if m in IMAGE_METHODS)
    store.ratings.ensure_rater("carol")
    task = store.pairwise.next_task("carol", lambda state: PairChoice(video_id, image_id, image_id))  # handed out
    view = tasks_of(store, tmp_path / "files").task_for("carol", task.token)  # by another rule
    assert view.left_video is None and view.right_video is not None and view.has_video
    assert np.array_equal(shown(view.left), decoded(store.images.read(store.samples.get(image_id).output)))
    assert view.right_media_type == "video/webm"


def test_a_pair_whose_video_no_longer_decodes_is_shown_as_such_and_can_be_flagged(store, outputs, tmp_path: Path):
    broken = next(sid for sid, method in outputs.items() if method == VIDEO_METHODS[0])
    blob = store.blobs.path(store.samples.get(broken).output)
    blob.write_bytes(np.random.default_rng(0).integers(0, 256, blob.stat().st_size, dtype=np.uint8).tobytes())
    tasks = tasks_of(store, tmp_path / "files")
    seen_problem = False
    while (view := tasks.next_task("alice")) is not None:
        record = store.pairwise.task("alice", view.token)
        if broken in (record.left_sample_id, record.right_sample_id):
            assert view.problem and "cannot be shown" in view.problem and "#" not in view.problem
            assert not view.has_video and Image.open(view.left).size == Image.open(view.right).size == (480, 270)
            tasks.flag("alice", view.token, note="the pictures say they cannot be shown")
            seen_problem = True
        else:
            assert view.problem is None
            tasks.submit("alice", view.token, {c: "tie" for c in ("cp", "pf")})
    assert seen_problem  # the rater was never held on the broken pair: every pair was answered or flagged
