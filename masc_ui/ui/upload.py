"""An image upload box (drag and drop, paste, file picker) that hands the uploaded file to the workbench unopened,
and only files that were uploaded.

`gr.Image` opens uploads with Pillow before any handler runs, so a non-image, a truncated file or a
decompression bomb fails inside Gradio with a generic message. `ImageUpload` shows the same widget
(`is_template`: the frontend is gr.Image's) but passes the uploaded file's path unopened, so that
`masc_ui.imaging` checks it and the UI shows its specific message.

The path comes from the client, so it is checked before anything opens it (`uploaded_path`): it must name a
regular file inside Gradio's upload cache (symbolic links resolved), of at most the app's upload limit. A path
anywhere else (`{"path": "/etc/passwd"}` sent without Gradio's file marker), a folder, a device such as
`/dev/zero` or a missing file all get the same answer, so the answer does not tell whether a path exists.
"""

from __future__ import annotations

import os
import stat

import gradio as gr
from gradio import processing_utils
from gradio.context import LocalContext
from gradio.data_classes import ImageData

NOT_UPLOADED = (
    "that image was not uploaded to this app (or its upload expired): upload it again "
    "(drag and drop, paste or pick a file)"
)
DATA_URL_OVERHEAD = 4 / 3
"""Base64 inflates bytes by 4/3: a data: URL longer than the upload limit times this is refused unread."""


class UploadRefused(gr.Error):
    """A client named a file it did not upload (shown to the user as it is, with nothing about the path)."""


def uploaded_path(path: str | os.PathLike | None, cache_dir: str, max_bytes: int | None) -> str:
    """`path` resolved, when it is a regular file inside `cache_dir` of at most `max_bytes` (None: no limit);
    UploadRefused with the same message otherwise."""
    try:
        real = os.path.realpath(os.fspath(path))  # type: ignore[arg-type]
        cache = os.path.realpath(cache_dir)
        info = os.stat(real)
    except (OSError, TypeError, ValueError):
        raise UploadRefused(NOT_UPLOADED) from None
    inside = real != cache and os.path.commonpath([real, cache]) == cache
    if not inside or not stat.S_ISREG(info.st_mode) or (max_bytes is not None and info.st_size > max_bytes):
        raise UploadRefused(NOT_UPLOADED)
    return real


def upload_limit() -> int | None:
    """The running app's upload limit in bytes (`launch(max_file_size=...)`), None outside a request."""
    blocks = LocalContext.blocks.get(None)
    limit = getattr(blocks, "max_file_size", None)
    return int(limit) if isinstance(limit, (int, float)) else None


class ImageUpload(gr.Image):
    """Construct with `type="filepath"` (the only type it returns). No `__init__` of its own: Gradio builds the
    frontend config from the signature of `gr.Image.__init__`."""

    is_template = True

    def preprocess(self, payload: ImageData | None) -> str | None:
        """The uploaded file's path (data: URLs are written to the cache first), checked, not opened."""
        if payload is None:
            return None
        limit = upload_limit()
        if payload.url and payload.url.startswith("data:"):
            if limit is not None and len(payload.url) > limit * DATA_URL_OVERHEAD + 1024:
                raise UploadRefused("the pasted image is larger than the upload limit; upload a smaller file")
            saved = processing_utils.save_base64_to_cache(payload.url, cache_dir=self.GRADIO_CACHE)
            return uploaded_path(saved, self.GRADIO_CACHE, limit)
        return uploaded_path(payload.path, self.GRADIO_CACHE, limit)
