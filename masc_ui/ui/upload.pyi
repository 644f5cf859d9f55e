"""An image upload box (drag and drop, paste, file picker) that hands the raw file to the workbench.

`gr.Image` opens uploads with Pillow before any handler runs, so a non-image, a truncated file or a
decompression bomb fails inside Gradio with a generic message. `ImageUpload` shows the same widget
(`is_template`: the frontend is gr.Image's) but passes the uploaded file's path unopened, so that
`masc_ui.imaging.load_image` checks it and the UI shows its specific message.
"""
from __future__ import annotations

import gradio as gr
from gradio.data_classes import ImageData
from gradio import processing_utils

from gradio.events import Dependency

class ImageUpload(gr.Image):
    """Construct with `type="filepath"` (the only type it returns). No `__init__` of its own: Gradio builds the
    frontend config from the signature of `gr.Image.__init__`."""

    is_template = True

    def preprocess(self, payload: ImageData | None) -> str | None:
        """The uploaded file's path (data: URLs are written to the cache first), not opened."""
        if payload is None:
            return None
        if payload.url and payload.url.startswith("data:"):
            return processing_utils.save_base64_to_cache(payload.url, cache_dir=self.GRADIO_CACHE)
        return payload.path
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component