"""CLIP-FlanT5's released checkpoint layout, written down here from the reference source, and the strict loader.

The layout comes from t2v_metrics' pre-3.1 `clip_t5/model/language_model/clip_t5.py` (and the identical training
code in linzhiqiu/CLIP-FlanT5): `CLIPT5ForConditionalGeneration(T5ForConditionalGeneration)` registers
`self.embed_tokens = self.encoder.embed_tokens`, `self.vision_tower = CLIPVisionTower(...)` (whose CLIPVisionModel
is its attribute `vision_tower`) and `self.mm_projector = nn.Sequential(Linear, GELU, Linear)` (`mlp2x_gelu`);
the model was saved by transformers 4.31 from a DeepSpeed ZeRO-3 consolidated state dict, which keeps every
registered name (tied ones included). Sizes: google/flan-t5-xl / -xxl and openai/clip-vit-large-patch14-336.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from masc_ui.errors import ModelUnavailableError
from masc_ui.models.nets import clip_flant5 as cf


def released_keys(encoder_layers: int, decoder_layers: int, vision_layers: int) -> set[str]:
    """Every key of a released CLIP-FlanT5 state dict (FlanT5 gated-GELU blocks, CLIP ViT, 2-layer projector)."""
    keys = {
        "shared.weight",
        "embed_tokens.weight",
        "encoder.embed_tokens.weight",
        "decoder.embed_tokens.weight",
        "lm_head.weight",
        "encoder.final_layer_norm.weight",
        "decoder.final_layer_norm.weight",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
    }
    attention = ("q", "k", "v", "o")
    ffn = ("wi_0", "wi_1", "wo")
    for i in range(encoder_layers):
        block = f"encoder.block.{i}.layer."
        keys |= {f"{block}0.SelfAttention.{p}.weight" for p in attention}
        keys |= {f"{block}0.layer_norm.weight", f"{block}1.layer_norm.weight"}
        keys |= {f"{block}1.DenseReluDense.{p}.weight" for p in ffn}
    for i in range(decoder_layers):
        block = f"decoder.block.{i}.layer."
        keys |= {f"{block}0.SelfAttention.{p}.weight" for p in attention}
        keys |= {f"{block}1.EncDecAttention.{p}.weight" for p in attention}
        keys |= {f"{block}{j}.layer_norm.weight" for j in range(3)}
        keys |= {f"{block}2.DenseReluDense.{p}.weight" for p in ffn}
    vision = "vision_tower.vision_tower.vision_model."
    keys |= {
        vision + k
        for k in (
            "embeddings.class_embedding",
            "embeddings.patch_embedding.weight",
            "embeddings.position_embedding.weight",
            "pre_layrnorm.weight",
            "pre_layrnorm.bias",
            "post_layernorm.weight",
            "post_layernorm.bias",
        )
    }
    for i in range(vision_layers):
        layer = f"{vision}encoder.layers.{i}."
        for part in (
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.q_proj",
            "self_attn.out_proj",
            "layer_norm1",
            "mlp.fc1",
            "mlp.fc2",
            "layer_norm2",
        ):
            keys |= {f"{layer}{part}.weight", f"{layer}{part}.bias"}
    keys |= {"mm_projector.0.weight", "mm_projector.0.bias", "mm_projector.2.weight", "mm_projector.2.bias"}
    return keys


CLIP_FLANT5_XL_CONFIG = {
    "model_type": "clip_t5",
    "architectures": ["CLIPT5ForConditionalGeneration"],
    "vocab_size": 32128,
    "d_model": 2048,
    "d_kv": 64,
    "d_ff": 5120,
    "num_layers": 24,
    "num_decoder_layers": 24,
    "num_heads": 32,
    "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128,
    "dropout_rate": 0.1,
    "layer_norm_epsilon": 1e-6,
    "feed_forward_proj": "gated-gelu",
    "tie_word_embeddings": False,
    "pad_token_id": 0,
    "eos_token_id": 1,
    "decoder_start_token_id": 0,
    "mm_vision_tower": "openai/clip-vit-large-patch14-336",
    "mm_hidden_size": 1024,
    "mm_projector_type": "mlp2x_gelu",
    "mm_vision_select_layer": -2,
    "mm_vision_select_feature": "patch",
    "image_aspect_ratio": "pad",
}
"""flan-t5-xl's T5 fields and the `mm_*` fields the stage-2 training script sets (clip-flant5-xl.sh)."""
CLIP_L_336 = dict(
    hidden_size=1024,
    intermediate_size=4096,
    num_hidden_layers=24,
    num_attention_heads=16,
    image_size=336,
    patch_size=14,
    hidden_act="quick_gelu",
)
"""openai/clip-vit-large-patch14-336's vision config."""
XL_SHAPES = {
    "shared.weight": (32128, 2048),
    "lm_head.weight": (32128, 2048),
    "encoder.block.0.layer.0.SelfAttention.q.weight": (2048, 2048),
    "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": (32, 32),
    "encoder.block.23.layer.1.DenseReluDense.wi_0.weight": (5120, 2048),
    "decoder.block.23.layer.2.DenseReluDense.wo.weight": (2048, 5120),
    "decoder.block.5.layer.1.EncDecAttention.o.weight": (2048, 2048),
    "vision_tower.vision_tower.vision_model.embeddings.patch_embedding.weight": (1024, 3, 14, 14),
    "vision_tower.vision_tower.vision_model.embeddings.position_embedding.weight": (577, 1024),
    "vision_tower.vision_tower.vision_model.encoder.layers.23.mlp.fc1.weight": (4096, 1024),
    "mm_projector.0.weight": (2048, 1024),
    "mm_projector.2.weight": (2048, 2048),
}


