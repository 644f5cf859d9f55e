"""CLIP-FlanT5 (Lin et al., ECCV 2024: the VQAScore model) rebuilt from transformers parts, loading the released
state dict (`zhiqiulin/clip-flant5-xxl`, `zhiqiulin/clip-flant5-xl`) in its own key layout.

The model (t2v_metrics' `CLIPT5ForConditionalGeneration`, pre-3.1 tree) is a FlanT5 encoder-decoder whose encoder
reads the prompt's token embeddings with the image's CLIP patch tokens spliced in where the prompt has `<image>`:
CLIP ViT-L/14-336 (`openai/clip-vit-large-patch14-336`, named by the checkpoint's `mm_vision_tower`), hidden states
of the second-to-last layer (`mm_vision_select_layer` = -2), patch tokens only (CLS dropped), through the projector
`mm_projector` = Linear(1024, d_model) - GELU - Linear(d_model, d_model) (`mlp2x_gelu`). Here it is assembled as
`ClipFlanT5(language_model=T5ForConditionalGeneration, vision_tower=CLIPVisionModel, projector=nn.Sequential)`.

Released key layout (the training code, transformers 4.31 + DeepSpeed ZeRO-3, saved every registered name):

    shared.weight, encoder.*, decoder.*, lm_head.weight        T5ForConditionalGeneration, as transformers names them
    embed_tokens.weight, encoder.embed_tokens.weight,          aliases of shared.weight (the model also registers
    decoder.embed_tokens.weight                                the encoder's embedding at the top level)
    vision_tower.vision_tower.vision_model.*                   the CLIPVisionModel of the LLaVA vision-tower wrapper
    mm_projector.0.{weight,bias}, mm_projector.2.{weight,bias} the projector (index 1 is the GELU)

Loading is strict: a missing or unexpected key, or a tensor of the wrong shape, is a `ModelUnavailableError` naming
the key. Tolerated: the aliases (they must equal `shared.weight` when present) and the CLIP `position_ids` buffer of
older transformers (it must be 0..n-1). A checkpoint with no vision-tower key at all gets the CLIP weights from
`mm_vision_tower`, as t2v_metrics' loader (which builds the tower from that id) would. As t2v_metrics does, the
embeddings and LM head are then cut to the tokenizer's length (32100 of FlanT5's 32128 rows): softmaxes and
cross-entropies run over the tokenizer's vocabulary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ...errors import ModelUnavailableError
from ..loading import is_local, load_pretrained

MODEL_TYPE = "clip_t5"
"""`model_type` of the released config.json: how the VQAScore loader recognises the family."""
VISION_PREFIX = "vision_tower.vision_tower.vision_model."
PROJECTOR_PREFIX = "mm_projector."
TIED_ALIASES = ("embed_tokens.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
LEGACY_POSITION_IDS = VISION_PREFIX + "embeddings.position_ids"
FLANT5_TOKENIZER = "google/flan-t5-xxl"
"""Tokenizer used when the checkpoint holds none (t2v_metrics loads google/flan-t5-xxl / -xl: one SentencePiece
vocabulary for every FlanT5 size)."""
T5_FIELDS = (
    "vocab_size",
    "d_model",
    "d_kv",
    "d_ff",
    "num_layers",
    "num_decoder_layers",
    "num_heads",
    "relative_attention_num_buckets",
    "relative_attention_max_distance",
    "dropout_rate",
    "layer_norm_epsilon",
    "initializer_factor",
    "feed_forward_proj",
    "tie_word_embeddings",
    "pad_token_id",
    "eos_token_id",
    "decoder_start_token_id",
    "is_encoder_decoder",
)
WEIGHT_FILES = (
    ("model.safetensors.index.json", "model.safetensors"),
    ("pytorch_model.bin.index.json", "pytorch_model.bin"),
)
_PROJECTOR_TYPE = re.compile(r"^mlp(\d+)x_gelu$")


@dataclass(frozen=True)
class ClipFlanT5Spec:
    """What the checkpoint's config.json says beyond the T5 fields."""

    vision_tower: str
    """HF id or folder of the CLIP vision tower's config and image processor (`mm_vision_tower`)."""
    select_layer: int = -2
    """Which hidden state of the vision tower feeds the projector (`mm_vision_select_layer`)."""
    select_feature: str = "patch"
    """`patch` (drop CLS) or `cls_patch` (`mm_vision_select_feature`)."""
    projector_type: str = "mlp2x_gelu"
    """`linear` or `mlp<N>x_gelu` (`mm_projector_type`)."""
    mm_hidden_size: int = 1024
    """Width of the vision tower's hidden states (`mm_hidden_size`)."""


