"""Segmentation: Segment Anything from clicks and boxes, SAM 3 from the subject's name, mask utilities.

from masc_ui.segmentation import SamService, TextSegmenter
sam = SamService("vit_b")                                    # official checkpoint, downloaded on first use
job = sam.encode_in_background(image)                        # on upload: the first click finds it ready
pred = sam.predict(image, points=[(120, 80, 1)])             # XY pixels, label 1 = subject
pred = sam.predict(image, points=[(120, 80, 1), (40, 30, 0)],
                   prev_low_res_logits=pred.best_low_res_logits)  # refine; same image -> no re-encoding
seg = TextSegmenter("facebook/sam3").segment(image, "hat")   # seg.mask, seg.doubtful, seg.reason
"""

from ..caching import CacheInfo
from ..models.nets.sam_variants import SAM_ARCHITECTURES, SAM_BUILDERS, SamArchitecture, build_sam, list_sam_variants
from .builders import build_sam_service, build_text_segmenter
from .masks import (
    as_bool_mask,
    clean_mask,
    mask_fraction,
    mask_from_editor,
    mask_from_file,
    mask_from_png,
    mask_to_png,
    overlay_mask,
    resize_mask,
)
from .sam_background import EncodeCancelled, PreEncode
from .sam_checkpoints import OFFICIAL_CHECKPOINTS, CheckpointSource, download_checkpoint, resolve_checkpoint
from .sam_service import ImageEmbedding, SamPrediction, SamService
from .text_segmenter import DEFAULT_SAM3, TextSegmentation, TextSegmenter, combine_instances, segment_by_text

__all__ = [
    "build_sam_service",
    "build_text_segmenter",
    "CacheInfo",
    "as_bool_mask",
    "clean_mask",
    "mask_fraction",
    "mask_from_editor",
    "mask_from_file",
    "mask_from_png",
    "mask_to_png",
    "overlay_mask",
    "resize_mask",
    "OFFICIAL_CHECKPOINTS",
    "CheckpointSource",
    "download_checkpoint",
    "resolve_checkpoint",
    "EncodeCancelled",
    "ImageEmbedding",
    "PreEncode",
    "SamPrediction",
    "SamService",
    "SAM_ARCHITECTURES",
    "SAM_BUILDERS",
    "SamArchitecture",
    "build_sam",
    "list_sam_variants",
    "DEFAULT_SAM3",
    "TextSegmentation",
    "TextSegmenter",
    "combine_instances",
    "segment_by_text",
]
