"""What a rater's browser receives over HTTP from the launched app, byte for byte: the Rate tab's and the Rate pairs
tab's images come from the task-file folders (static paths of the app: no copy into Gradio's cache on every answer),
to logged-in users only, as PNGs of their pixels with no metadata and names that say nothing of the stored files
(`workbench.blind_files`), whatever the stored files carried (tests/marked_files.py). API clients download them as
before."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from gradio_client import Client

from tests.marked_files import assert_blind_png, jpeg_with_exif, png_with_text

from .conftest import USERS

(PAIR_REFS, PAIR_LEFT, PAIR_RIGHT) = (3, 4, 5)
"""Positions of the references and the two outputs among the Rate pairs tab's outputs (test_pair_rate_handlers)."""


@contextmanager
def _logged_in(url: str, user: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url) as http:
        assert http.post("/login", data={"username": user, "password": USERS[user]}).status_code == 200
        yield http


def _save(wb, folder: Path, dataset: str, ref: bytes, out: bytes, method: str) -> int:
    (folder / "ref.jpg").write_bytes(ref)
    (folder / f"{method}.out").write_bytes(out)
    sample = wb.scoring.make_sample([folder / "ref.jpg"], folder / f"{method}.out", "a dog on a beach", "dog")
    return wb.saving.save(sample, user=None, dataset=dataset, method=method, names=["clip_i"]).sample_id


def _fetched(served, user: str, shown: dict) -> bytes:
    """The bytes of a file the page shows (a Gradio file value), fetched as the browser does."""
    url = shown["url"]
    assert url.startswith(f"{served.url}/gradio_api/file="), url
    with _logged_in(served.url, user) as http:
        got = http.get(url.removeprefix(served.url))
    assert got.status_code == 200
    assert httpx.get(url).status_code == 401  # no login, no image
    return got.content


def test_a_raters_images_are_pixels_only_from_the_task_folder_to_logged_in_users(served, tmp_path: Path):
    wb = served.wb
    sid = _save(wb, tmp_path, "served-files", jpeg_with_exif(1), png_with_text(2), "method-A")
    wb.samples.set_for_rating("served-files", True, user=None)
    stored = wb.database.store.samples.get(sid)

    outputs = Client(served.url, auth=("carol", USERS["carol"]), verbose=False, download_files=False).predict(
        api_name="/rate_open"
    )
    refs, out = outputs[3], outputs[4]
    out = out.get("value", out)  # the first task after the page opened sets the box's visibility too
    for shown, sha in ((refs, stored.references[0]), (out, stored.output)):
        assert Path(shown["path"]).parent == wb.ratings.image_folder, shown  # not a copy in Gradio's cache
        assert_blind_png(_fetched(served, "carol", shown), shown["url"], wb.database.store.images.read(sha), sha)
    # The data directory stays closed, even to a logged-in user.
    database_file = next(p for p in served.data_dir.rglob("*") if p.is_file())
    with _logged_in(served.url, "carol") as http:
        assert http.get(f"/gradio_api/file={database_file}").status_code == 403

    # An API client downloads the files as it always did: the file the browser gets.
    downloaded = Client(served.url, auth=("carol", USERS["carol"]), verbose=False).predict(api_name="/rate_open")
    got = Path(downloaded[4] if isinstance(downloaded[4], str) else downloaded[4]["value"])
    assert got.read_bytes() == Path(out["path"]).read_bytes()


def test_both_sides_of_a_pair_are_pixels_only_pngs(served, tmp_path: Path):
    wb = served.wb
    ref = jpeg_with_exif(3)
    ids = {
        _save(wb, tmp_path, "served-pairs", ref, jpeg_with_exif(4), "method-A"),
        _save(wb, tmp_path, "served-pairs", ref, png_with_text(5), "method-B"),
    }
    wb.samples.set_for_rating("served-pairs", True, user=None)
    outputs = Client(served.url, auth=("bob", USERS["bob"]), verbose=False, download_files=False).predict(
        api_name="/rate_pair_open"
    )
    task = wb.database.store.pairwise.task("bob", outputs[0])
    assert {task.left_sample_id, task.right_sample_id} == ids
    store = wb.database.store
    left, right = store.samples.get(task.left_sample_id), store.samples.get(task.right_sample_id)
    reference = outputs[PAIR_REFS][0]["image"]
    shown = [
        (reference, left.references[0]),
        (outputs[PAIR_LEFT]["value"], left.output),
        (outputs[PAIR_RIGHT]["value"], right.output),
    ]
    for value, sha in shown:
        assert_blind_png(_fetched(served, "bob", value), value["url"], store.images.read(sha), sha)
        assert value["url"].endswith(".png"), value["url"]
        assert Path(value["path"]).parent == wb.pairwise.file_folder, value  # made once, not per answer in a cache
