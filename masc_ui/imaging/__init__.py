"""The only place that opens user media: images, masks and videos (validation, EXIF, modes, size limits, frame
sampling). Each returns decoded inputs that carry their content hash.

- `images`: `open_image` -> `InputImage` (RGB pixels, stored bytes, media type, `sha256`), `load_image`,
  `encode_png` (the one PNG encoding of masks and posters);
- `masks`: `load_mask_file`, `load_mask_alpha`, `as_mask_array` (the foreground rule of mask files);
- `video`: `open_video` -> `InputVideo`, frame sampling rules, `read_frames` / `iter_frames`, `without_metadata`;
  `open_media` opens either kind;
- `files`: reading a file with the size rule all of them share.
"""

from .files import MAX_FILE_BYTES
from .images import (
    DEFAULT_MAX_PIXELS,
    KEPT_FORMATS,
    ImageSource,
    InputImage,
    as_input_image,
    encode_png,
    load_image,
    natural_frame_jpeg,
    open_image,
)
from .masks import as_mask_array, load_mask_alpha, load_mask_file
from .video import (
    ALL_FRAMES,
    VIDEO_RULES,
    FrameRule,
    FrameSampling,
    InputVideo,
    VideoFrame,
    VideoLimits,
    iter_frames,
    linspace_indices,
    looks_like_video,
    open_media,
    open_video,
    poster_frame,
    read_frames,
    stride_indices,
    without_metadata,
)

__all__ = [
    "ALL_FRAMES",
    "DEFAULT_MAX_PIXELS",
    "KEPT_FORMATS",
    "MAX_FILE_BYTES",
    "VIDEO_RULES",
    "FrameRule",
    "FrameSampling",
    "ImageSource",
    "InputImage",
    "InputVideo",
    "VideoFrame",
    "VideoLimits",
    "as_input_image",
    "as_mask_array",
    "encode_png",
    "iter_frames",
    "linspace_indices",
    "load_image",
    "load_mask_alpha",
    "load_mask_file",
    "looks_like_video",
    "natural_frame_jpeg",
    "open_image",
    "open_media",
    "open_video",
    "poster_frame",
    "read_frames",
    "stride_indices",
    "without_metadata",
]
