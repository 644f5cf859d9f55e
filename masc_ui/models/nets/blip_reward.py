"""The BLIP reward model of ImageReward (Xu et al. 2023, THUDM/ImageReward) and of FaceScore (Liao et al. 2024,
OPPO FaceScore, a fine-tune of it) rebuilt with transformers' BLIP classes, loading the released `ImageReward.pt` /
`FS_model.pt` + `med_config.json` (one key layout, one loader: `load_reward_model`).

Released key layout (the `ImageReward` module of THUDM/ImageReward that FaceScore's `load` instantiates:
`blip` = BLIP_Pretrain(vit="large", image_size=224) with its ViT and its BERT text encoder with cross-attention,
`mlp` = the reward head), mapped onto `BlipVisionModel` / `BlipTextModel` (`add_pooling_layer=False`):

    blip.visual_encoder.cls_token / pos_embed            -> vision.embeddings.class_embedding / position_embedding
    blip.visual_encoder.patch_embed.proj.{weight,bias}   -> vision.embeddings.patch_embedding.*
    blip.visual_encoder.blocks.<i>.norm1 / norm2         -> vision.encoder.layers.<i>.layer_norm1 / layer_norm2
    blip.visual_encoder.blocks.<i>.attn.qkv / attn.proj  -> vision.encoder.layers.<i>.self_attn.qkv / projection
    blip.visual_encoder.blocks.<i>.mlp.fc1 / fc2         -> vision.encoder.layers.<i>.mlp.fc1 / fc2
    blip.visual_encoder.norm                             -> vision.post_layernorm
    blip.text_encoder.<rest>                             -> text.<rest> (embeddings.{word,position}_embeddings,
                                                            embeddings.LayerNorm, encoder.layer.<i>.{attention,
                                                            crossattention,intermediate,output}.*: same names)
    mlp.layers.{0,2,4,6,7}.{weight,bias}                 -> head.{0,2,4,6,7}.* (Linear 768-1024-128-64-16-1,
                                                            dropouts between, no activations)
    blip.vision_proj.*, blip.text_proj.*                 -> required, unused (ITC projections, not in the score)
    blip.text_encoder.embeddings.position_ids            -> optional buffer; must equal 0..L-1 when present

Any other key, a missing one, or a shape that does not fit is an error naming the key. Sizes come from the
file: ViT width/depth/patch from the tensors (heads = width / 64, BLIP's ViT convention; ViT-L/16: 1024, 24,
16), text encoder from `med_config.json` (its cross-attention reads the ViT width, as ImageReward sets
`encoder_width`). The image side must be 224 px (the position table must hold (224 / patch)^2 + 1 rows).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ...errors import ModelUnavailableError
from ..state_dicts import check_keys

IMAGE_SIZE = 224
VIT_HEAD_DIM = 64
VIT_LAYER_NORM_EPS = 1e-6
HEAD_WIDTHS = (1024, 128, 64, 16, 1)
ITC_PROJECTION = 256
"""Width of BLIP's (unused here) vision_proj / text_proj."""
MODEL_FILE = "FS_model.pt"
"""FaceScore's released file."""
IMAGEREWARD_FILE = "ImageReward.pt"
"""ImageReward's released file (same key layout)."""
CONFIG_FILE = "med_config.json"
POSITION_IDS = "blip.text_encoder.embeddings.position_ids"

_VISION_RENAMES = (
    (r"^vision\.embeddings\.class_embedding$", "blip.visual_encoder.cls_token"),
    (r"^vision\.embeddings\.position_embedding$", "blip.visual_encoder.pos_embed"),
    (r"^vision\.embeddings\.patch_embedding\.", "blip.visual_encoder.patch_embed.proj."),
    (r"^vision\.encoder\.layers\.(\d+)\.layer_norm1\.", r"blip.visual_encoder.blocks.\1.norm1."),
    (r"^vision\.encoder\.layers\.(\d+)\.layer_norm2\.", r"blip.visual_encoder.blocks.\1.norm2."),
    (r"^vision\.encoder\.layers\.(\d+)\.self_attn\.qkv\.", r"blip.visual_encoder.blocks.\1.attn.qkv."),
    (r"^vision\.encoder\.layers\.(\d+)\.self_attn\.projection\.", r"blip.visual_encoder.blocks.\1.attn.proj."),
    (r"^vision\.encoder\.layers\.(\d+)\.mlp\.", r"blip.visual_encoder.blocks.\1.mlp."),
    (r"^vision\.post_layernorm\.", "blip.visual_encoder.norm."),
    (r"^text\.", "blip.text_encoder."),
    (r"^head\.", "mlp.layers."),
)


