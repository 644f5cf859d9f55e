"""The image editors' server-side blobs: bounded per page session and dropped when the session ends.

Gradio's ImageEditor has one server function, `accept_blobs` (`POST /gradio_api/component_server`). An editor that
sends its layers while the user draws (one with a change or input event) posts its background, composite and each
layer as a blob under a random id, and the next event reads them by that id (`ImageEditor.preprocess`). Gradio
keeps them in a dict on the component, shared by the sessions, grows the list of layers to whatever index the
caller names, and drops an edit only when an event reads it: edits that no event reads stay as long as the process.

`BrushEditor` is that editor with its blobs in the app's `EditorBlobs` instead:
- a blob is a background, a composite or a layer of index 0 .. `MAX_EDITOR_LAYERS` - 1, under an id of at most
  `MAX_BLOB_ID` characters (HTTP 422 otherwise);
- one page session holds at most `SESSION_UPLOADS` upload limits (`Settings.max_upload_mb`) of blobs (HTTP 413
  beyond: apply the edit or reload the page); each blob is at most one upload limit already (Gradio's form parser);
- at most `MAX_EDITOR_SESSIONS` sessions hold blobs at once (the client names its session): one more drops the
  blobs of the session that sent one least recently;
- an edit is dropped when an event reads it, and a session's blobs when the session ends (Gradio's unload event,
  run when the page's heartbeat stops: `attach`).
The app's editors send their layers as uploads (they have no change or input event) and never call it; the bounds
hold for whoever does (the route itself is for admins only: `route_gate`).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
from fastapi import HTTPException
from gradio.components.base import server
from gradio.components.image_editor import EditorDataBlobs
from gradio.context import LocalContext

from ..errors import InputError
from ..settings import Settings

MiB = 1024 * 1024
MAX_EDITOR_LAYERS = 4
"""Layers an editor may send blobs for (indices 0 .. 3); the app's editors have one brush layer each."""
SESSION_UPLOADS = 3
"""Blobs one page session may hold, in upload limits: a background and a composite each as large as an upload,
and the layers."""
MAX_EDITOR_SESSIONS = 4
"""Page sessions whose blobs are kept at once."""
MAX_BLOB_ID = 64
"""Longest blob id accepted (the browser's are about 11 characters)."""
BLOB_KINDS = ("background", "composite", "layer")


class BlobRefused(InputError):
    """An editor blob that is not kept; `status` is the HTTP status that says why (409, 413 or 422)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _SessionBlobs:
    edits: dict[str, EditorDataBlobs] = field(default_factory=dict)
    """Blob id -> the blobs of that edit."""
    nbytes: int = 0


class EditorBlobs(Mapping[str, EditorDataBlobs]):
    """The blobs of every page session's image editors, by blob id (as `ImageEditor.preprocess` reads and pops
    them): at most `max_session_bytes` per session and `max_sessions` sessions at once (see the module docstring).
    Thread-safe: blobs arrive in worker threads."""

    def __init__(
        self, max_session_bytes: int, max_sessions: int = MAX_EDITOR_SESSIONS, max_layers: int = MAX_EDITOR_LAYERS
    ) -> None:
        self.max_session_bytes = max_session_bytes
        self.max_sessions = max_sessions
        self.max_layers = max_layers
        self._sessions: OrderedDict[str, _SessionBlobs] = OrderedDict()
        self._session_of: dict[str, str] = {}
        """Blob id -> the session that sent it."""
        self._lock = threading.Lock()

    def put(self, session: str, blob_id: str, kind: str, index: int | None, data: bytes) -> None:
        """Keep `data` as the `kind` blob (layer `index`) of edit `blob_id` of page session `session`; BlobRefused
        saying why when it is not kept (nothing is kept then)."""
        self._check(session, blob_id, kind, index)
        with self._lock:
            owner = self._session_of.get(blob_id, session)
            if owner != session:
                raise BlobRefused(
                    f"editor blob id {blob_id!r} belongs to another page session: send the edit under a new id", 409
                )
            held = self._sessions.get(session) or _SessionBlobs()
            edit = held.edits.get(blob_id) or EditorDataBlobs(background=None, layers=[], composite=None)
            nbytes = held.nbytes - len(_blob(edit, kind, index) or b"") + len(data)
            if nbytes > self.max_session_bytes:
                raise BlobRefused(
                    f"this page session's image editors already hold {_size_text(held.nbytes)} of edits that no "
                    f"event has read, and one session holds at most {_size_text(self.max_session_bytes)}: apply "
                    "the edit or reload the page",
                    413,
                )
            _set_blob(edit, kind, index, data)
            held.edits[blob_id], held.nbytes = edit, nbytes
            self._sessions[session] = held
            self._sessions.move_to_end(session)
            self._session_of[blob_id] = session
            while len(self._sessions) > self.max_sessions:
                self._drop(next(iter(self._sessions)))

    def pop(self, blob_id: str, default: Any = None) -> EditorDataBlobs | Any:
        """Edit `blob_id`'s blobs, no longer kept (`default` when none are)."""
        with self._lock:
            session = self._session_of.pop(blob_id, None)
            if session is None:
                return default
            held = self._sessions[session]
            edit = held.edits.pop(blob_id)
            held.nbytes -= _size(edit)
            if not held.edits:
                del self._sessions[session]
            return edit

    def end_session(self, session: str | None) -> None:
        """Drop every blob of page session `session`."""
        with self._lock:
            self._drop(session)

    def held_bytes(self, session: str | None = None) -> int:
        """Bytes kept for `session`, or for every session when None."""
        with self._lock:
            if session is not None:
                held = self._sessions.get(session)
                return held.nbytes if held else 0
            return sum(held.nbytes for held in self._sessions.values())

    def __getitem__(self, blob_id: str) -> EditorDataBlobs:
        with self._lock:
            return self._sessions[self._session_of[blob_id]].edits[blob_id]

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._session_of))

    def __len__(self) -> int:
        return len(self._session_of)

    def _check(self, session: str, blob_id: str, kind: str, index: int | None) -> None:
        if not session:
            raise BlobRefused("an editor blob needs the page session it belongs to (session_hash)", 422)
        if not blob_id or len(blob_id) > MAX_BLOB_ID:
            raise BlobRefused(f"an editor blob needs an id of 1 to {MAX_BLOB_ID} characters", 422)
        if kind not in BLOB_KINDS:
            raise BlobRefused(f"unknown editor blob type {kind[:40]!r}: expected one of {', '.join(BLOB_KINDS)}", 422)
        if kind == "layer" and (index is None or not 0 <= index < self.max_layers):
            raise BlobRefused(
                f"layer index {index} is out of range: an image editor here has at most "
                f"{self.max_layers} layers (index 0 to {self.max_layers - 1})",
                422,
            )

    def _drop(self, session: str | None) -> None:
        held = self._sessions.pop(session, None) if session is not None else None
        for blob_id in held.edits if held else ():
            self._session_of.pop(blob_id, None)