def test_the_loaders_layout_is_the_released_one_at_real_size():
    """On the meta device (no weights): the keys and shapes the loader demands for clip-flant5-xl."""
    from transformers import CLIPVisionConfig

    spec = cf.clip_flant5_spec(CLIP_FLANT5_XL_CONFIG)
    layout = cf.released_layout(cf.t5_config_from(CLIP_FLANT5_XL_CONFIG), CLIPVisionConfig(**CLIP_L_336), spec)
    assert set(layout) | set(cf.TIED_ALIASES) == released_keys(24, 24, 24)
    for key, shape in XL_SHAPES.items():
        assert layout[key] == shape, key


def test_demo_checkpoint_is_saved_in_the_released_layout(demo_weights):
    folder = demo_weights / "clip-flant5"
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "clip_t5" and config["mm_projector_type"] == "mlp2x_gelu"
    assert config["mm_vision_select_layer"] == -2 and config["vocab_size"] % 128 == 0
    weight_map = json.loads((folder / "pytorch_model.bin.index.json").read_text())["weight_map"]
    assert set(weight_map) == released_keys(config["num_layers"], config["num_decoder_layers"], 3)
    assert sorted(set(weight_map.values())) == ["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"]


def test_the_demo_loads_through_the_real_loader(demo_weights):
    folder = demo_weights / "clip-flant5"
    model = cf.ClipFlanT5.from_pretrained(str(folder), vocab_size=300)
    state = cf.read_weights(str(folder))
    assert model.vision_weights == "checkpoint"
    assert torch.equal(model.projector[2].weight, state["mm_projector.2.weight"])
    assert torch.equal(
        model.vision_tower.state_dict()["encoder.layers.1.mlp.fc1.weight"],
        state["vision_tower.vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight"],
    )
    # FlanT5's LM head is its own matrix; both cut to the tokenizer's length as t2v_metrics' resize_token_embeddings
    assert model.language_model.lm_head.weight.data_ptr() != model.language_model.shared.weight.data_ptr()
    assert torch.equal(model.language_model.lm_head.weight, state["lm_head.weight"][:300])
    assert torch.equal(model.language_model.shared.weight, state["shared.weight"][:300])


@pytest.fixture()
def demo_state(demo_weights):
    from transformers import CLIPVisionConfig

    folder = demo_weights / "clip-flant5"
    config = cf.read_config(str(folder))
    spec = cf.clip_flant5_spec(config)
    vision_config = CLIPVisionConfig.from_pretrained(folder / "vision_tower")
    return cf.read_weights(str(folder)), cf.t5_config_from(config), vision_config, spec


def _assemble(state, t5_config, vision_config, spec):
    return cf.assemble(state, t5_config, vision_config, spec, dtype=torch.float32, what="test model")


@pytest.mark.parametrize(
    "key",
    [
        "decoder.block.1.layer.2.DenseReluDense.wo.weight",
        "mm_projector.0.bias",
        "vision_tower.vision_tower.vision_model.post_layernorm.weight",
        "lm_head.weight",
    ],
)
def test_a_missing_key_is_named(demo_state, key):
    state, *rest = demo_state
    del state[key]
    with pytest.raises(ModelUnavailableError, match=f"test model: the checkpoint lacks the key '{key}'"):
        _assemble(state, *rest)