def released_name(module_key: str) -> str:
    """The `FS_model.pt` key of a `FaceScoreModel` state-dict key."""
    for pattern, replacement in _VISION_RENAMES:
        if re.match(pattern, module_key):
            return re.sub(pattern, replacement, module_key)
    raise KeyError(module_key)


@dataclass(frozen=True)
class FaceScoreSizes:
    vision_width: int
    vision_layers: int
    vision_mlp: int
    patch: int
    text_config: dict


class FaceScoreModel(nn.Module):
    """BLIP ViT + BERT text encoder with cross-attention + reward head.

    `forward(pixel_values (B, 3, 224, 224), input_ids (B, L), attention_mask (B, L))` -> (B,) raw head output of
    the text's first ([CLS]) token after cross-attending to the image tokens."""

    def __init__(self, sizes: FaceScoreSizes) -> None:
        from transformers import BlipTextConfig, BlipTextModel, BlipVisionConfig, BlipVisionModel

        super().__init__()
        self.sizes = sizes
        self.vision = BlipVisionModel(
            BlipVisionConfig(
                hidden_size=sizes.vision_width,
                intermediate_size=sizes.vision_mlp,
                num_hidden_layers=sizes.vision_layers,
                num_attention_heads=sizes.vision_width // VIT_HEAD_DIM,
                image_size=IMAGE_SIZE,
                patch_size=sizes.patch,
                hidden_act="gelu",
                layer_norm_eps=VIT_LAYER_NORM_EPS,
                attention_dropout=0.0,
            )
        )
        cfg = sizes.text_config
        self.text = BlipTextModel(
            BlipTextConfig(
                vocab_size=cfg["vocab_size"],
                hidden_size=cfg["hidden_size"],
                encoder_hidden_size=sizes.vision_width,
                intermediate_size=cfg["intermediate_size"],
                num_hidden_layers=cfg["num_hidden_layers"],
                num_attention_heads=cfg["num_attention_heads"],
                max_position_embeddings=cfg["max_position_embeddings"],
                hidden_act=cfg.get("hidden_act", "gelu"),
                layer_norm_eps=cfg.get("layer_norm_eps", 1e-12),
                pad_token_id=cfg.get("pad_token_id", 0),
                bos_token_id=None,
                eos_token_id=None,
                sep_token_id=None,
                hidden_dropout_prob=0.0,
                attention_probs_dropout_prob=0.0,
                is_decoder=True,
            ),  # transformers builds the cross-attention only for decoders; forward passes
            add_pooling_layer=False,
        )  # is_decoder=False, so the text attends bidirectionally (BLIP's "multimodal")
        widths = (cfg["hidden_size"],) + HEAD_WIDTHS
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append(nn.Linear(a, b))
            if i < 3:
                layers.append(nn.Dropout(0.0))  # keeps the released indices 0, 2, 4, 6, 7
        self.head = nn.Sequential(*layers)

    def image_tokens(self, pixel_values: torch.Tensor) -> torch.Tensor:
        """(B, 1 + (224/patch)^2, D) ViT tokens after the final LayerNorm."""
        return self.vision(pixel_values=pixel_values).last_hidden_state

    def forward(
        self, pixel_values: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> torch.Tensor:
        tokens = self.image_tokens(pixel_values)
        image_mask = torch.ones(tokens.shape[:2], dtype=torch.long, device=tokens.device)
        text = self.text(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_hidden_states=tokens,
            encoder_attention_mask=image_mask,
            is_decoder=False,
            return_dict=True,
        ).last_hidden_state
        return self.head(text[:, 0, :]).float().squeeze(-1)  # head in float32 under the policy: see facescore


def read_med_config(path: Path, *, what: str = "FaceScore") -> dict:
    """The BERT config of BLIP's text encoder (`med_config.json`); errors name `what`."""
    try:
        cfg = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(f"{what}: {path} is not a readable med_config.json ({exc})") from exc
    needed = (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
    )
    lacking = [k for k in needed if k not in cfg]
    if lacking:
        raise ModelUnavailableError(f"{what}: {path} lacks {', '.join(lacking)}; it is not BLIP's med_config.json")
    if not cfg.get("add_cross_attention", False):
        raise ModelUnavailableError(
            f"{what}: {path} has add_cross_attention false; the reward model's text encoder cross-attends to the image"
        )
    return cfg


def sizes_from_checkpoint(state: dict[str, torch.Tensor], text_config: dict, *, what: str) -> FaceScoreSizes:
    """The ViT sizes stored in `state` and the text sizes of `text_config`."""
    for key in (
        "blip.visual_encoder.cls_token",
        "blip.visual_encoder.pos_embed",
        "blip.visual_encoder.patch_embed.proj.weight",
        "blip.visual_encoder.blocks.0.mlp.fc1.weight",
    ):
        if key not in state:
            raise ModelUnavailableError(
                f"{what}: the checkpoint lacks the key {key!r}; it is not a BLIP reward checkpoint (FaceScore's "
                f"{MODEL_FILE}, ImageReward's {IMAGEREWARD_FILE})"
            )
    width = int(state["blip.visual_encoder.cls_token"].shape[-1])
    patch = int(state["blip.visual_encoder.patch_embed.proj.weight"].shape[-1])
    positions = int(state["blip.visual_encoder.pos_embed"].shape[1])
    if width % VIT_HEAD_DIM:
        raise ModelUnavailableError(f"{what}: ViT width {width} is not a multiple of {VIT_HEAD_DIM} (BLIP's head size)")
    if math.isqrt(positions - 1) * patch != IMAGE_SIZE or math.isqrt(positions - 1) ** 2 != positions - 1:
        raise ModelUnavailableError(
            f"{what}: the ViT position table has {positions} rows; the reward model's 224 px "
            f"input with patch {patch} needs {(IMAGE_SIZE // patch) ** 2 + 1}"
        )
    layers = len({m.group(1) for k in state if (m := re.match(r"blip\.visual_encoder\.blocks\.(\d+)\.", k))})
    return FaceScoreSizes(
        vision_width=width,
        vision_layers=layers,
        patch=patch,
        text_config=text_config,
        vision_mlp=int(state["blip.visual_encoder.blocks.0.mlp.fc1.weight"].shape[0]),
    )


def load_reward_model(model_file: Path, config_file: Path, *, what: str) -> FaceScoreModel:
    """`FaceScoreModel` with the weights of a released `FS_model.pt` / `ImageReward.pt`, every key checked (see the
    module doc); errors name `what` (e.g. "FaceScore checkpoint <file> (MASC_FACESCORE_MODEL)")."""
    from ..state_dicts import read_state_dict

    state = read_state_dict(model_file, what=what)
    sizes = sizes_from_checkpoint(state, read_med_config(config_file, what=what), what=what)
    model = FaceScoreModel(sizes)
    own = model.state_dict()
    expected = {released_name(k): tuple(v.shape) for k, v in own.items()}
    text_width = sizes.text_config["hidden_size"]
    expected.update(
        {
            "blip.vision_proj.weight": (ITC_PROJECTION, sizes.vision_width),
            "blip.vision_proj.bias": (ITC_PROJECTION,),
            "blip.text_proj.weight": (ITC_PROJECTION, text_width),
            "blip.text_proj.bias": (ITC_PROJECTION,),
            POSITION_IDS: (1, sizes.text_config["max_position_embeddings"]),
        }
    )
    check_keys(expected, state, what=what, optional=("num_batches_tracked", "position_ids"))
    if POSITION_IDS in state:
        if not torch.equal(state[POSITION_IDS].reshape(-1).long(), torch.arange(expected[POSITION_IDS][1])):
            raise ModelUnavailableError(f"{what}: {POSITION_IDS} is not 0..{expected[POSITION_IDS][1] - 1}")
    model.load_state_dict({k: state[released_name(k)] for k in own}, strict=True)
    return model.eval()
