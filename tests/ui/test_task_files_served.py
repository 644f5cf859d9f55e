"""The Rate tab's images are sent from the task-image folder as they are (a static path of the app: no copy into
Gradio's cache on every answer), to logged-in users only; API clients download them as before."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx
from gradio_client import Client

from .conftest import USERS

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "assets" / "examples"


@contextmanager
def _logged_in(url: str, user: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url) as http:
        assert http.post("/login", data={"username": user, "password": USERS[user]}).status_code == 200
        yield http


def test_a_raters_images_come_from_the_task_folder_to_logged_in_users_only(served):
    wb = served.wb
    ex = EXAMPLES_DIR / "cat-on-grass"
    sample = wb.make_sample([ex / "ref.jpg"], ex / "out.jpg", "a cat on the grass", "cat")
    sid = wb.save_sample(sample, user=None, dataset="served-files", method="m0", names=["clip_i"]).sample_id
    wb.samples.set_for_rating("served-files", True, user=None)
    stored = wb.database.store.samples.get(sid)

    outputs = Client(served.url, auth=("carol", USERS["carol"]), verbose=False,
                     download_files=False).predict(api_name="/rate_open")
    refs, out = outputs[3], outputs[4]
    out = out.get("value", out)  # the first task after the page opened sets the box's visibility too
    for shown, sha in ((refs, stored.references[0]), (out, stored.output)):
        assert Path(shown["path"]).parent == wb.ratings.image_folder, shown  # not a copy in Gradio's cache
        url = shown["url"]
        assert url.startswith(f"{served.url}/gradio_api/file="), url
        with _logged_in(served.url, "carol") as http:
            got = http.get(url.removeprefix(served.url))
        assert got.status_code == 200 and got.content == wb.database.store.images.read(sha)
        assert httpx.get(url).status_code == 401  # no login, no image
    # The data directory stays closed, even to a logged-in user.
    database_file = next(p for p in served.data_dir.rglob("*") if p.is_file())
    with _logged_in(served.url, "carol") as http:
        assert http.get(f"/gradio_api/file={database_file}").status_code == 403

    # An API client downloads the files as it always did.
    downloaded = Client(served.url, auth=("carol", USERS["carol"]), verbose=False).predict(api_name="/rate_open")
    assert Path(downloaded[4] if isinstance(downloaded[4], str) else downloaded[4]["value"]).read_bytes() \
        == wb.database.store.images.read(stored.output)
