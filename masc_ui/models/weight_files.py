"""Single weight files (state dicts, ONNX packs) named in the settings: a local file or folder, an http(s)/file
URL downloaded once into the cache folder, or a Hugging Face repo id holding the file. One clear
`ModelUnavailableError` naming the setting when the file cannot be had.

Used by the scorers whose released weights are not `save_pretrained` checkpoints (FaceSim's IR-101,
FaceScore's `FS_model.pt`, RetinaFace, ArtScore).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelUnavailableError
from .loading import is_local

URL_PREFIXES = ("http://", "https://", "file://")


def resolve_weights_file(ref: str, *, filename: str, what: str, setting: str, cache_dir: Path) -> Path:
    """The local path of the weights file `ref` names.

    - an existing file: itself; an existing folder: `<folder>/<filename>` (which must exist);
    - an `http(s)://` or `file://` URL: `<cache_dir>/<last path part>`, downloaded there on first use;
    - otherwise a Hugging Face repo id: `filename` in it (from the local Hugging Face cache when offline).

    Raises `ModelUnavailableError` naming `what`, `ref` and the env var of `setting` (e.g. `MASC_FACE_RECOGNIZER`).
    """
    env = f"MASC_{setting.upper()}"
    path = Path(ref).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        inner = path / filename
        if not inner.is_file():
            raise ModelUnavailableError(
                f"{what}: the folder {ref} has no {filename}. Put the released file there, "
                f"or point {env} at the file itself."
            )
        return inner
    if ref.startswith(URL_PREFIXES):
        return _download(ref, what=what, env=env, cache_dir=cache_dir)
    if is_local(ref) or ref.count("/") != 1:
        raise ModelUnavailableError(
            f"{what}: {ref} does not exist. Set {env} to the downloaded file (or its "
            "folder), a Hugging Face repo id, or use the demo profile (tiny random weights)."
        )
    return _from_hub(ref, filename, what=what, env=env)


def _download(url: str, *, what: str, env: str, cache_dir: Path) -> Path:
    target = Path(cache_dir) / url.rstrip("/").rsplit("/", 1)[-1]
    if target.is_file():
        return target
    import torch.hub

    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        torch.hub.download_url_to_file(url, str(target), progress=True)  # writes a temp file, renames when done
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(
            f"{what}: could not download {url} ({exc}). On a machine without internet, download it elsewhere, "
            f"copy it here and set {env} to its path."
        ) from exc
    return target


def _from_hub(repo_id: str, filename: str, *, what: str, env: str) -> Path:
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id, filename))
    except Exception as exc:  # the hub client raises its own types (offline, 404, gated) — all mean "unavailable"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelUnavailableError(
            f"{what}: could not get {filename} from the Hugging Face repo {repo_id!r} ({reason}). Download it on a "
            f"machine with internet and set {env} to the local file or folder, or use the demo profile."
        ) from exc
