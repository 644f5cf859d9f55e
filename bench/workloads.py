"""What the benchmark scripts share: random base-size checkpoints (SigLIP2 NaFlex, CLIP, PickScore-shaped CLIP,
DINO, and the scorer catalogue's: Qwen2.5-VL-style chat VLM, BLIP-2 ITM, IR-101, FaceScore BLIP, ArtScore
ResNet-50, DINOv2-base, the DreamSim ensemble), photos of a face, and synthetic images/masks."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from masc_ui.models.demo.siglip import build_naflex

SIGLIP_SIZES = {
    "tiny": dict(hidden=32, layers=2, heads=2, intermediate=64, num_patches=256),
    "base": dict(hidden=768, layers=12, heads=12, intermediate=3072, num_patches=256),
}
"""Random SigLIP2 NaFlex shapes: `base` is siglip2-base-patch16's (hidden 768, 12 layers)."""
REF_SIZES = [(640, 480), (480, 640), (512, 512), (800, 533), (533, 800)]
OUT_SIZE = (512, 512)


def naflex_checkpoint(workdir: Path, size: str) -> Path:
    """A seeded random SigLIP2 NaFlex checkpoint of `size`, built once under `workdir`; the folder name says
    `naflex` because masc-metric detects NaFlex by name."""
    path = workdir / f"siglip2-{size}-patch16-naflex-random"
    if not (path / "model.safetensors").exists():
        print(f"building the {size} random checkpoint in {path} (once) ...", flush=True)
        tmp = workdir / f".building-{size}"
        shutil.rmtree(tmp, ignore_errors=True)
        build_naflex(tmp, seed=0, **SIGLIP_SIZES[size])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(path)
    return path


CLIP_SIZES = {
    "clip": dict(patch_size=32, hidden_act="quick_gelu", pad_token="<|endoftext|>", logit_scale=math.log(1 / 0.07)),
    "pickscore": dict(patch_size=14, hidden_act="gelu", pad_token="!", logit_scale=math.log(100.0)),
}
"""Random CLIP shapes at base width (vision 768 x 12 layers, text 512 x 12 layers, projection 512): `clip` is
openai/clip-vit-base-patch32's; `pickscore` has PickScore's patch 14, GELU and scale 100 at that base width (the real
CLIP-H/14 is 1B parameters, too big for a benchmark machine)."""


def clip_checkpoint(workdir: Path, kind: str) -> Path:
    """A seeded random base-width CLIP checkpoint + processor (`kind` in `CLIP_SIZES`), built once under `workdir`,
    with the demo's locally built CLIP tokenizer."""
    path = workdir / f"{kind}-base-random"
    if not (path / "model.safetensors").exists():
        import torch
        from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

        from masc_ui.models.demo.clip import TEXT_LENGTH, build_tokenizer

        shape = CLIP_SIZES[kind]
        print(f"building the base-width random {kind} checkpoint in {path} (once) ...", flush=True)
        tokenizer = build_tokenizer(shape["pad_token"])
        ids = {
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        }
        config = CLIPConfig(
            text_config=dict(
                vocab_size=len(tokenizer),
                hidden_size=512,
                intermediate_size=2048,
                num_hidden_layers=12,
                num_attention_heads=8,
                max_position_embeddings=TEXT_LENGTH,
                hidden_act=shape["hidden_act"],
                projection_dim=512,
                **ids,
            ),
            vision_config=dict(
                hidden_size=768,
                intermediate_size=3072,
                num_hidden_layers=12,
                num_attention_heads=12,
                image_size=224,
                patch_size=shape["patch_size"],
                hidden_act=shape["hidden_act"],
                projection_dim=512,
            ),
            projection_dim=512,
            logit_scale_init_value=shape["logit_scale"],
        )
        torch.manual_seed(0)
        tmp = workdir / f".building-{kind}"
        shutil.rmtree(tmp, ignore_errors=True)
        CLIPModel(config).eval().save_pretrained(tmp)
        processor = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
        CLIPProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(tmp)
        tmp.rename(path)
    return path


def dino_checkpoint(workdir: Path) -> Path:
    """A seeded random DINO ViT-S/16 (facebook/dino-vits16's shape: hidden 384, 12 layers, 6 heads), built once."""
    path = workdir / "dino-vits16-random"
    if not (path / "model.safetensors").exists():
        import torch
        from transformers import ViTConfig, ViTImageProcessor, ViTModel

        from masc_ui.models.demo.dino import IMAGENET_MEAN, IMAGENET_STD

        print(f"building the random DINO ViT-S/16 checkpoint in {path} (once) ...", flush=True)
        config = ViTConfig(
            hidden_size=384,
            num_hidden_layers=12,
            num_attention_heads=6,
            intermediate_size=1536,
            image_size=224,
            patch_size=16,
            qkv_bias=True,
            layer_norm_eps=1e-6,
        )
        torch.manual_seed(0)
        tmp = workdir / ".building-dino"
        shutil.rmtree(tmp, ignore_errors=True)
        ViTModel(config, add_pooling_layer=False).eval().save_pretrained(tmp)
        ViTImageProcessor(
            size={"height": 224, "width": 224}, image_mean=list(IMAGENET_MEAN), image_std=list(IMAGENET_STD)
        ).save_pretrained(tmp)
        tmp.rename(path)
    return path


