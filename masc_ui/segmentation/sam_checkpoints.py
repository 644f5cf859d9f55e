"""Where SAM checkpoints come from: a local file, or the official download cached on first use.

The official files (https://github.com/facebookresearch/segment-anything#model-checkpoints) are checked
against their published size and SHA-256 before they are used. A download goes into a temporary file in the
cache folder and is renamed into place only after the check passes, so an interrupted or corrupted download
never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tqdm import tqdm

from ..errors import ModelUnavailableError
from ..models.nets.sam_variants import SAM_ARCHITECTURES

_CHUNK = 1 << 20


@dataclass(frozen=True)
class CheckpointSource:
    """One downloadable checkpoint file."""

    url: str
    """Where to download it from."""
    sha256: str
    """Hex SHA-256 of the complete file."""
    size: int
    """Size of the complete file in bytes."""

    @property
    def filename(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


_BASE = "https://dl.fbaipublicfiles.com/segment_anything/"
OFFICIAL_CHECKPOINTS: dict[str, CheckpointSource] = {
    "vit_h": CheckpointSource(
        _BASE + "sam_vit_h_4b8939.pth",
        "a7bf3b02f3ebf1267aba913ff637d9a2d5c33d3173bb679e46d9f338c26f262e",
        2_564_550_879,
    ),
    "vit_l": CheckpointSource(
        _BASE + "sam_vit_l_0b3195.pth",
        "3adcc4315b642a4d2101128f611684e8734c41232a17c648ed1693702a49a622",
        1_249_524_607,
    ),
    "vit_b": CheckpointSource(
        _BASE + "sam_vit_b_01ec64.pth", "ec2df62732614e57411cdcf32a23ffdf28910380d03139ee0f4fcbe91eb8c912", 375_042_383
    ),
}

Opener = Callable[[str], BinaryIO]


def resolve_checkpoint(
    variant: str, checkpoint: str | Path | None, cache_dir: str | Path, *, progress: bool = True
) -> Path:
    """The checkpoint file to load for `variant`: `checkpoint` when given (it must exist), otherwise the
    official file in `cache_dir`, downloaded on first use. Raises `ModelUnavailableError`."""
    if checkpoint is not None:
        path = Path(checkpoint).expanduser()
        if not path.is_file():
            raise ModelUnavailableError(
                f"Segment Anything {variant} checkpoint {path} does not exist. Pass the path of a downloaded .pth "
                "file, or leave the checkpoint unset to download the official one into the cache folder."
            )
        return path
    source = OFFICIAL_CHECKPOINTS.get(variant)
    if source is None:
        raise ModelUnavailableError(
            f"Segment Anything variant {variant!r} has no official download (official: "
            f"{', '.join(OFFICIAL_CHECKPOINTS)}; known variants: {', '.join(SAM_ARCHITECTURES)}); pass a local "
            "checkpoint file (for vit_tiny: `masc-ui demo-weights DIR` writes one)"
        )
    return download_checkpoint(source, cache_dir, progress=progress)


def download_checkpoint(
    source: CheckpointSource, cache_dir: str | Path, *, progress: bool = True, opener: Opener | None = None
) -> Path:
    """`cache_dir/<file name>`, downloading `source` there first if it is not present yet.

    The bytes are streamed into a temporary file next to the target (with a tqdm progress bar when
    `progress`), their size and SHA-256 compared with `source`, and the file renamed into place only when
    both match; a file already in place with the expected size is trusted (it was checked when it was
    downloaded; `sha256_file` re-checks one by hand). `opener(url)` returns a readable binary stream (default `urllib.request.urlopen`).
    Raises `ModelUnavailableError` when the download fails or the file does not match.
    """
    cache_dir = Path(cache_dir).expanduser()
    target = cache_dir / source.filename
    if target.is_file() and target.stat().st_size == source.size:
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelUnavailableError(
            f"cannot create the checkpoint cache folder {cache_dir} ({exc}); "
            "set cache_dir (MASC_CACHE_DIR) to a writable folder"
        ) from exc
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=f".{source.filename}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest, size = _stream(source, out, opener or _urlopen, progress)
        if size != source.size or digest != source.sha256:
            raise ModelUnavailableError(
                f"the download of {source.url} is corrupted ({size:,} bytes, SHA-256 {digest[:12]}..., expected "
                f"{source.size:,} bytes, SHA-256 {source.sha256[:12]}...); try again, or download it by hand and "
                f"check it with `sha256sum`, then pass the file as the SAM checkpoint"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _stream(source: CheckpointSource, out: BinaryIO, opener: Opener, progress: bool) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    try:
        with (
            opener(source.url) as response,
            tqdm(total=source.size, unit="B", unit_scale=True, desc=source.filename, disable=not progress) as bar,
        ):
            for block in iter(lambda: response.read(_CHUNK), b""):
                out.write(block)
                h.update(block)
                size += len(block)
                bar.update(len(block))
    except (urllib.error.URLError, OSError) as exc:
        raise ModelUnavailableError(
            f"could not download the Segment Anything checkpoint {source.url} ({exc}). On a machine without "
            f"internet, download it elsewhere, copy it here and pass it as the SAM checkpoint "
            "(--sam-checkpoint / MASC_SAM_CHECKPOINT), or use the offline demo profile (--profile demo / MASC_PROFILE=demo)"
        ) from exc
    return h.hexdigest(), size


def _urlopen(url: str) -> BinaryIO:
    return urllib.request.urlopen(url, timeout=60)  # noqa: S310 - fixed https URLs from OFFICIAL_CHECKPOINTS
