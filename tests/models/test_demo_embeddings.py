"""The tiny DINOv2 and DreamSim demo checkpoints: small, seeded, shaped like the real ones, and loaded back by the
scorers' own loaders without a warning."""

from __future__ import annotations

import json
import logging
import warnings

import torch

from masc_ui.models.demo import write_demo_weights
from masc_ui.models.demo.dreamsim import PROJECTION, WIDTH
from masc_ui.models.nets.dreamsim import DINO_HEAD_FILE, ENSEMBLE, LORA_DIR, load_dreamsim_ensemble

NAMES = ("dinov2", "dreamsim")


def _files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_small_and_seeded(tmp_path):
    a = write_demo_weights(tmp_path / "a", NAMES)
    b = write_demo_weights(tmp_path / "b", NAMES)
    for name in NAMES:
        files = _files(a[name])
        assert sum(f.stat().st_size for f in files) < 5 * 2**20, name
        assert [f.relative_to(a[name]) for f in files] == [f.relative_to(b[name]) for f in _files(b[name])]
        for f in files:
            if f.name != "masc-demo.json":
                assert f.read_bytes() == (b[name] / f.relative_to(a[name])).read_bytes(), f
        assert json.loads((a[name] / "masc-demo.json").read_text())["seed"] == 0


def test_dinov2_is_shaped_like_facebook_dinov2(demo_weights):
    from transformers import AutoImageProcessor, AutoModel

    model = AutoModel.from_pretrained(demo_weights / "dinov2")
    processor = json.loads((demo_weights / "dinov2" / "preprocessor_config.json").read_text())
    assert type(model).__name__ == "Dinov2Model" and model.config.patch_size == 14 and model.config.image_size == 518
    assert processor["image_processor_type"] == "BitImageProcessor" and processor["size"] == {"shortest_edge": 256}
    assert processor["crop_size"] == {"height": 224, "width": 224} and processor["resample"] == 3
    assert type(AutoImageProcessor.from_pretrained(demo_weights / "dinov2", backend="pil")).__name__ == (
        "BitImageProcessorPil"
    )


def test_dreamsim_release_layout(demo_weights):
    folder = demo_weights / "dreamsim"
    for member in ENSEMBLE:
        assert (folder / member.file).is_file(), member.file
    clip = torch.load(folder / ENSEMBLE[1].file, weights_only=True)
    assert set(clip) == {"state_dict"} and {"proj", "pos_drop.weight"} <= set(clip["state_dict"])
    head = torch.load(folder / DINO_HEAD_FILE, weights_only=True)
    assert "module.head.mlp.0.weight" in head["student"]
    adapter = json.loads((folder / LORA_DIR / "adapter_config.json").read_text())
    assert adapter["peft_type"] == "LORA" and adapter["target_modules"] == ["qkv"]
    assert (folder / LORA_DIR / "adapter_model.safetensors").is_file()


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_loaded_by_the_scorers_loaders_without_warnings(demo_settings, demo_weights):
    from masc_ui.metrics.dino.dinov2_i import load_dinov2_backbone

    handler = _Records()
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load_dinov2_backbone(str(demo_weights / "dinov2"), demo_settings)
            ensemble, adapter = load_dreamsim_ensemble(demo_weights / "dreamsim", what="test")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in handler.records] == []
    assert [str(w.message) for w in caught] == []
    assert adapter["layers"] == 36 and adapter["scale"] == 0.5
    embedding = ensemble(torch.rand(2, 3, 224, 224))
    assert embedding.shape == (2, WIDTH + 2 * PROJECTION)  # DINO CLS + the two CLIP projections, concatenated
    torch.testing.assert_close(embedding.norm(dim=-1), torch.ones(2))
    torch.testing.assert_close(embedding.mean(dim=-1), torch.zeros(2))