class ClipFlanT5(nn.Module):
    """FlanT5 encoder-decoder reading CLIP patch tokens through a projector (see the module docstring)."""

    def __init__(
        self,
        language_model: nn.Module,
        vision_tower: nn.Module,
        projector: nn.Module,
        spec: ClipFlanT5Spec,
        *,
        vision_weights: str = "checkpoint",
    ) -> None:
        super().__init__()
        self.language_model = language_model
        self.vision_tower = vision_tower
        self.projector = projector
        self.spec = spec
        self.vision_weights = vision_weights
        """Where the vision tower's weights came from: `checkpoint`, or the id/folder of `mm_vision_tower`."""

    @property
    def dtype(self) -> torch.dtype:
        return self.language_model.dtype

    def image_tokens(self, pixel_values: torch.Tensor) -> torch.Tensor:
        """(N, 3, H, W) CLIP-normalized pixels -> (N, P, d_model) projected patch tokens (P = 576 at 336 px)."""
        out = self.vision_tower(pixel_values=pixel_values.to(self.vision_tower.dtype), output_hidden_states=True)
        feats = out.hidden_states[self.spec.select_layer]
        if self.spec.select_feature == "patch":
            feats = feats[:, 1:]
        return self.projector(feats.to(self.projector_dtype))

    @property
    def projector_dtype(self) -> torch.dtype:
        return next(self.projector.parameters()).dtype

    def embed_tokens(self, input_ids: torch.Tensor) -> torch.Tensor:
        """(..., T) token ids -> (..., T, d_model) FlanT5 input embeddings."""
        return self.language_model.get_input_embeddings()(input_ids)

    @classmethod
    def from_pretrained(
        cls,
        model_id: str,
        *,
        dtype: torch.dtype = torch.float32,
        vocab_size: int | None = None,
        name: str = "CLIP-FlanT5",
    ) -> ClipFlanT5:
        """Load a released CLIP-FlanT5 checkpoint (folder or HF id; config.json + weights, sharded or not,
        safetensors or torch). `vocab_size`: cut embeddings and LM head to that many rows (the tokenizer's length).
        Raises `ModelUnavailableError` starting with `name` and naming the offending key; `OSError` when files are
        missing (`load_pretrained` explains those)."""
        config = read_config(model_id)
        spec = clip_flant5_spec(config)
        t5_config = t5_config_from(config)
        vision_source = vision_tower_source(model_id, spec)
        vision_config = load_pretrained(
            CLIPVisionConfigLoader, vision_source, what=f"{name} vision tower config ({vision_source})"
        )
        state = read_weights(model_id)
        model = assemble(
            state, t5_config, vision_config, spec, dtype=dtype, what=f"{name} ({model_id})", vision_source=vision_source
        )
        if vocab_size is not None and vocab_size != model.language_model.config.vocab_size:
            model.language_model.resize_token_embeddings(vocab_size, mean_resizing=False)
        return model.eval()


def read_config(model_id: str) -> dict[str, Any]:
    """The checkpoint's config.json as a dict (its `model_type` is unknown to transformers)."""
    from transformers.utils.hub import cached_file

    path = cached_file(model_id, "config.json")
    return json.loads(Path(path).read_text())


def clip_flant5_spec(config: Mapping[str, Any]) -> ClipFlanT5Spec:
    if config.get("model_type") != MODEL_TYPE:
        raise ModelUnavailableError(
            f"not a CLIP-FlanT5 checkpoint: model_type is {config.get('model_type')!r}, expected {MODEL_TYPE!r}"
        )
    if not config.get("mm_vision_tower"):
        raise ModelUnavailableError("CLIP-FlanT5 config.json has no mm_vision_tower: the vision tower is unknown")
    return ClipFlanT5Spec(
        vision_tower=config["mm_vision_tower"],
        select_layer=int(config.get("mm_vision_select_layer", -2)),
        select_feature=config.get("mm_vision_select_feature", "patch"),
        projector_type=config.get("mm_projector_type", "linear"),
        mm_hidden_size=int(config.get("mm_hidden_size", 1024)),
    )


def t5_config_from(config: Mapping[str, Any]) -> Any:
    """The T5Config of the language model, tying as the checkpoint says. FlanT5's LM head is its own matrix
    (`tie_word_embeddings` false, no decoder-output rescaling). transformers 5's T5Config always sets
    `tie_word_embeddings` true (keeping the flag as `scale_decoder_outputs`) because that flag also ties the
    encoder's and decoder's token embeddings to `shared`; it is set back here, so that nothing re-ties the LM head,
    and `flan_t5` / `assemble` share the one embedding matrix themselves."""
    from transformers import T5Config

    t5_config = T5Config(**{k: config[k] for k in T5_FIELDS if k in config})
    t5_config.tie_word_embeddings = bool(config.get("tie_word_embeddings", True))
    return t5_config


