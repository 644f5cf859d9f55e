"""What a rater receives, byte for byte, in both rating kinds (`workbench.blind_files`): images as PNGs of the pixels
the metrics see with pixel chunks only, videos without their container tags, every file named by a keyed hash; made
once per stored file. The stored files here carry metadata that names their method (tests/marked_files.py)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from masc_ui.imaging import open_image, open_video, poster_frame, read_frames
from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pairwise import PairwiseTasks
from masc_ui.workbench.ratings import RatingTasks
from masc_ui.workbench.recorder import video_info
from storage import open_store
from tests.marked_files import MARKERS, assert_blind_image, container_tags, jpeg_with_exif, mp4_with_tags, png_with_text
from tests.video_files import encode_video, synthetic_frames

PROMPT = "a dog on a beach"


@pytest.fixture()
def store(database_url, tmp_path: Path):
    with open_store(database_url, tmp_path / "data") as opened:
        yield opened


def _add(store, dataset: str, refs: list[bytes], out: bytes, method: str, *, video: bool = False):
    shas = [store.images.add(r) for r in refs]
    info = {"video": video_info(open_video(out))} if video else None
    output = store.images.add(out, media_type=open_video(out).media_type if video else None)
    sample = store.samples.add(
        dataset,
        references=shas,
        output=output,
        prompt=PROMPT,
        subject="dog",
        method=method,
        external_key=f"{dataset}/{method}",
        info=info,
    )
    store.samples.set_for_rating(dataset, True)
    return sample


def _frames(data: bytes) -> list[np.ndarray]:
    video = open_video(data)
    return [np.asarray(f.image.pixels) for f in read_frames(video, range(video.frame_count))]


def _assert_blind_video(path: Path, stored: bytes, stored_sha: str) -> None:
    played = path.read_bytes()
    assert container_tags(stored)["title"] == "made by method-A" and b"x264" in stored  # there to be dropped
    assert not [m for m in MARKERS if m in played] and "title" not in container_tags(played)
    assert path.suffix == ".mp4" and stored_sha not in path.name
    assert hashlib.sha256(played).hexdigest() not in path.name
    frames = _frames(stored)
    assert len(_frames(played)) == len(frames)
    assert all(np.array_equal(a, b) for a, b in zip(_frames(played), frames))  # every frame as stored


def test_the_rate_tab_hands_out_pixels_only(store, tmp_path: Path):
    ref, out = jpeg_with_exif(1), png_with_text(2)
    sample = _add(store, "abs", [ref], out, "method-A")
    tasks = RatingTasks(Database.of(store), Settings(), tmp_path / "files")
    task = tasks.next_task("rita")
    assert task.sample_id == sample.id and not task.problem
    assert_blind_image(task.refs[0], ref, sample.references[0])
    assert_blind_image(task.out, out, sample.output)
    assert task.refs_picture == task.refs[0]  # one reference: its own file
    assert Image.open(task.refs[0]).size == (48, 64)  # EXIF orientation 6 applied, as the metrics see it
    flattened = np.asarray(open_image(out).pixels)
    assert (flattened[:, -1] != np.asarray(Image.open(io.BytesIO(out)).convert("RGB"))[:, -1]).any()  # alpha gone
    again = tasks.task_for("rita", sample.id)
    assert (again.refs, again.out) == (task.refs, task.out)  # made once, handed out again
    assert {p.name for p in (tmp_path / "files").iterdir()} == {task.refs[0].name, task.out.name}


def test_several_references_come_side_by_side_in_one_blind_png(store, tmp_path: Path):
    refs = [jpeg_with_exif(3), png_with_text(4)]
    sample = _add(store, "abs", refs, jpeg_with_exif(5), "method-A")
    task = RatingTasks(Database.of(store), Settings(), tmp_path / "files").next_task("rita")
    for path, data, sha in zip(task.refs, refs, sample.references):
        assert_blind_image(path, data, sha)
    picture = task.refs_picture.read_bytes()
    assert task.refs_picture.suffix == ".png" and not [m for m in MARKERS if m in picture]
    assert all(sha not in task.refs_picture.name for sha in sample.references)
    heights = {Image.open(p).height for p in task.refs}
    assert Image.open(task.refs_picture).height == max(heights)


def test_the_rate_tab_plays_a_video_without_its_tags(store, tmp_path: Path):
    ref, out = jpeg_with_exif(6), mp4_with_tags(8)
    sample = _add(store, "abs", [ref], out, "method-A", video=True)
    task = RatingTasks(Database.of(store), Settings(), tmp_path / "files").next_task("rita")
    assert task.is_video and task.out_media_type == "video/mp4"
    _assert_blind_video(task.out_video, out, sample.output)
    poster = np.asarray(poster_frame(open_video(out)).pixels)
    served = task.out.read_bytes()
    assert task.out.suffix == ".png" and not [m for m in MARKERS if m in served] and sample.output not in task.out.name
    assert np.array_equal(np.asarray(Image.open(task.out)), poster)


def test_rate_pairs_hands_out_both_sides_by_one_rule(store, tmp_path: Path):
    ref = jpeg_with_exif(7)
    a = _add(store, "pairs", [ref], jpeg_with_exif(8), "method-A")
    b = _add(store, "pairs", [ref], png_with_text(9), "method-B")
    view = PairwiseTasks(Database.of(store), Settings(), tmp_path / "files").next_task("rita")
    record = store.pairwise.task("rita", view.token)
    left, right = (a, b) if record.left_sample_id == a.id else (b, a)
    stored = {s.output: store.images.read(s.output) for s in (a, b)}
    assert_blind_image(view.refs[0], ref, a.references[0])
    assert_blind_image(view.left, stored[left.output], left.output)
    assert_blind_image(view.right, stored[right.output], right.output)
    kinds = [(p.suffix, Image.open(p).mode, Image.open(p).format) for p in (view.left, view.right)]
    assert kinds[0] == kinds[1] == (".png", "RGB", "PNG")  # a JPEG and a PNG method: the same format on screen


def test_rate_pairs_plays_both_videos_without_their_tags(store, tmp_path: Path):
    ref = jpeg_with_exif(10)
    a = _add(store, "pairs", [ref], mp4_with_tags(8, "method-A"), "method-A", video=True)
    b = _add(store, "pairs", [ref], mp4_with_tags(10, "method-A"), "method-B", video=True)
    view = PairwiseTasks(Database.of(store), Settings(), tmp_path / "files").next_task("rita")
    record = store.pairwise.task("rita", view.token)
    left, right = (a, b) if record.left_sample_id == a.id else (b, a)
    for sample, clip, poster in ((left, view.left_video, view.left), (right, view.right_video, view.right)):
        stored = store.images.read(sample.output)
        _assert_blind_video(clip, stored, sample.output)
        assert sample.output not in poster.name and not [m for m in MARKERS if m in poster.read_bytes()]
        assert np.array_equal(np.asarray(Image.open(poster)), np.asarray(poster_frame(open_video(stored)).pixels))


def test_names_are_keyed_per_process(store, tmp_path: Path):
    ref, out = jpeg_with_exif(11), png_with_text(12)
    sample = _add(store, "abs", [ref], out, "method-A")
    first = RatingTasks(Database.of(store), Settings(), tmp_path / "one").next_task("rita")
    other = RatingTasks(Database.of(store), Settings(), tmp_path / "two").task_for("rita", sample.id)
    assert first.out.read_bytes() == other.out.read_bytes() and first.out.name != other.out.name


def _avi(method: str) -> bytes:
    """An AVI (MPEG-4 part 2) whose title tag names `method`: a container `imaging.without_metadata` cannot rewrite."""
    return encode_video(synthetic_frames(6), "avi", codec="mpeg4", metadata={"title": f"made by {method}"})


def _no_marker_in(folder: Path) -> None:
    for path in folder.iterdir():
        assert not [m for m in MARKERS if m in path.read_bytes()], path.name


def test_a_video_that_cannot_be_rewritten_is_never_sent(store, tmp_path: Path):
    sample = _add(store, "abs", [jpeg_with_exif(13)], _avi("method-A"), "method-A", video=True)
    task = RatingTasks(Database.of(store), Settings(), tmp_path / "abs").next_task("rita")
    assert task.sample_id == sample.id and not task.is_video and "cannot be shown" in task.problem
    assert task.out == task.refs_picture and Image.open(task.out).size == (480, 270)
    _no_marker_in(tmp_path / "abs")

    for method in ("method-A", "method-B"):
        _add(store, "pairs", [jpeg_with_exif(14)], _avi(method), method, video=True)
    view = PairwiseTasks(Database.of(store), Settings(), tmp_path / "pairs").next_task("rita")
    assert view.problem and "cannot be shown" in view.problem and not view.has_video
    _no_marker_in(tmp_path / "pairs")
