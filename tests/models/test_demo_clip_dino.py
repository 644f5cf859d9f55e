"""The tiny CLIP, PickScore-shaped CLIP-H and DINO demo checkpoints load back through `load_pretrained` with the
shapes of the real ones, deterministically."""

from __future__ import annotations

import json

import pytest
import torch
from PIL import Image
from transformers import AutoImageProcessor, AutoModel, AutoProcessor

from masc_ui.models.demo import write_demo_weights
from masc_ui.models.loading import load_pretrained


def test_clip_checkpoints(demo_weights):
    for name, patch, scale in (("clip", 32, 1 / 0.07), ("clip-h", 14, 100.0)):
        model = load_pretrained(AutoModel, str(demo_weights / name), what=name)
        processor = load_pretrained(AutoProcessor, str(demo_weights / name), what=name)
        assert type(model).__name__ == "CLIPModel" and type(processor).__name__ == "CLIPProcessor"
        assert model.config.vision_config.patch_size == patch and model.config.vision_config.image_size == 224
        assert model.config.text_config.max_position_embeddings == 77
        assert float(model.logit_scale.detach().exp()) == pytest.approx(scale, rel=1e-5)
        tok = processor.tokenizer
        assert tok.eos_token_id == len(tok) - 1 == model.config.text_config.eos_token_id
        ids = tok(["a photo of the cat"])["input_ids"][0]
        assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
        assert tok.decode(ids, skip_special_tokens=True) == "a photo of the cat"
        out = model.get_image_features(**processor(images=[Image.new("RGB", (50, 40))], return_tensors="pt"))
        assert out.pooler_output.shape == (1, model.config.projection_dim)


def test_dino_checkpoint(demo_weights):
    model = load_pretrained(AutoModel, str(demo_weights / "dino"), what="dino", add_pooling_layer=False)
    processor = load_pretrained(AutoImageProcessor, str(demo_weights / "dino"), what="dino")
    assert type(model).__name__ == "ViTModel" and model.config.patch_size == 16
    assert list(processor.image_mean) == [0.485, 0.456, 0.406] and list(processor.image_std) == [0.229, 0.224, 0.225]
    hidden = model(pixel_values=torch.zeros(1, 3, 224, 224)).last_hidden_state
    assert hidden.shape == (1, 197, model.config.hidden_size)


def test_builders_are_seeded(tmp_path):
    a = write_demo_weights(tmp_path / "a", ["clip-h", "dino"])
    b = write_demo_weights(tmp_path / "b", ["clip-h", "dino"])
    for name in ("clip-h", "dino"):
        assert (a[name] / "model.safetensors").read_bytes() == (b[name] / "model.safetensors").read_bytes()
        assert json.loads((a[name] / "masc-demo.json").read_text())["seed"] == 0
        size = sum(p.stat().st_size for p in a[name].iterdir())
        assert size < 5_000_000