def flan_t5(t5_config: Any) -> Any:
    """A randomly initialised `T5ForConditionalGeneration` whose encoder and decoder read `shared` (one matrix)."""
    from transformers import T5ForConditionalGeneration

    model = T5ForConditionalGeneration(t5_config)
    model.set_input_embeddings(model.shared)
    return model


def vision_tower_source(model_id: str, spec: ClipFlanT5Spec) -> str:
    """`mm_vision_tower`, or that folder inside a local checkpoint folder when the name is relative and exists
    there (how the demo checkpoint carries its tiny tower)."""
    inner = Path(model_id).expanduser() / spec.vision_tower
    if is_local(model_id) and not Path(spec.vision_tower).is_absolute() and inner.is_dir():
        return str(inner)
    return spec.vision_tower


class CLIPVisionConfigLoader:
    """`CLIPVisionConfig.from_pretrained`, imported when called (for `load_pretrained`)."""

    @staticmethod
    def from_pretrained(source: str, **kwargs: Any) -> Any:
        from transformers import CLIPVisionConfig

        return CLIPVisionConfig.from_pretrained(source, **kwargs)


def weight_files(model_id: str) -> list[str]:
    """Local paths of the checkpoint's weight files: the shards named by an index, or the single file."""
    from transformers.utils.hub import cached_file

    for index_name, single_name in WEIGHT_FILES:
        index = cached_file(model_id, index_name, _raise_exceptions_for_missing_entries=False)
        if index:
            shards = sorted(set(json.loads(Path(index).read_text())["weight_map"].values()))
            return [cached_file(model_id, shard) for shard in shards]
        single = cached_file(model_id, single_name, _raise_exceptions_for_missing_entries=False)
        if single:
            return [single]
    names = ", ".join(name for pair in WEIGHT_FILES for name in pair)
    raise OSError(f"no weights found for {model_id} (looked for {names})")


def read_weights(model_id: str) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint, by its released key (torch files memory-mapped, no code run)."""
    state: dict[str, torch.Tensor] = {}
    for path in weight_files(model_id):
        if path.endswith(".safetensors"):
            from safetensors.torch import load_file

            part = load_file(path)
        else:
            part = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        state.update(part)
    return state


def build_projector(spec: ClipFlanT5Spec, d_model: int) -> nn.Module:
    """t2v_metrics' `build_vision_projector`: `linear`, or `mlp<N>x_gelu` = Linear then (GELU, Linear) x (N-1)."""
    if spec.projector_type == "linear":
        return nn.Linear(spec.mm_hidden_size, d_model)
    match = _PROJECTOR_TYPE.match(spec.projector_type)
    if not match:
        raise ModelUnavailableError(
            f"CLIP-FlanT5 projector type {spec.projector_type!r} is not supported (linear or mlp<N>x_gelu)"
        )
    layers: list[nn.Module] = [nn.Linear(spec.mm_hidden_size, d_model)]
    for _ in range(1, int(match.group(1))):
        layers += [nn.GELU(), nn.Linear(d_model, d_model)]
    return nn.Sequential(*layers)


def released_layout(t5_config: Any, vision_config: Any, spec: ClipFlanT5Spec) -> dict[str, tuple[int, ...]]:
    """Released key -> shape of every required tensor (aliases and legacy buffers excluded)."""
    from transformers import CLIPVisionModel, T5ForConditionalGeneration

    with torch.device("meta"):
        t5 = T5ForConditionalGeneration(t5_config)
        vision = CLIPVisionModel(vision_config)
        projector = build_projector(spec, t5_config.d_model)
    layout = {k: tuple(v.shape) for k, v in t5.state_dict().items() if k not in TIED_ALIASES}
    layout |= {VISION_PREFIX + k: tuple(v.shape) for k, v in vision.state_dict().items()}
    layout |= {PROJECTOR_PREFIX + k: tuple(v.shape) for k, v in projector.state_dict().items()}
    return layout