QWEN_BASE = dict(
    text=dict(
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        rope_scaling={"type": "mrope", "mrope_section": [8, 12, 12]},
    ),
    vision=dict(depth=8, hidden_size=640, intermediate_size=1280, num_heads=10, fullatt_block_indexes=[3, 7]),
    max_pixels=256 * 256,
    vocab_size=151936,
)
"""Qwen2.5-VL-shaped, base size: the language model of Qwen2-0.5B (896 wide, 24 layers, full 151936-token vocabulary)
and a ViT of 8 layers x 640 (the 3B/7B models have 32 x 1280 and a 2048/3584-wide LM); images up to 256 x 256."""
BLIP2_BASE = dict(
    vision=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12, patch_size=14),
    qformer=dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
)
"""BLIP-2 ITM with a ViT-B/14 at 224 (257 tokens; blip2-itm-vit-g has ViT-g: 1408 x 39) and the real Q-Former size
(BERT-base: 768 x 12)."""
FACESCORE_BASE = dict(
    text=dict(
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
    ),
    vision=dict(vision_width=768, vision_layers=12, vision_mlp=3072, patch=16),
)
"""FaceScore's BLIP with the real text encoder size (BERT-base with cross-attention, 768 x 12) and a ViT-B/16 at 224
(the released FS_model.pt has BLIP's ViT-L/16: 1024 x 24)."""


def built_once(workdir: Path, name: str, build, marker: str = "") -> Path:
    """`workdir/name`, written by `build(folder)` the first time (into a temporary folder renamed when done);
    `marker` is a file the finished folder holds (default: any file)."""
    path = workdir / name
    done = (path / marker).exists() if marker else path.is_dir() and any(path.iterdir())
    if not done:
        print(f"building {name} in {path} (once) ...", flush=True)
        tmp = workdir / f".building-{name}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        build(tmp)
        shutil.rmtree(path, ignore_errors=True)
        tmp.rename(path)
    return path


def qwen_vl_checkpoint(workdir: Path) -> Path:
    """A seeded random base-size Qwen2.5-VL-style chat VLM (`QWEN_BASE`) with the demo's tokenizer and chat template."""
    from masc_ui.models.demo.qwen_vl import build

    return built_once(workdir, "qwen2.5-vl-base-random", lambda d: build(d, 0, **QWEN_BASE), "config.json")


def blip2_itm_checkpoint(workdir: Path) -> Path:
    """A seeded random base-size BLIP-2 ITM model (`BLIP2_BASE`) with the demo's processor."""
    from masc_ui.models.demo.blip2_itm import build

    return built_once(workdir, "blip2-itm-base-random", lambda d: build(d, 0, **BLIP2_BASE), "config.json")


def ir101_checkpoint(workdir: Path) -> Path:
    """A seeded random IR-101 (the released CurricularFace backbone's architecture), as its released file."""
    import torch

    from masc_ui.models.demo.faces import _randomize_batchnorm
    from masc_ui.models.nets.ir import IR101_UNITS, IR101_WIDTHS, RELEASED_FILE, IRArchitecture, IRBackbone

    def build(folder: Path) -> None:
        torch.manual_seed(0)
        model = IRBackbone(IRArchitecture(64, IR101_UNITS, IR101_WIDTHS, 512))
        _randomize_batchnorm(model)
        torch.save(model.state_dict(), folder / RELEASED_FILE)

    return built_once(workdir, "ir101-base-random", build, RELEASED_FILE) / RELEASED_FILE


def facescore_checkpoint(workdir: Path) -> Path:
    """A seeded random base-size FaceScore BLIP (`FACESCORE_BASE`) in the released `FS_model.pt` layout."""
    from masc_ui.models.demo.catalogue import build_facescore
    from masc_ui.models.nets.blip_reward import MODEL_FILE

    return built_once(workdir, "facescore-base-random", lambda d: build_facescore(d, 0, **FACESCORE_BASE), MODEL_FILE)


def artscore_checkpoint(workdir: Path) -> Path:
    """A seeded random ResNet-50 with ArtScore's head, as the released state-dict file."""
    import torch

    from masc_ui.models.demo.faces import _randomize_batchnorm
    from masc_ui.models.nets.artscore import RELEASED_FILE, build_artscore_network

    def build(folder: Path) -> None:
        torch.manual_seed(0)
        net = build_artscore_network()
        _randomize_batchnorm(net)
        torch.save(net.state_dict(), folder / RELEASED_FILE)

    return built_once(workdir, "artscore-resnet50-random", build, RELEASED_FILE) / RELEASED_FILE


