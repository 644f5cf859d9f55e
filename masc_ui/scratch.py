"""The per-process folder for files handed to the browser (exports, extra references of an opened sample)."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import deque
from pathlib import Path


class ScratchSpace:
    """Fresh folders under one temporary root owned by the workbench.

    Gradio copies every file a handler returns into its own cache when it sends the response, so only the
    `keep` most recent folders are kept; the whole root is removed when the process exits.
    """

    def __init__(self, keep: int = 16) -> None:
        self._root = tempfile.TemporaryDirectory(prefix="masc-scratch-")
        self._keep = keep
        self._made: deque[Path] = deque()
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        return Path(self._root.name)

    def new_folder(self) -> Path:
        """An empty folder of its own; the oldest beyond `keep` are deleted."""
        with self._lock:
            folder = Path(tempfile.mkdtemp(dir=self._root.name))
            self._made.append(folder)
            while len(self._made) > self._keep:
                shutil.rmtree(self._made.popleft(), ignore_errors=True)
        return folder
