"""FaceScore: equal to an independent computation (a functional BLIP ViT + BERT-with-cross-attention forward
written from the released key names in tests/metrics/blip_reference.py, PIL preprocessing), batched == one at a time, cached reruns, NaN
without a face (real MTCNN detection), RetinaFace's 0.9 threshold, bad inputs, the released `FS_model.pt` key
layout, and strict loading (a missing, unexpected or mis-shaped key is an error naming it)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage import data
from transformers import BertTokenizerFast

from masc_ui.errors import ModelUnavailableError
from masc_ui.imaging import as_input_image
from masc_ui.metrics.faces.mtcnn import MtcnnFaceDetector
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.nets.blip_reward import FaceScoreModel, FaceScoreSizes, released_name
from tests.metrics.blip_reference import reward

CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073])
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711])


def _astronaut() -> Image.Image:
    return Image.fromarray(data.astronaut())


def _independent_scores(folder: Path, img: Image.Image) -> list[float]:
    sd = torch.load(folder / "FS_model.pt")
    cfg = json.loads((folder / "med_config.json").read_text())
    tok = BertTokenizerFast.from_pretrained(folder)(
        ["A face."], padding="max_length", max_length=35, return_tensors="pt"
    )
    rgb = img.convert("RGB")
    scores = []
    for face in MtcnnFaceDetector().detect(np.asarray(rgb)).faces:
        x0, y0, x1, y1 = face.box
        crop = rgb.crop(
            (max(int(x0 - 1), 0), max(int(y0 - 1), 0), min(int(x1 + 1), rgb.width), min(int(y1 + 1), rgb.height))
        )
        w, h = crop.size
        size = (224, int(224 * h / w)) if w <= h else (int(224 * w / h), 224)
        crop = crop.resize(size, Image.BICUBIC)
        left, top = int(round((size[0] - 224) / 2.0)), int(round((size[1] - 224) / 2.0))
        arr = (np.asarray(crop.crop((left, top, left + 224, top + 224)), np.float64) / 255 - CLIP_MEAN) / CLIP_STD
        x = torch.from_numpy(arr).permute(2, 0, 1)[None].float()
        with torch.no_grad():
            scores.append(float(reward(sd, cfg, tok["input_ids"], tok["attention_mask"], x)[0]))
    return scores


def _two_faces() -> Image.Image:
    canvas = Image.new("RGB", (1024, 512), (30, 30, 30))
    canvas.paste(_astronaut(), (0, 0))
    canvas.paste(_astronaut().resize((400, 400)), (600, 60))
    return canvas


def test_facescore_equals_an_independent_computation(demo_settings, demo_weights):
    images = [_astronaut(), _astronaut().rotate(8), _two_faces()]
    got = get_scorer("facescore", demo_settings).score([Sample(refs=(), out=img) for img in images])
    for img, value in zip(images, got):
        expected = _independent_scores(demo_weights / "facescore", img)
        assert value.extras["count"] == len(expected) > 0 and value.reason is None
        np.testing.assert_allclose(value.extras["per_face"], expected, atol=1e-5)
        assert value.value == pytest.approx(float(np.mean(expected)), abs=1e-5)
    assert got[2].extras["count"] == 2 and got[2].extras["detector"] == "mtcnn"
    explained = get_scorer("facescore", demo_settings).explain(images[2])
    np.testing.assert_allclose([score for _, score in explained.faces], got[2].extras["per_face"], atol=1e-5)
    assert explained.image.size == images[2].size and not explained.reference_detector
    params = got[0].provenance["params"]
    assert params["text"] == "A face." and params["detector"]["reference_detector"] is False


def test_batched_equals_one_at_a_time_and_reruns_are_cached(demo_settings):
    images = [_astronaut(), _two_faces(), _astronaut().rotate(-10), Image.new("RGB", (64, 64)), _astronaut()]
    scorer = get_scorer("facescore", demo_settings, ModelRegistry())
    batched = scorer.score([Sample(refs=(), out=img) for img in images])
    backbone = scorer.backbone()
    assert backbone.forwards == 4  # faces of the 3 distinct images with faces (one has two)
    scorer.score([Sample(refs=(), out=img) for img in images])
    assert backbone.forwards == 4 and backbone.detection.detections == 4
    for img, value in zip(images, batched):
        single = get_scorer("facescore", demo_settings, ModelRegistry()).score([Sample(refs=(), out=img)])[0]
        assert single.reason == value.reason
        if value.reason is None:
            assert single.value == pytest.approx(value.value, abs=1e-6)


def test_no_face_and_bad_inputs(demo_settings, shared_data: Path):
    scorer = get_scorer("facescore", demo_settings)
    photos = shared_data / "dreambooth" / "dataset"
    outs = [
        Image.open(photos / "teapot" / "00.jpg"),
        Image.open(photos / "backpack" / "05.jpg"),
        Image.new("RGB", (1, 1)),
        Image.new("L", (30, 30)),
    ]
    for value in scorer.score([Sample(refs=(), out=o) for o in outs]):
        assert math.isnan(value.value) and value.reason == "no face found in the output"
        assert value.extras["count"] == 0
    rgba = scorer.score([Sample(refs=(), out=_astronaut().convert("RGBA"))])[0]
    assert rgba.value == pytest.approx(scorer.score([Sample(refs=(), out=_astronaut())])[0].value, abs=1e-6)


def test_retinaface_detector_keeps_faces_scoring_at_least_0_9(demo_settings, demo_weights):
    settings = demo_settings.replace(retinaface_weights=str(demo_weights / "retinaface" / "mobilenet0.25_Final.pth"))
    scorer = get_scorer("facescore", settings)
    img = _astronaut().resize((128, 128))
    value = scorer.score([Sample(refs=(), out=img)])[0]
    detection = scorer.backbone().detection
    assert detection.name == "retinaface" and value.provenance["params"]["detector"]["reference_detector"]
    faces = detection.detect_many([as_input_image(img)])[0].faces

    def grown(f):
        x0, y0, x1, y1 = f.box
        return [min(max(int(v), 0), 128) for v in (x0 - 1, y0 - 1, x1 + 1, y1 + 1)]

    kept = [grown(f) for f in faces if f.score >= 0.9]
    kept = [b for b in kept if b[2] > b[0] and b[3] > b[1]]
    assert value.extras["count"] == len(kept) and value.extras["boxes"] == kept
    assert (value.reason == "no face found in the output") == (not kept)


def test_released_fs_model_key_layout():
    """Written from THUDM/ImageReward (ImageReward + BLIP_Pretrain(vit="large") + med_config.json of BLIP)."""
    med = {
        "vocab_size": 30524,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "max_position_embeddings": 512,
        "add_cross_attention": True,
    }
    with torch.device("meta"):
        model = FaceScoreModel(
            FaceScoreSizes(vision_width=1024, vision_layers=24, vision_mlp=4096, patch=16, text_config=med)
        )
    layout = {released_name(k): tuple(v.shape) for k, v in model.state_dict().items()}
    expected = {
        "blip.visual_encoder.cls_token": (1, 1, 1024),
        "blip.visual_encoder.pos_embed": (1, 197, 1024),
        "blip.visual_encoder.patch_embed.proj.weight": (1024, 3, 16, 16),
        "blip.visual_encoder.blocks.23.attn.qkv.weight": (3072, 1024),
        "blip.visual_encoder.blocks.0.attn.proj.bias": (1024,),
        "blip.visual_encoder.blocks.5.mlp.fc1.weight": (4096, 1024),
        "blip.visual_encoder.blocks.11.norm2.weight": (1024,),
        "blip.visual_encoder.norm.bias": (1024,),
        "blip.text_encoder.embeddings.word_embeddings.weight": (30524, 768),
        "blip.text_encoder.embeddings.position_embeddings.weight": (512, 768),
        "blip.text_encoder.embeddings.LayerNorm.weight": (768,),
        "blip.text_encoder.encoder.layer.0.attention.self.query.weight": (768, 768),
        "blip.text_encoder.encoder.layer.11.crossattention.self.key.weight": (768, 1024),
        "blip.text_encoder.encoder.layer.11.crossattention.output.LayerNorm.bias": (768,),
        "blip.text_encoder.encoder.layer.3.intermediate.dense.weight": (3072, 768),
        "blip.text_encoder.encoder.layer.3.output.dense.weight": (768, 3072),
        "mlp.layers.0.weight": (1024, 768),
        "mlp.layers.2.weight": (128, 1024),
        "mlp.layers.4.weight": (64, 128),
        "mlp.layers.6.weight": (16, 64),
        "mlp.layers.7.weight": (1, 16),
        "mlp.layers.7.bias": (1,),
    }
    for key, shape in expected.items():
        assert layout[key] == shape, key
    assert len(layout) == 294 + 316 + 10  # + blip.vision_proj / text_proj (4, required) and position_ids (optional)


def _copy_demo(demo_weights: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "fs"
    shutil.copytree(demo_weights / "facescore", folder)
    return folder


@pytest.mark.parametrize(
    "change, key",
    [
        ("extra", "blip.itm_head.weight"),
        ("missing", "mlp.layers.7.bias"),
        ("missing", "blip.vision_proj.weight"),
        ("shape", "blip.text_encoder.encoder.layer.1.crossattention.self.value.weight"),
        ("positions", "blip.text_encoder.embeddings.position_ids"),
    ],
)
def test_strict_loading_names_the_key(demo_settings, demo_weights, tmp_path, change, key):
    folder = _copy_demo(demo_weights, tmp_path)
    sd = torch.load(folder / "FS_model.pt")
    if change == "extra":
        sd[key] = torch.zeros(2, 768)
    elif change == "missing":
        del sd[key]
    elif change == "shape":
        sd[key] = torch.zeros(3, 3)
    else:
        sd[key] = sd[key].flip(-1).clone()
    torch.save(sd, folder / "FS_model.pt")
    with pytest.raises(ModelUnavailableError, match=key.replace(".", r"\.")):
        get_scorer("facescore", demo_settings.replace(facescore_model=str(folder))).score(
            [Sample(refs=(), out=_astronaut())]
        )


def test_loading_variants_and_errors(demo_settings, demo_weights, tmp_path):
    folder = _copy_demo(demo_weights, tmp_path)
    sd = torch.load(folder / "FS_model.pt")
    del sd["blip.text_encoder.embeddings.position_ids"]  # newer transformers do not save this buffer
    torch.save(sd, folder / "FS_model.pt")
    reference = get_scorer("facescore", demo_settings).score([Sample(refs=(), out=_astronaut())])[0].value
    as_file = demo_settings.replace(facescore_model=str(folder / "FS_model.pt"))
    assert get_scorer("facescore", as_file).score([Sample(refs=(), out=_astronaut())])[0].value == pytest.approx(
        reference, abs=1e-6
    )
    config = json.loads((folder / "med_config.json").read_text())
    (folder / "med_config.json").write_text(json.dumps({**config, "add_cross_attention": False}))
    with pytest.raises(ModelUnavailableError, match="add_cross_attention"):
        get_scorer("facescore", demo_settings.replace(facescore_model=str(folder))).score(
            [Sample(refs=(), out=_astronaut())]
        )
    with pytest.raises(ModelUnavailableError, match="MASC_FACESCORE_MODEL"):
        get_scorer("facescore", demo_settings.replace(facescore_model=str(tmp_path / "none"))).score(
            [Sample(refs=(), out=_astronaut())]
        )
