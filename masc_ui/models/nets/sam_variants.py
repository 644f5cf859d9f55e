"""Segment Anything variants: one architecture table, one builder, one loader for every checkpoint.

The real checkpoints (`vit_b`, `vit_l`, `vit_h`) and our tiny offline `vit_tiny` are assembled by the same
code from `segment_anything.modeling` parts and filled from a plain state dict (`torch.save(sam.state_dict())`),
so the tests load the demo weights exactly the way the official files are loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer

from ...errors import InputError, ModelUnavailableError


@dataclass(frozen=True)
class SamArchitecture:
    """Hyper-parameters of one SAM variant (the official values are those of `segment_anything.build_sam`)."""

    encoder_embed_dim: int
    """Width of the ViT image encoder."""
    encoder_depth: int
    """Number of ViT blocks."""
    encoder_num_heads: int
    """Attention heads per ViT block."""
    encoder_global_attn_indexes: tuple[int, ...]
    """Blocks with global attention; the others use windowed attention."""
    image_size: int = 1024
    """Side of the square model input in pixels: images are resized so their longest side is this, then padded."""
    patch_size: int = 16
    """ViT patch side in pixels; the image embedding is (image_size / patch_size)^2."""
    window_size: int = 14
    """Side of the attention windows, in patches."""
    prompt_embed_dim: int = 256
    """Channels of the image embedding and of the prompt tokens."""
    decoder_mlp_dim: int = 2048
    """Hidden size of the two-way transformer's MLPs."""
    decoder_num_heads: int = 8
    """Attention heads of the mask decoder."""
    iou_head_hidden_dim: int = 256
    """Hidden size of the mask-quality (IoU) prediction head."""
    mask_in_chans: int = 16
    """Channels used to embed a previous low-resolution mask given as prompt."""

    @property
    def embedding_size(self) -> int:
        """Side of the image embedding grid (64 for the official models)."""
        return self.image_size // self.patch_size

    @property
    def low_res_size(self) -> int:
        """Side of the low-resolution mask logits the decoder returns (256 for the official models)."""
        return 4 * self.embedding_size


SAM_ARCHITECTURES: dict[str, SamArchitecture] = {
    "vit_h": SamArchitecture(1280, 32, 16, (7, 15, 23, 31)),
    "vit_l": SamArchitecture(1024, 24, 16, (5, 11, 17, 23)),
    "vit_b": SamArchitecture(768, 12, 12, (2, 5, 8, 11)),
    # Offline demo/test variant: same parts, tiny widths, 256-pixel input (low-res logits 64x64).
    "vit_tiny": SamArchitecture(
        32,
        2,
        2,
        (1,),
        image_size=256,
        window_size=8,
        prompt_embed_dim=32,
        decoder_mlp_dim=64,
        decoder_num_heads=2,
        iou_head_hidden_dim=32,
        mask_in_chans=8,
    ),
}


def build_sam(variant: str, checkpoint: str | Path | None = None) -> Sam:
    """Assemble the SAM `variant` (in eval mode, on CPU) and, if given, load the state dict in `checkpoint`.

    Without a checkpoint the weights are PyTorch's random initialisation (used to build the demo weights and
    by the benchmark). Raises `InputError` for an unknown variant, `ModelUnavailableError` for a missing,
    unreadable or mismatched checkpoint file.
    """
    arch = sam_architecture(variant)
    sam = Sam(
        image_encoder=ImageEncoderViT(
            depth=arch.encoder_depth,
            embed_dim=arch.encoder_embed_dim,
            img_size=arch.image_size,
            mlp_ratio=4,
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
            num_heads=arch.encoder_num_heads,
            patch_size=arch.patch_size,
            qkv_bias=True,
            use_rel_pos=True,
            global_attn_indexes=arch.encoder_global_attn_indexes,
            window_size=arch.window_size,
            out_chans=arch.prompt_embed_dim,
        ),
        prompt_encoder=PromptEncoder(
            embed_dim=arch.prompt_embed_dim,
            image_embedding_size=(arch.embedding_size, arch.embedding_size),
            input_image_size=(arch.image_size, arch.image_size),
            mask_in_chans=arch.mask_in_chans,
        ),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(
                depth=2,
                embedding_dim=arch.prompt_embed_dim,
                mlp_dim=arch.decoder_mlp_dim,
                num_heads=arch.decoder_num_heads,
            ),
            transformer_dim=arch.prompt_embed_dim,
            iou_head_depth=3,
            iou_head_hidden_dim=arch.iou_head_hidden_dim,
        ),
        pixel_mean=[123.675, 116.28, 103.53],
        pixel_std=[58.395, 57.12, 57.375],
    )
    sam.eval()
    if checkpoint is not None:
        state = _read_state_dict(variant, Path(checkpoint))
        _check_fits(sam, state, variant, checkpoint)
        sam.load_state_dict(state)
    return sam


# name -> builder(checkpoint=None) -> Sam, in the manner of segment_anything's `sam_model_registry`.
SAM_BUILDERS: dict[str, Callable[..., Sam]] = {name: partial(build_sam, name) for name in SAM_ARCHITECTURES}


def list_sam_variants() -> list[str]:
    return list(SAM_ARCHITECTURES)


def sam_architecture(variant: str) -> SamArchitecture:
    try:
        return SAM_ARCHITECTURES[variant]
    except KeyError:
        raise InputError(f"SAM variant {variant!r} is unknown; use one of {', '.join(SAM_ARCHITECTURES)}") from None


def _read_state_dict(variant: str, path: Path) -> dict[str, torch.Tensor]:
    what = f"Segment Anything {variant} checkpoint {path}"
    if not path.is_file():
        raise ModelUnavailableError(
            f"{what} does not exist. Pass the path of a downloaded .pth file, leave the "
            "checkpoint unset to download the official one, or run `masc-ui demo-weights`."
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, EOFError... for bad files
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelUnavailableError(
            f"{what} cannot be read ({reason}); the file is damaged or not a SAM state dict: download it again"
        ) from exc
    if not isinstance(state, dict):
        raise ModelUnavailableError(f"{what} holds a {type(state).__name__}, not a state dict")
    return state


def _check_fits(sam: Sam, state: dict[str, torch.Tensor], variant: str, checkpoint: str | Path) -> None:
    expected = {k: tuple(v.shape) for k, v in sam.state_dict().items()}
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    wrong = sorted(k for k in set(expected) & set(state) if tuple(getattr(state[k], "shape", ())) != expected[k])
    if missing or unexpected or wrong:
        example = (missing or unexpected or wrong)[0]
        raise ModelUnavailableError(
            f"Segment Anything checkpoint {checkpoint} does not fit the {variant} architecture ({len(missing)} "
            f"missing, {len(unexpected)} unexpected, {len(wrong)} wrongly shaped weights, e.g. {example!r}); "
            f"check that the variant matches the file (variants: {', '.join(SAM_ARCHITECTURES)})"
        )