def check_released_keys(
    state: Mapping[str, torch.Tensor], layout: Mapping[str, tuple[int, ...]], *, what: str, vision_optional: bool = True
) -> bool:
    """Raise `ModelUnavailableError` naming the first missing, unexpected or mis-shaped key of `state`.

    Returns whether `state` holds the vision tower (with `vision_optional`, a state with no vision key at all is
    accepted: the tower then comes from `mm_vision_tower`)."""
    has_vision = any(k.startswith(VISION_PREFIX) for k in state)
    required = {k: s for k, s in layout.items() if has_vision or not vision_optional or not k.startswith(VISION_PREFIX)}
    missing = sorted(k for k in required if k not in state)
    unexpected = sorted(k for k in state if k not in layout and k not in TIED_ALIASES and k != LEGACY_POSITION_IDS)
    for label, keys in (("lacks the key", missing), ("has the unexpected key", unexpected)):
        if keys:
            more = f" (and {len(keys) - 1} more)" if len(keys) > 1 else ""
            raise ModelUnavailableError(
                f"{what}: the checkpoint {label} {keys[0]!r}{more}; it is not a released CLIP-FlanT5 state dict"
            )
    for key, shape in required.items():
        if tuple(state[key].shape) != tuple(shape):
            raise ModelUnavailableError(
                f"{what}: key {key!r} has shape {tuple(state[key].shape)}, the config implies {tuple(shape)}"
            )
    for alias in TIED_ALIASES:
        if alias in state and not torch.equal(state[alias], state["shared.weight"]):
            raise ModelUnavailableError(f"{what}: {alias!r} differs from 'shared.weight' (they are one tied tensor)")
    if LEGACY_POSITION_IDS in state:
        ids = state[LEGACY_POSITION_IDS]
        if not torch.equal(ids.flatten().long(), torch.arange(ids.numel())):
            raise ModelUnavailableError(f"{what}: {LEGACY_POSITION_IDS!r} is not 0..n-1")
    return has_vision


def assemble(
    state: Mapping[str, torch.Tensor],
    t5_config: Any,
    vision_config: Any,
    spec: ClipFlanT5Spec,
    *,
    dtype: torch.dtype,
    what: str,
    vision_source: str | None = None,
) -> ClipFlanT5:
    """A `ClipFlanT5` from a released state dict, after `check_released_keys`."""
    from transformers import CLIPVisionModel, T5ForConditionalGeneration

    layout = released_layout(t5_config, vision_config, spec)
    has_vision = check_released_keys(state, layout, what=what)
    t5_state = {k: v for k, v in state.items() if k in layout and not k.startswith((VISION_PREFIX, PROJECTOR_PREFIX))}
    t5_state |= {alias: state["shared.weight"] for alias in TIED_ALIASES if alias.endswith(".embed_tokens.weight")}
    language_model = _from_state(T5ForConditionalGeneration, t5_config, t5_state, dtype, what)
    language_model.set_input_embeddings(language_model.shared)
    source = vision_source or spec.vision_tower
    if has_vision:
        # transformers' CLIPVisionModel checkpoint format is `vision_model.*`
        vision_state = {
            k.removeprefix("vision_tower.vision_tower."): v
            for k, v in state.items()
            if k.startswith(VISION_PREFIX) and k != LEGACY_POSITION_IDS
        }
        vision_tower = _from_state(CLIPVisionModel, vision_config, vision_state, dtype, what)
    else:
        vision_tower = load_pretrained(CLIPVisionModel, source, what=f"{what} vision tower ({source})", dtype=dtype)
    projector = build_projector(spec, t5_config.d_model)
    projector.load_state_dict(
        {k.removeprefix(PROJECTOR_PREFIX): v for k, v in state.items() if k.startswith(PROJECTOR_PREFIX)}, strict=True
    )
    return ClipFlanT5(
        language_model, vision_tower, projector.to(dtype), spec, vision_weights="checkpoint" if has_vision else source
    )


def released_state_dict(model: ClipFlanT5) -> dict[str, torch.Tensor]:
    """The inverse of `assemble`: `model`'s tensors under the released keys, aliases included (as the training
    code's consolidated save writes them)."""
    state = {k: v for k, v in model.language_model.state_dict().items()}
    state["embed_tokens.weight"] = state["shared.weight"]
    state |= {VISION_PREFIX + k: v for k, v in model.vision_tower.state_dict().items()}
    state |= {PROJECTOR_PREFIX + k: v for k, v in model.projector.state_dict().items()}
    return state


def _from_state(cls: Any, config: Any, state: dict[str, torch.Tensor], dtype: torch.dtype, what: str) -> Any:
    model, info = cls.from_pretrained(None, config=config, state_dict=state, dtype=dtype, output_loading_info=True)
    problems = sorted(info["missing_keys"]) + sorted(info["unexpected_keys"]) + sorted(info["mismatched_keys"])
    if problems:
        raise ModelUnavailableError(f"{what}: {cls.__name__} could not take the key {problems[0]!r}")
    return model
