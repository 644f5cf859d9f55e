"""Model profiles: which checkpoints each profile uses (DESIGN.md "Model profiles")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..settings import Settings


@dataclass(frozen=True)
class ModelIds:
    """Checkpoint ids (HF ids or local folders) of one profile."""

    siglip: str
    """SigLIP2 for MaSC CP/PF."""
    clip: str
    """CLIP for CLIP-I, CLIP-I-Seg, CLIP-T, CLIPScore."""
    pickscore: str
    """PickScore model."""
    pickscore_processor: str
    """PickScore's processor (the CLIP-ViT-H-14 one)."""
    dino: str
    """DINO ViT for DINO-I and DINO-I-Seg."""
    dinov2: str
    """DINOv2 (`Dinov2Model`) for DINOv2-I and DINOv2-I-Seg."""
    dreamsim: str
    """DreamSim ensemble release (the folder of `dreamsim_ensemble_checkpoint.zip` extracted, or the zip's URL)."""
    sam_variant: str
    """Segment Anything variant: vit_b, vit_l, vit_h."""
    sam_checkpoint: str | None
    """Local SAM checkpoint path; None = the official download for `sam_variant`."""
    sam3: str
    """SAM 3 (text-prompted segmentation)."""
    vqa: str
    """VQAScore: CLIP-FlanT5 or a chat VLM (`AutoModelForImageTextToText`)."""
    itm: str
    """ITMScore: BLIP-2 `Blip2ForImageTextRetrieval`."""
    gme: str
    """GME-Qwen2-VL embedder for GmeScore and NexusScore (OpenS2V)."""
    nexus_detector: str
    """Image-prompted detector of NexusScore (OWLv2, standing in for OpenS2V's YOLO-World v2-L image prompts)."""
    facescore: str | None = None
    """FaceScore: folder or HF repo with the released `FS_model.pt` + `med_config.json`."""
    face_recognizer: str | None = None
    """FaceSim's IR-101 CurricularFace state dict (file, folder or HF repo holding it)."""
    face_detector_dir: str | None = None
    """FaceSim's SCRFD detector: insightface `buffalo_l` pack folder; None = the packaged MTCNN fallback."""
    retinaface: str | None = None
    """FaceScore's RetinaFace-MobileNet0.25 weights (file, URL or HF repo); None = the packaged MTCNN fallback."""
    artscore: str | None = None
    """ArtScore's ResNet-50 state dict (file, folder, URL or HF repo)."""
    dbpp_judge: str | None = None
    """The local DreamBench++ judge: a chat VLM (`AutoModelForImageTextToText` with a chat template)."""
    imagereward: str | None = None
    """ImageReward: folder or HF repo with the released `ImageReward.pt` + `med_config.json`."""
    hps: str | None = None
    """HPSv2.1: the OpenCLIP checkpoint `HPS_v2.1_compressed.pt` (file, folder or HF repo holding it)."""
    aesthetic_head: str | None = None
    """LAION aesthetic predictor v2 MLP `sac+logos+ava1-l14-linearMSE.pth` (file, folder, URL or HF repo)."""
    aesthetic_clip: str | None = None
    """The CLIP (ViT-L/14) whose image embedding the aesthetic head reads."""
    arcface: str | None = None
    """FaceSim-Arc's ArcFace recognizer: the insightface `buffalo_l` folder holding `w600k_r50.onnx` (or the file)."""


DREAMSIM_ENSEMBLE_URL = (
    "https://github.com/ssundaram21/dreamsim/releases/download/v0.2.0-checkpoints/dreamsim_ensemble_checkpoint.zip"
)
"""The DreamSim ensemble weights as the `dreamsim` package 0.2.1 downloads them (`dreamsim/config.py`)."""