@pytest.mark.parametrize(
    "key",
    [
        "mm_projector.4.weight",
        "vision_tower.vision_tower.vision_model.head.weight",
        "encoder.block.9.layer.0.layer_norm.weight",
        "model.shared.weight",
    ],
)
def test_an_unexpected_key_is_named(demo_state, key):
    state, *rest = demo_state
    state[key] = torch.zeros(2)
    with pytest.raises(ModelUnavailableError, match=f"has the unexpected key '{key}'"):
        _assemble(state, *rest)


def test_a_wrong_shape_and_a_broken_tie_are_named(demo_state):
    state, *rest = demo_state
    broken = dict(state, **{"mm_projector.0.weight": torch.zeros(3, 3)})
    with pytest.raises(ModelUnavailableError, match=r"'mm_projector.0.weight' has shape \(3, 3\)"):
        _assemble(broken, *rest)
    untied = dict(state, **{"embed_tokens.weight": state["shared.weight"] + 1})
    with pytest.raises(ModelUnavailableError, match="'embed_tokens.weight' differs from 'shared.weight'"):
        _assemble(untied, *rest)


def test_aliases_and_the_legacy_position_ids_are_optional(demo_state):
    state, t5_config, vision_config, spec = demo_state
    lean = {k: v for k, v in state.items() if k not in cf.TIED_ALIASES}
    a = _assemble(lean, t5_config, vision_config, spec)
    legacy = dict(state, **{cf.LEGACY_POSITION_IDS: torch.arange(50).unsqueeze(0)})
    b = _assemble(legacy, t5_config, vision_config, spec)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    wrong = dict(state, **{cf.LEGACY_POSITION_IDS: torch.zeros(1, 50, dtype=torch.long)})
    with pytest.raises(ModelUnavailableError, match="position_ids"):
        _assemble(wrong, t5_config, vision_config, spec)


def test_single_safetensors_file_without_aliases_loads(demo_weights, tmp_path):
    from safetensors.torch import save_file

    source = demo_weights / "clip-flant5"
    folder = tmp_path / "renamed-qwen-like-folder"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("pytorch_model*"))
    state = cf.read_weights(str(source))
    save_file({k: v.contiguous() for k, v in state.items() if k not in cf.TIED_ALIASES}, folder / "model.safetensors")
    model = cf.ClipFlanT5.from_pretrained(str(folder))
    assert torch.equal(model.language_model.lm_head.weight, state["lm_head.weight"])


def test_without_vision_keys_the_tower_comes_from_mm_vision_tower(demo_weights, tmp_path):
    """t2v_metrics builds the tower from `mm_vision_tower`; a checkpoint without any of its keys gets it there."""
    from transformers import CLIPVisionConfig, CLIPVisionModel

    source = demo_weights / "clip-flant5"
    folder = tmp_path / "no-vision"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("pytorch_model*"))
    torch.manual_seed(3)
    tower = CLIPVisionModel(CLIPVisionConfig.from_pretrained(source / "vision_tower"))
    tower.save_pretrained(folder / "vision_tower")
    state = {k: v for k, v in cf.read_weights(str(source)).items() if not k.startswith("vision_tower.")}
    torch.save(state, folder / "pytorch_model.bin")
    model = cf.ClipFlanT5.from_pretrained(str(folder))
    assert model.vision_weights == str(folder / "vision_tower")
    loaded, saved = model.vision_tower.state_dict(), tower.state_dict()
    assert torch.equal(loaded["post_layernorm.weight"], saved["post_layernorm.weight"])
    partial = dict(state, **{"vision_tower.vision_tower.vision_model.pre_layrnorm.bias": torch.zeros(32)})
    torch.save(partial, folder / "pytorch_model.bin")
    with pytest.raises(ModelUnavailableError, match="lacks the key 'vision_tower.vision_tower.vision_model"):
        cf.ClipFlanT5.from_pretrained(str(folder))


def test_not_a_clip_flant5_config_is_refused():
    with pytest.raises(ModelUnavailableError, match="model_type is 'qwen2_5_vl'"):
        cf.clip_flant5_spec({"model_type": "qwen2_5_vl"})
    with pytest.raises(ModelUnavailableError, match="projector type 'resampler'"):
        cf.build_projector(cf.ClipFlanT5Spec(vision_tower="x", projector_type="resampler"), 8)
