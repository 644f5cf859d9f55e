"""The tiny SAM and SAM 3 demo checkpoints: small, seeded, complete."""

from __future__ import annotations

import torch

from masc_ui.models.demo import sam as demo_sam
from masc_ui.models.demo import sam3 as demo_sam3
from masc_ui.segmentation import SamService, build_sam


def _size(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_checkpoints_are_small(seg_weights):
    assert _size(seg_weights / "sam-vit-tiny") < 5_000_000
    assert _size(seg_weights / "sam3") < 5_000_000


def test_tiny_sam_is_seeded(tmp_path):
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        (tmp_path / name).mkdir()
        demo_sam.build(tmp_path / name, seed)
    load = lambda n: torch.load(tmp_path / n / demo_sam.FILENAME, weights_only=True)  # noqa: E731
    a, b, c = load("a"), load("b"), load("c")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_sam3_folder_is_a_complete_checkpoint(seg_weights):
    from transformers import Sam3Processor

    folder = seg_weights / "sam3"
    assert {"config.json", "model.safetensors", "processor_config.json", "tokenizer.json"} <= {
        p.name for p in folder.iterdir()
    }
    tokenizer = Sam3Processor.from_pretrained(folder).tokenizer
    ids = tokenizer("Dog wearing a hat, ça va? 犬")["input_ids"]
    assert ids[0] == 0 and ids[-1] == 1  # <|startoftext|> ... <|endoftext|>
    assert tokenizer.unk_token_id not in ids[1:-1]
    assert len(demo_sam3._byte_vocab()) == 2 + 2 * 256


def test_service_accepts_a_caller_built_model(make_image):
    torch.manual_seed(0)
    service = SamService("vit_tiny", device="cpu", model=build_sam("vit_tiny"))
    pred = service.predict(make_image(30, 20), points=[(3, 4, 1)])
    assert pred.mask.shape == (20, 30)
    assert service.provenance["checkpoint"] == "caller-built model"
