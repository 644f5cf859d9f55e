"""Reading a user's file (an image, a mask or a video) from a path or bytes, with one size rule and one message
style: only regular files, at most a given number of bytes, never an empty file."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import InputError

MAX_FILE_BYTES = 512 * 1024 * 1024
"""Largest image or mask file read (bytes); videos have their own limit (`VideoLimits.max_bytes`)."""


def read_file_bytes(src: str | Path | bytes, name: str, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes, str]:
    """The bytes of a file path or a bytes object, and the label messages use for them. Only regular files are
    read (a device such as /dev/zero, a pipe or a socket is refused), and at most `max_bytes` of them."""
    if isinstance(src, (str, Path)):
        path = Path(src)
        try:
            info = path.stat()
        except FileNotFoundError:
            raise InputError(f"{name}: file not found: {path}") from None
        except OSError as exc:
            raise InputError(f"{name}: cannot read {path} ({exc.strerror or type(exc).__name__})") from None
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{name}: {path} is a folder, not an image file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{name}: {path} is not a regular file (a device, pipe or socket); give an image file")
        if info.st_size > max_bytes:
            raise InputError(
                f"{name}: {path} is {bytes_text(info.st_size)}, over the limit of "
                f"{bytes_text(max_bytes)}; downscale or re-encode it"
            )
        try:
            with open(path, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputError(f"{name}: cannot read {path} ({exc.strerror or type(exc).__name__})") from None
        if len(data) > max_bytes:
            raise InputError(f"{name}: {path} grew past the limit of {bytes_text(max_bytes)} while being read")
        label = f"{name} ({path.name})"
    elif isinstance(src, (bytes, bytearray)):
        data = bytes(src)
        label = name
    else:
        raise InputError(f"{name}: expected a file path, bytes, a PIL image or an array, got {type(src).__name__}")
    if not data:
        raise InputError(f"{label}: the file is empty")
    return data, label


def bytes_text(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"
