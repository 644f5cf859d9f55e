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


def resolve_weights_folder(ref: str, *, marker: str, what: str, setting: str, cache_dir: Path) -> Path:
    """The local folder of the released weights `ref` names, holding `marker` (a file or folder of the release).

    - an existing folder: itself, or the one folder inside it that holds `marker` (an archive extracted with its
      top folder);
    - a local `.zip` file, or an `http(s)://` / `file://` URL of one (downloaded into `cache_dir` on first use):
      extracted once into `<cache_dir>/<zip name without .zip>/`.

    Raises `ModelUnavailableError` naming `what`, `ref` and the env var of `setting`.
    """
    env = f"MASC_{setting.upper()}"
    path = Path(ref).expanduser()
    if path.is_dir():
        return _folder_holding(path, marker, what=what, env=env)
    if path.is_file() and path.suffix == ".zip":
        archive = path
    elif ref.startswith(URL_PREFIXES):
        archive = _download(ref, what=what, env=env, cache_dir=cache_dir)
    else:
        raise ModelUnavailableError(
            f"{what}: {ref} does not exist. Set {env} to the folder of the extracted release, the release zip (or "
            "its URL), or use the demo profile (tiny random weights)."
        )
    target = Path(cache_dir) / archive.name.removesuffix(".zip")
    if not target.is_dir():
        _extract(archive, target, what=what, env=env)
    return _folder_holding(target, marker, what=what, env=env)


def _extract(archive: Path, target: Path, *, what: str, env: str) -> None:
    """Unzip `archive` into a temporary sibling of `target`, renamed into place when complete."""
    import shutil
    import zipfile

    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(tmp)  # zipfile drops absolute paths and ".." parts: nothing lands outside tmp
    except (zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelUnavailableError(
            f"{what}: {archive} is not a readable zip archive ({exc}). Delete it and download it again, or set {env} "
            "to the extracted folder."
        ) from exc
    try:
        tmp.rename(target)
    except OSError:
        if not target.is_dir():  # another process extracting the same archive finished first: keep its folder
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def _folder_holding(folder: Path, marker: str, *, what: str, env: str) -> Path:
    if (folder / marker).exists():
        return folder
    inner = [child for child in sorted(folder.iterdir()) if child.is_dir() and (child / marker).exists()]
    if len(inner) == 1:
        return inner[0]
    raise ModelUnavailableError(
        f"{what}: the folder {folder} holds no {marker}; it is not the extracted release. Point {env} at the "
        "folder the release archive was extracted into, or at the archive's URL."
    )
