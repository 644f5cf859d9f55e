"""A task whose stored file cannot be shown (a blob gone, a video that no longer decodes) does not hold its rater:
the task is shown with a picture that says so and words that name no sample, and the rater flags or skips it."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from masc_ui.workbench import Workbench, build_workbench
from masc_ui.workbench.examples import load_example
from tests.video_files import encode_video, synthetic_frames


@pytest.fixture()
def wb(demo_settings):
    wb = build_workbench(demo_settings)
    wb.database.store.ratings.ensure_rater("zoe")
    yield wb
    wb.close()


def _save(wb: Workbench, out, prompt: str) -> int:
    ex = load_example("cat-on-grass")
    saved = wb.recorder.save(wb.scoring.make_sample([ex.ref], out, prompt, "cat"), {}, user=None, dataset="d")
    wb.database.store.samples.set_for_rating("d", True)
    return saved.sample_id


def _blob(wb: Workbench, sample_id: int):
    return wb.database.store.blobs.path(wb.database.store.samples.get(sample_id).output)


def _flag_and_move_on(wb: Workbench, task) -> None:
    assert task.problem and "cannot be shown" in task.problem and "#" not in task.problem  # no sample id
    shown = Image.open(task.out)
    assert shown.size == (480, 270) and task.refs == [task.out]
    wb.ratings.submit("zoe", task.sample_id, {}, status="flagged", reason="the picture says it cannot be shown")
    statuses = {r.status for r in wb.database.store.ratings.current(rater="zoe", sample_id=task.sample_id)}
    assert statuses == {"flagged"}


def test_a_missing_output_file_is_shown_as_such_and_can_be_flagged(wb):
    sample_id = _save(wb, load_example("cat-on-grass").out, "a cat")
    _blob(wb, sample_id).unlink()
    task = wb.ratings.next_task("zoe")
    assert task.sample_id == sample_id and not task.is_video
    _flag_and_move_on(wb, task)
    assert wb.ratings.next_task("zoe") is None


def test_a_video_that_no_longer_decodes_is_shown_as_such_and_can_be_flagged(wb, tmp_path):
    path = tmp_path / "clip.mp4"
    path.write_bytes(encode_video(synthetic_frames(6)))
    sample_id = _save(wb, wb.scoring.load_output(str(path)), "a square moving right")
    blob = _blob(wb, sample_id)
    blob.write_bytes(np.random.default_rng(0).integers(0, 256, blob.stat().st_size, dtype=np.uint8).tobytes())
    task = wb.ratings.next_task("zoe")
    assert task.sample_id == sample_id and not task.is_video
    _flag_and_move_on(wb, task)


def test_a_healthy_task_has_no_problem(wb):
    _save(wb, load_example("cat-on-grass").out, "a cat")
    assert wb.ratings.next_task("zoe").problem is None