def hps_checkpoint(workdir: Path) -> Path:
    """A seeded random OpenCLIP ViT-B/16 (OpenCLIP's `ViT-B-16` sizes) saved as HPSv2.1's release is, with its sizes in
    `open_clip_config.json` beside it (the file itself is returned)."""
    import json

    import open_clip
    import torch

    from masc_ui.models.nets.hpsv2 import CONFIG_FILE, RELEASED_FILE

    def build(folder: Path) -> None:
        config = open_clip.get_model_config("ViT-B-16")
        torch.manual_seed(0)
        model = open_clip.CLIP(**config)
        (folder / CONFIG_FILE).write_text(json.dumps({"model_cfg": config}))
        torch.save({"state_dict": model.state_dict()}, folder / RELEASED_FILE)

    return built_once(workdir, "hps-vit-b16-random", build, RELEASED_FILE) / RELEASED_FILE


def dinov2_checkpoint(workdir: Path) -> Path:
    """A seeded random `Dinov2Model` of facebook/dinov2-base's shape (hidden 768, 12 layers, 12 heads) with the real
    processor configuration."""
    from masc_ui.models.demo.dino import build_v2

    return built_once(
        workdir, "dinov2-base-random", lambda d: build_v2(d, 0, hidden=768, layers=12, heads=12), "config.json"
    )


def dreamsim_checkpoint(workdir: Path) -> Path:
    """A seeded random DreamSim ensemble release folder of the real shape (three ViT-B/16, projections 512, LoRA r 16
    on every attn.qkv; about 1 GB)."""
    from masc_ui.models.demo.dreamsim import build

    return built_once(
        workdir,
        "dreamsim-ensemble-random",
        lambda d: build(d, 0, width=768, projection=512, lora_rank=16, lora_alpha=8.0),
        "ensemble_lora/adapter_config.json",
    )


def catalogue_base_settings(workdir: Path) -> dict[str, str]:
    """Settings overrides naming the scorer catalogue's base-size random checkpoints (built once under `workdir`):
    VQAScore's chat-VLM family, ITMScore, FaceSim's recognizer, FaceScore, ArtScore."""
    return {
        "vqa_model": str(qwen_vl_checkpoint(workdir)),
        "itm_model": str(blip2_itm_checkpoint(workdir)),
        "face_recognizer": str(ir101_checkpoint(workdir)),
        "facescore_model": str(facescore_checkpoint(workdir)),
        "artscore_checkpoint": str(artscore_checkpoint(workdir)),
    }


def face_photos() -> list[Image.Image]:
    """Views of the astronaut photo that ships with scikit-image (`skimage.data.astronaut()`, 512 x 512), each
    holding one face that the packaged MTCNN detector finds: crops of 224-320 px, rotated +-8 degrees, mirrored."""
    from PIL import ImageOps
    from skimage import data

    photo = Image.fromarray(data.astronaut())
    crop = photo.crop((100, 20, 400, 320))
    return [
        crop,
        crop.rotate(8),
        crop.rotate(-8),
        ImageOps.mirror(crop),
        photo.crop((120, 30, 380, 290)),
        crop.resize((224, 224)),
        photo.crop((80, 0, 400, 320)),
        photo.resize((300, 300)),
    ]


def random_image(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """A smooth random RGB image of `size` (W, H)."""
    w, h = size
    coarse = rng.integers(0, 256, (h // 16, w // 16, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize((w, h), Image.BILINEAR)


def random_ellipse(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A uint8 (H, W) mask (0/255) of a random ellipse near the centre of an image of `size` (W, H)."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = h * rng.uniform(0.4, 0.6), w * rng.uniform(0.4, 0.6)
    ry, rx = h * rng.uniform(0.2, 0.35), w * rng.uniform(0.2, 0.35)
    return ((((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2) <= 1).astype(np.uint8) * 255


PROMPTS = [
    "a photo of a {} on a sandy beach at sunset",
    "a {} in a snowy forest",
    "a {} on a wooden table in a kitchen",
    "a {} floating in outer space with stars",
    "a watercolor painting of a {}",
    "a {} in the style of pixel art",
    "an oil painting of a {} in a museum",
    "a {} made of glass on a city street",
    "a giant {} next to the Eiffel tower",
]
SUBJECTS = ["kitten", "backpack", "teapot", "robot toy", "sneaker"]


def masc_workload(n_refs: int, n_outputs: int, seed: int) -> list:
    """A DreamBench++-shaped MaSC workload: `n_refs` references of mixed aspect ratios (`REF_SIZES`), each with
    `n_outputs` square outputs (`OUT_SIZE`) of the prompts above, masks (random ellipses) on both."""
    from masc_ui.metrics.sample import Sample

    rng = np.random.default_rng(seed)
    samples = []
    for r in range(n_refs):
        size = REF_SIZES[r % len(REF_SIZES)]
        ref, ref_mask = random_image(rng, size), random_ellipse(size, rng)
        subject = SUBJECTS[r % len(SUBJECTS)]
        for k in range(n_outputs):
            samples.append(
                Sample(
                    refs=(ref,),
                    out=random_image(rng, OUT_SIZE),
                    prompt=PROMPTS[k % len(PROMPTS)].format(subject),
                    subject=subject,
                    ref_masks=(ref_mask,),
                    out_mask=random_ellipse(OUT_SIZE, rng),
                )
            )
    return samples