def _blob(edit: EditorDataBlobs, kind: str, index: int | None) -> bytes | None:
    if kind == "layer":
        return edit.layers[index] if index is not None and index < len(edit.layers) else None
    return getattr(edit, kind)


def _set_blob(edit: EditorDataBlobs, kind: str, index: int | None, data: bytes) -> None:
    if kind == "layer" and index is not None:
        edit.layers.extend([None] * (index + 1 - len(edit.layers)))
        edit.layers[index] = data
    else:
        setattr(edit, kind, data)


def _size(edit: EditorDataBlobs) -> int:
    return sum(len(blob or b"") for blob in (edit.background, edit.composite, *edit.layers))


def _size_text(nbytes: int) -> str:
    if nbytes < 1024:
        return f"{nbytes} bytes"
    if nbytes < MiB:
        return f"{round(nbytes / 1024, 1):g} KiB"
    return f"{round(nbytes / MiB, 1):g} MiB"


def blob_index(text: Any) -> int | None:
    """A blob's layer index as the browser sends it: None for no index ("", "null"), else a whole number
    (BlobRefused otherwise)."""
    if text in (None, "", "null"):
        return None
    try:
        return int(str(text))
    except ValueError:
        raise BlobRefused(f"layer index {str(text)[:40]!r} is not a whole number", 422) from None


_APP_BLOBS: weakref.WeakKeyDictionary[gr.Blocks, EditorBlobs] = weakref.WeakKeyDictionary()
"""Each built app's blobs (`attach`); an app's editors find theirs through the app running the request."""


def attach(app: gr.Blocks, settings: Settings) -> Callable[[gr.Request], None]:
    """Give `app` its `EditorBlobs` (`SESSION_UPLOADS` times `settings.max_upload_mb` per session) and drop a page
    session's blobs when it ends (Gradio's unload event). Returns the unload handler: every role's sessions end,
    so it belongs among `roles.guard_endpoints`' `for_raters`."""
    blobs = EditorBlobs(max_session_bytes=SESSION_UPLOADS * settings.max_upload_mb * MiB)
    _APP_BLOBS[app] = blobs

    def end_editor_session(request: gr.Request) -> None:
        blobs.end_session(request.session_hash)

    app.unload(end_editor_session)
    return end_editor_session


def blobs_of(app: gr.Blocks | None) -> EditorBlobs | None:
    """`app`'s blobs (`attach`), None for an app that has none."""
    return _APP_BLOBS.get(app) if app is not None else None


class BrushEditor(gr.ImageEditor):
    """gr.ImageEditor whose blobs live in the running app's `EditorBlobs` (see the module docstring). The same
    widget (`is_template`: the frontend is gr.ImageEditor's); no `__init__` of its own: Gradio builds the
    frontend config from the signature of `gr.ImageEditor.__init__`."""

    is_template = True

    @property
    def blob_storage(self) -> Mapping[str, EditorDataBlobs]:  # type: ignore[override]
        """The running app's blobs (what Gradio's `preprocess` reads and pops); empty outside a request."""
        blobs = blobs_of(LocalContext.blocks.get(None))
        return blobs if blobs is not None else {}

    @blob_storage.setter
    def blob_storage(self, value: Any) -> None:
        """Ignored: `gr.ImageEditor.__init__` sets a dict of the component's own, unbounded and kept forever."""

    @server
    def accept_blobs(self, data: Any) -> None:
        """Keep one blob of an edit (a multipart form: type, index, id, session_hash and one file) in the app's
        `EditorBlobs`; an HTTP error with the reason when it is not kept."""
        blobs = blobs_of(LocalContext.blocks.get(None))
        fields, files = getattr(data, "data", None), getattr(data, "files", None)
        if blobs is None:
            raise HTTPException(status_code=404, detail="this app keeps no image-editor blobs")
        if not isinstance(fields, dict) or not files:
            raise HTTPException(
                status_code=422,
                detail="an image-editor blob is a multipart form with its type, index, id, session_hash and one file",
            )
        try:
            blobs.put(
                str(fields.get("session_hash") or ""),
                str(fields.get("id") or ""),
                str(fields.get("type") or ""),
                blob_index(fields.get("index")),
                files[0][1],
            )
        except BlobRefused as exc:
            raise HTTPException(status_code=exc.status, detail=str(exc)) from None