PAPER = ModelIds(
    siglip="google/siglip2-so400m-patch16-naflex",
    clip="openai/clip-vit-base-patch32",
    pickscore="yuvalkirstain/PickScore_v1",
    pickscore_processor="laion/CLIP-ViT-H-14-laion2B-s32B-b79K",
    dino="facebook/dino-vits16",
    dinov2="facebook/dinov2-base",
    dreamsim=DREAMSIM_ENSEMBLE_URL,
    sam_variant="vit_h",
    sam_checkpoint=None,
    sam3="facebook/sam3",
    vqa="zhiqiulin/clip-flant5-xxl",
    itm="Salesforce/blip2-itm-vit-g",
    gme="Alibaba-NLP/gme-Qwen2-VL-7B-Instruct",
    nexus_detector="google/owlv2-large-patch14-ensemble",
    facescore="AIGCer-OPPO/FaceScore",
    face_recognizer="BestWishYsh/OpenS2V-Weight",
    face_detector_dir="~/.insightface/models/buffalo_l",
    retinaface="https://github.com/elliottzheng/face-detection/releases/download/0.0.1/mobilenet0.25_Final.pth",
    artscore=(
        "https://github.com/jchen175/ArtScore/raw/main/ckpt/"
        "loss@listMLE_model@resnet50_denseLayer@True_batch_size@16_lr@0.0001_dropout@0.5_E_8.pth"
    ),
    dbpp_judge="Qwen/Qwen2.5-VL-7B-Instruct",
    imagereward="THUDM/ImageReward",
    hps="xswu/HPSv2",
    aesthetic_head=(
        "https://github.com/christophschuhmann/improved-aesthetic-predictor/raw/main/sac+logos+ava1-l14-linearMSE.pth"
    ),
    aesthetic_clip="openai/clip-vit-large-patch14",
    arcface="~/.insightface/models/buffalo_l",
)
FAST = replace(
    PAPER,
    siglip="google/siglip2-base-patch16-naflex",
    dinov2="facebook/dinov2-small",
    sam_variant="vit_b",
    gme="Alibaba-NLP/gme-Qwen2-VL-2B-Instruct",
    nexus_detector="google/owlv2-base-patch16-ensemble",
    vqa="zhiqiulin/clip-flant5-xl",
    dbpp_judge="Qwen/Qwen2.5-VL-3B-Instruct",
)
CHAT_VLM_CHOICES = ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-3B-Instruct")
"""The chat-VLM family of VQAScore (set `vqa_model`): METRICS.md's default and its smaller choice."""

DEMO_NAMES = {
    "siglip": "siglip2-naflex",
    "clip": "clip",
    "pickscore": "clip-h",
    "pickscore_processor": "clip-h",
    "dino": "dino",
    "dinov2": "dinov2",
    "dreamsim": "dreamsim",
    "sam3": "sam3",
    "vqa": "clip-flant5",
    "itm": "blip2-itm",
    "gme": "gme-qwen2-vl",
    "nexus_detector": "owlv2",
    "facescore": "facescore",
    "face_recognizer": "face-recognizer",
    "artscore": "artscore",
    "dbpp_judge": "qwen2.5-vl",
    "imagereward": "imagereward",
    "hps": "hpsv2",
    "aesthetic_head": "aesthetic",
    "aesthetic_clip": "clip",
    "arcface": "arcface",
}
"""ModelIds field -> demo folder. The demo profile has no face detector weights: face metrics use the packaged
MTCNN there (real weights, shipped inside the PyPI package `mtcnn`; a random detector would find random faces);
the tiny RetinaFace (`retinaface`) is built for tests and for `MASC_RETINAFACE_WEIGHTS`. The demo ArcFace folder
(`arcface`) holds the tiny recognizer `w600k_r50.onnx` alone (MTCNN finds the faces there, as for FaceSim); the
aesthetic head reads the tiny CLIP of the CLIP family (`clip`)."""
DEMO_SAM = ("vit_tiny", "sam-vit-tiny/sam_vit_tiny.pth")


def demo_ids(weights_dir: Path) -> ModelIds:
    """The tiny random checkpoints that `masc-ui demo-weights` writes under `weights_dir`."""
    paths = {k: str(weights_dir / v) for k, v in DEMO_NAMES.items()}
    return ModelIds(sam_variant=DEMO_SAM[0], sam_checkpoint=str(weights_dir / DEMO_SAM[1]), **paths)


def model_ids(settings: Settings, profile: str | None = None) -> ModelIds:
    """The checkpoints for `profile` (default: settings.profile; `auto` reads as `paper`), with the
    per-model overrides of `settings` applied on top."""
    name = profile or settings.profile
    base = {"paper": PAPER, "auto": PAPER, "fast": FAST}.get(name)
    if base is None:
        base = demo_ids(settings.resolved_demo_weights_dir)
    overrides = {
        "siglip": settings.siglip_model,
        "clip": settings.clip_model,
        "pickscore": settings.pickscore_model,
        "pickscore_processor": settings.pickscore_processor,
        "dino": settings.dino_model,
        "dinov2": settings.dinov2_model,
        "dreamsim": settings.dreamsim_weights,
        "sam_variant": settings.sam_variant,
        "sam_checkpoint": settings.sam_checkpoint,
        "sam3": settings.sam3_model,
        "vqa": settings.vqa_model,
        "itm": settings.itm_model,
        "gme": settings.gme_model,
        "nexus_detector": settings.nexus_detector,
        "facescore": settings.facescore_model,
        "face_recognizer": settings.face_recognizer,
        "face_detector_dir": settings.face_detector_dir,
        "retinaface": settings.retinaface_weights,
        "artscore": settings.artscore_checkpoint,
        "dbpp_judge": settings.dbpp_local_model,
        "imagereward": settings.imagereward_model,
        "hps": settings.hps_model,
        "aesthetic_head": settings.aesthetic_head,
        "aesthetic_clip": settings.aesthetic_clip_model,
        "arcface": settings.face_detector_dir,
    }
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
