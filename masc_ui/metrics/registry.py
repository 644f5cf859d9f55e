"""Every metric, declared once: `list_metrics()`, `get_spec(name)`, `get_scorer(name, settings)`,
`score_metrics(samples, names, settings)`. The UI, CLI, exports and agreement analysis read ranges,
directions and conventions from here and nowhere else.

Video metrics (OpenS2V's GmeScore, NexusScore, NaturalScore; `MetricSpec.media == "video"`) are declared here too;
their scorers take `VideoSample`s (`score_video_metrics`). `list_metrics()`, `metric_names()` and "all" mean the
image metrics unless `media="video"` (or None for every metric) is asked for. `score_metrics` is the one entry point
for samples whose output is an image or a video (`metrics_for(samples)`: what "all" means for them).

    >>> from masc_ui.metrics.registry import get_spec
    >>> get_spec("clipscore").range
    (0.0, 2.5)
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import InputError
from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .base import MetricSpec, Scorer
from .sample import MetricValue, Sample

if TYPE_CHECKING:
    from .video.scorer import VideoScorer

_COS = (-1.0, 1.0)
_MASC_PAPER = "MaSC (arXiv 2605.22469); reference implementation masc-metric 0.3.0"
_DREAMBOOTH = "DreamBooth (Ruiz et al., CVPR 2023); DreamBench++ (Peng et al., ICLR 2025)"
_SEG_RULE = "the -Seg rule of CLIP-I-Seg (idea of KnowCusBench/MoKus; exact recipe ours)"
_OPENS2V = "OpenS2V-Nexus (Yuan et al., NeurIPS 2025 D&B, arXiv 2505.20292), eval/ scripts"
_DREAMBENCH_PP = "DreamBench++ (Peng et al., ICLR 2025), yuangpeng/dreambench_plus eval scripts and prompts/"
_DBPP_SETTINGS = (
    "dbpp_judge",
    "dbpp_api_model",
    "dbpp_local_model",
    "judge_base_url",
    "judge_temperature",
    "judge_seed",
)

_METRICS: tuple[tuple[MetricSpec, str], ...] = (
    (
        MetricSpec(
            "cp",
            "MaSC CP",
            _COS,
            True,
            "Mean over reference-mask patches (weight > 0.5) of each patch's best cosine to any output patch, "
            "SigLIP2 patch tokens; several references: mean of the per-reference CPs.",
            _MASC_PAPER,
            needs_masks="ref",
            needs_reference=True,
            backbone_settings=("siglip_model", "naflex_max_patches", "fg_threshold"),
            family="masc",
        ),
        "masc_ui.metrics.masc.scorer:MaSCScorer",
    ),
    (
        MetricSpec(
            "pf",
            "MaSC PF",
            _COS,
            True,
            "Cosine of SigLIP2's pooled output image with the subject's patches (mask >= 0.5) hidden from the "
            "attention-pooling head and the pooled text of the subject-stripped prompt.",
            _MASC_PAPER,
            needs_masks="out",
            needs_prompt=True,
            needs_reference=True,
            backbone_settings=("siglip_model", "naflex_max_patches", "fg_threshold", "stripper"),
            family="masc",
        ),
        "masc_ui.metrics.masc.scorer:MaSCScorer",
    ),
    (
        MetricSpec(
            "clip_i",
            "CLIP-I",
            _COS,
            True,
            "Cosine of the CLIP image embeddings of output and reference; several references: their mean.",
            _DREAMBOOTH,
            needs_reference=True,
            backbone_settings=("clip_model",),
            family="clip",
        ),
        "masc_ui.metrics.clip.family:ClipImageScorer",
    ),
    (
        MetricSpec(
            "clip_i_seg",
            "CLIP-I-Seg",
            _COS,
            True,
            "CLIP-I of the output with pixels outside its mask filled white and cropped to the mask's box + 5% "
            "margin, against the reference (optionally segmented the same way); several references: mean.",
            "idea of KnowCusBench/MoKus; exact recipe ours (unpublished there)",
            needs_masks="out",
            needs_reference=True,
            backbone_settings=("clip_model",),
            family="clip",
        ),
        "masc_ui.metrics.clip.seg:ClipSegScorer",
    ),
    (
        MetricSpec(
            "clip_t",
            "CLIP-T",
            _COS,
            True,
            "Cosine of the CLIP text embedding of the full prompt (77 tokens, not stripped) and the output's "
            "image embedding.",
            "Textual Inversion (Gal et al., ICLR 2023); DreamBooth (Ruiz et al., CVPR 2023)",
            needs_prompt=True,
            backbone_settings=("clip_model",),
            family="clip",
        ),
        "masc_ui.metrics.clip.family:ClipTextScorer",
    ),
    (
        MetricSpec(
            "clipscore",
            "CLIPScore",
            (0.0, 2.5),
            True,
            "2.5 * max(cos, 0) of CLIP-T's cosine, per sample.",
            "CLIPScore (Hessel et al., EMNLP 2021)",
            needs_prompt=True,
            backbone_settings=("clip_model",),
            family="clip",
        ),
        "masc_ui.metrics.clip.family:ClipScoreScorer",
    ),
    (
        MetricSpec(
            "pickscore",
            "PickScore",
            (-100.0, 100.0),
            True,
            "logit_scale.exp() (100 for PickScore_v1) * cosine of the PickScore text and image embeddings, raw "
            "(typical values 18-23).",
            "Pick-a-Pic (Kirstain et al., NeurIPS 2023)",
            needs_prompt=True,
            backbone_settings=("pickscore_model", "pickscore_processor"),
            family="clip",
        ),
        "masc_ui.metrics.clip.pickscore:PickScoreScorer",
    ),
    (
        MetricSpec(
            "dino_i",
            "DINO-I",
            _COS,
            True,
            "Cosine of the DINO ViT-S/16 CLS tokens (resize 256 bicubic, centre crop 224, ImageNet norm) of output "
            "and reference; several references: their mean.",
            "DreamBooth (Ruiz et al., CVPR 2023)",
            needs_reference=True,
            backbone_settings=("dino_model",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dino_i:DinoImageScorer",
    ),
    (
        MetricSpec(
            "dino_i_seg",
            "DINO-I-Seg",
            _COS,
            True,
            "DINO-I of the output with pixels outside its mask filled white and cropped to the mask's box + 5% "
            "margin (CLIP-I-Seg's rule), against the reference (optionally segmented the same way); several "
            "references: mean.",
            _SEG_RULE + " on DINO-I",
            needs_masks="out",
            needs_reference=True,
            backbone_settings=("dino_model",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dino_i:DinoSegScorer",
    ),
    (
        MetricSpec(
            "dinov2_i",
            "DINOv2-I",
            _COS,
            True,
            "Cosine of the DINOv2 CLS embeddings (Dinov2Model pooler_output = the layer-normed CLS token; the "
            "checkpoint's processor: shorter side 256 bicubic, centre crop 224, ImageNet norm) of output and "
            "reference; several references: their mean.",
            "DINOv2 (Oquab et al., TMLR 2024); DreamBench++ (Peng et al., ICLR 2025) Dinov2Score (reported x100)",
            needs_reference=True,
            backbone_settings=("dinov2_model",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dinov2_i:Dinov2ImageScorer",
    ),
    (
        MetricSpec(
            "dinov2_i_seg",
            "DINOv2-I-Seg",
            _COS,
            True,
            "DINOv2-I of the output with pixels outside its mask filled white and cropped to the mask's box + 5% "
            "margin (CLIP-I-Seg's rule), against the reference (optionally segmented the same way); several "
            "references: mean.",
            _SEG_RULE + " on DINOv2-I",
            needs_masks="out",
            needs_reference=True,
            backbone_settings=("dinov2_model",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dinov2_i:Dinov2SegScorer",
    ),
    (
        MetricSpec(
            "dreamsim",
            "DreamSim",
            (0.0, 2.0),
            False,
            "1 - cos of the DreamSim ensemble embeddings (DINO ViT-B/16 CLS + CLIP and OpenCLIP ViT-B/16 projected "
            "embeddings with the release's LoRA; 224x224 bicubic; concatenated, centred, L2-normalized) of output "
            "and reference; several references: the mean distance. Lower = more similar.",
            "DreamSim (Fu et al., NeurIPS 2023); package dreamsim 0.2.1, ensemble model",
            needs_reference=True,
            backbone_settings=("dreamsim_weights",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dreamsim:DreamSimScorer",
    ),
    (
        MetricSpec(
            "dreamsim_seg",
            "DreamSim-Seg",
            (0.0, 2.0),
            False,
            "DreamSim of the output with pixels outside its mask filled white and cropped to the mask's box + 5% "
            "margin (CLIP-I-Seg's rule), against the reference (optionally segmented the same way); several "
            "references: the mean distance. Lower = more similar.",
            _SEG_RULE + " on DreamSim",
            needs_masks="out",
            needs_reference=True,
            backbone_settings=("dreamsim_weights",),
            family="dino",
        ),
        "masc_ui.metrics.dino.dreamsim:DreamSimSegScorer",
    ),
    (
        MetricSpec(
            "vqascore",
            "VQAScore",
            (0.0, 1.0),
            True,
            'P("Yes") of a VLM asked \'Does this figure show "{prompt}"? Please answer yes or no.\' about the output '
            "(full prompt): CLIP-FlanT5 = exp(-mean cross-entropy of Yes+EOS, teacher-forced); chat VLMs = softmax "
            "of one forward's last logits at the first token of Yes.",
            "VQAScore (Lin et al., ECCV 2024); t2v_metrics",
            needs_prompt=True,
            backbone_settings=("vqa_model",),
            family="vqa",
        ),
        "masc_ui.metrics.vqa.vqascore:VQAScoreScorer",
    ),
    (
        MetricSpec(
            "itmscore",
            "ITMScore",
            (0.0, 1.0),
            True,
            "softmax of BLIP-2's image-text matching head (logits averaged over the 32 queries)[match] for the output "
            "and the full prompt truncated to 35 tokens.",
            "BLIP-2 (Li et al., ICML 2023); t2v_metrics blip2-itm",
            needs_prompt=True,
            backbone_settings=("itm_model",),
            family="vqa",
        ),
        "masc_ui.metrics.vqa.itmscore:ITMScoreScorer",
    ),
    (
        MetricSpec(
            "facesim",
            "FaceSim",
            (0.0, 1.0),
            True,
            "max(0, cos) of CurricularFace IR-101 embeddings of the largest face of output and reference (SCRFD "
            "detection, 5-point ArcFace alignment); several references: mean; NaN when either has no face.",
            _OPENS2V + " (get_facesim.py, facesim_cur)",
            needs_reference=True,
            backbone_settings=("face_recognizer", "face_detector_dir"),
            family="faces",
        ),
        "masc_ui.metrics.faces.facesim:FaceSimScorer",
    ),
    (
        MetricSpec(
            "facescore",
            "FaceScore",
            (-math.inf, math.inf),
            True,
            "Raw head output of the ImageReward-style BLIP reward model with the text 'A face.' on each face "
            "(RetinaFace, score >= 0.9) of the output; several faces: mean; NaN when no face.",
            "FaceScore (Liao et al., 2024)",
            backbone_settings=("facescore_model", "retinaface_weights"),
            family="faces",
        ),
        "masc_ui.metrics.faces.facescore:FaceScoreScorer",
    ),
    (
        MetricSpec(
            "artscore",
            "ArtScore",
            (-math.inf, math.inf),
            True,
            "ResNet-50 regression head output on the output squashed to 224x224; higher = more like authentic "
            "artwork; only relative values (rankings) mean something.",
            "ArtScore (Chen et al., IEEE TMM 2024)",
            backbone_settings=("artscore_checkpoint",),
            family="quality",
        ),
        "masc_ui.metrics.quality.artscore:ArtScoreScorer",
    ),
    (
        MetricSpec(
            "imagereward",
            "ImageReward",
            (-math.inf, math.inf),
            True,
            "(r - 0.16717) / 1.03334 (ImageReward.score), r = the BLIP reward head's output for the output (224 px, "
            "bicubic, centre crop) and the full prompt (BERT tokens, 35); about N(0, 1) over ImageReward's training "
            "images.",
            "ImageReward (Xu et al., NeurIPS 2023); image-reward 1.5",
            needs_prompt=True,
            backbone_settings=("imagereward_model",),
            family="quality",
        ),
        "masc_ui.metrics.quality.imagereward:ImageRewardScorer",
    ),
    (
        MetricSpec(
            "hpsv21",
            "HPSv2.1",
            (-100.0, 100.0),
            True,
            "100 * cosine of the HPSv2.1 (OpenCLIP ViT-H/14 fine-tune) embeddings of the output (long side 224, padded "
            "square) and the full prompt (77 tokens), as the HPSv2 benchmark; hpsv2's score() is this / 100.",
            "HPSv2 (Wu et al., 2023), HPS v2.1 checkpoint; hpsv2 1.2.0",
            needs_prompt=True,
            backbone_settings=("hps_model",),
            family="quality",
        ),
        "masc_ui.metrics.quality.hps:HpsScorer",
    ),
    (
        MetricSpec(
            "aesthetic",
            "Aesthetic",
            (-math.inf, math.inf),
            True,
            "LAION aesthetic predictor v2: its MLP on the L2-normalised CLIP ViT-L/14 image embedding of the output "
            "(trained on 1-10 ratings); a video: mean over its sampled frames (32 by default, as OpenS2V).",
            "LAION improved-aesthetic-predictor v2 (sac+logos+ava1-l14-linearMSE); " + _OPENS2V + " (get_aesscore.py)",
            backbone_settings=("aesthetic_head", "aesthetic_clip_model"),
            family="quality",
        ),
        "masc_ui.metrics.quality.aesthetic:AestheticScorer",
    ),
    (
        MetricSpec(
            "facesim_arc",
            "FaceSim-Arc",
            (0.0, 1.0),
            True,
            "max(0, cos) of ArcFace (insightface buffalo_l w600k_r50, ONNX) embeddings of the largest face of output "
            "and reference (FaceSim's detection; 5-point alignment to 112); several references: mean; NaN when either "
            "has no face.",
            _OPENS2V + " (get_facesim.py, facesim_arc)",
            needs_reference=True,
            backbone_settings=("face_detector_dir",),
            family="faces",
        ),
        "masc_ui.metrics.faces.facesim_arc:ArcFaceSimScorer",
    ),
    (
        MetricSpec(
            "dbpp_cp",
            "DreamBench++ CP",
            (0.0, 4.0),
            True,
            "A chat model (GPT-4o by default, or a local chat VLM) asked DreamBench++'s concept-preservation rubric "
            "(its prompts/, verbatim) about the reference and the output, both 512x512 JPEG; the score is the "
            "answer's one 'Score: N', an integer 0-4; several references: mean of their scores.",
            _DREAMBENCH_PP,
            needs_reference=True,
            backbone_settings=_DBPP_SETTINGS,
            family="judges",
        ),
        "masc_ui.metrics.judges.dbpp:DreamBenchJudgeScorer",
    ),
    (
        MetricSpec(
            "dbpp_pf",
            "DreamBench++ PF",
            (0.0, 4.0),
            True,
            "A chat model (GPT-4o by default, or a local chat VLM) asked DreamBench++'s prompt-following rubric about "
            "the full prompt and the output (512x512 JPEG); the score is the answer's one 'Score: N', an integer 0-4.",
            _DREAMBENCH_PP,
            needs_prompt=True,
            backbone_settings=_DBPP_SETTINGS,
            family="judges",
        ),
        "masc_ui.metrics.judges.dbpp:DreamBenchJudgeScorer",
    ),
    (
        MetricSpec(
            "gmescore",
            "GmeScore",
            _COS,
            True,
            "Mean over 32 evenly sampled frames (numpy.linspace, first and last) of the cosine between the GME-Qwen2-VL "
            "embedding of the prompt (query instruction) and of each frame; multimodal (M-RoPE) position ids.",
            _OPENS2V,
            needs_prompt=True,
            backbone_settings=("gme_model",),
            media="video",
            family="video",
        ),
        "masc_ui.metrics.video.gmescore:GmeScoreScorer",
    ),
    (
        MetricSpec(
            "nexusscore",
            "NexusScore",
            (0.0, 1.0),
            True,
            "32 frames; per frame and reference, image-prompted detection (OWLv2 standing in for YOLO-World); crops with "
            "confidence > 0.6 and GME text similarity to the class label > 0.30 are scored by GME image similarity to "
            "the reference; mean of the kept similarities divided by the number of frames with a detection (v1.1 rule, "
            "OpenS2V issue #36).",
            _OPENS2V,
            needs_reference=True,
            backbone_settings=("gme_model", "nexus_detector"),
            media="video",
            family="video",
        ),
        "masc_ui.metrics.video.nexusscore:NexusScoreScorer",
    ),
    (
        MetricSpec(
            "naturalscore",
            "NaturalScore",
            (0.0, 1.0),
            True,
            "An OpenAI-compatible chat model (default gpt-4o-2024-11-20) rates 16 frames (i * (T // 16), long side 512, "
            "JPEG) on OpenS2V's 1-5 realism rubric; 3 calls averaged; (x - 1) / 4.",
            _OPENS2V,
            backbone_settings=("judge_model", "judge_base_url", "judge_temperature", "judge_seed"),
            media="video",
            family="video",
        ),
        "masc_ui.metrics.video.naturalscore:NaturalScoreScorer",
    ),
    (
        MetricSpec(
            "motion",
            "Motion",
            (0.0, math.inf),
            True,
            "|mean| of OpenCV Farneback optical flow between consecutive frames, over every frame (grey as OpenCV's "
            "BGR weights read RGB), each flow map area-resized to 16 px wide, averaged over frames, positions and "
            "both (signed) components; 0 = still.",
            _OPENS2V + " (get_motionscore.py, motion_fb)",
            media="video",
            family="video",
        ),
        "masc_ui.metrics.video.motion:MotionScorer",
    ),
    (
        MetricSpec(
            "opens2v_total",
            "OpenS2V Total",
            (-0.15, 1.0),
            True,
            "OpenS2V-Eval v1.0's weighted Total of six scores of one video, each clipped and min-max normalised as "
            "its leaderboard does: Open domain 0.12 Aesthetics + 0.12 Motion + 0.20 FaceSim + 0.12 GmeScore + "
            "0.20 NexusScore + 0.24 NaturalScore (Human domain: 0.15, 0.15, 0.25, 0.15, -, 0.30); FaceSim or "
            "NexusScore absent (NaN, NexusScore 0): left out, the other weights rescaled to sum 1; another NaN: NaN.",
            _OPENS2V + " (v1.0 leaderboard, merge_result.py)",
            needs_prompt=True,
            needs_reference=True,
            backbone_settings=("judge_model", "gme_model", "nexus_detector", "face_recognizer"),
            media="video",
            family="video",
        ),
        "masc_ui.metrics.video.opens2v_total:OpenS2VTotalScorer",
    ),
)
_SPECS = {spec.name: spec for spec, _ in _METRICS}
_FACTORIES = {spec.name: factory for spec, factory in _METRICS}


def list_metrics(media: str | None = "image") -> list[MetricSpec]:
    """The built-in metrics judging `media` (`image`, `video`; None = all), in display order (MaSC first)."""
    return [spec for spec, _ in _METRICS if media is None or spec.media == media]


def metric_names(media: str | None = "image") -> list[str]:
    return [spec.name for spec in list_metrics(media)]


def get_spec(name: str) -> MetricSpec:
    """The declaration of built-in metric `name`; `InputError` listing the known names otherwise."""
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown metric {name!r}; known metrics: {', '.join(_SPECS)}") from None


def external_metric_spec(
    name: str,
    lo: float,
    hi: float,
    higher_is_better: bool = True,
    *,
    display_name: str | None = None,
    convention: str = "",
    paper: str = "",
) -> MetricSpec:
    """Declare a metric whose values are imported, not computed (e.g. a GPT-4o judge's 0-4 ratings from a
    benchmark). It has no scorer; whoever imports its values keeps this spec with them."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"an external metric needs a non-empty name, got {name!r}")
    if name in _SPECS:
        raise InputError(f"external metric name {name!r} is taken by a built-in metric; choose another name")
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise InputError(f"external metric {name}: range bounds must be numbers, got ({lo!r}, {hi!r})") from None
    return MetricSpec(
        name,
        display_name or name,
        (lo, hi),
        bool(higher_is_better),
        convention or f"Imported values in [{lo:g}, {hi:g}], not computed here.",
        paper,
        external=True,
    )


def parse_metric_names(text: str | Iterable[str], media: str | None = "image") -> list[str]:
    """`"all"` -> every built-in metric of `media`; `"cp,pf,clip_i"` (or a list) -> those, validated, duplicates
    dropped. A metric of the other media is refused with an `InputError` that says so (`media=None`: any)."""
    known = metric_names(media)
    items = [p.strip() for p in text.split(",")] if isinstance(text, str) else [str(p).strip() for p in text]
    items = [p for p in items if p]
    if not items:
        raise InputError(f"no metric named; use 'all' or a comma-separated list of {', '.join(known)}")
    if "all" in items:
        return known
    for name in items:
        spec = get_spec(name)
        if media is not None and spec.media != media:
            raise InputError(f"metric {name} judges {spec.media}s, not {media}s; {media} metrics: {', '.join(known)}")
    return list(dict.fromkeys(items))


def get_scorer(name: str, settings: Settings, models: ModelRegistry | None = None, **params: Any) -> Scorer:
    """A scorer for metric `name` with `.spec` and `.score(samples, missing="raise")`. Its model loads on the
    first `score` call, once per `models` registry (None = a private registry). `params` are the metric's
    options (the -Seg metrics: `fill`, `margin`, `segment_reference`); unknown ones raise `InputError`."""
    spec = get_spec(name)
    module, cls = _FACTORIES[name].split(":")
    factory = getattr(importlib.import_module(module), cls)
    if getattr(factory, "COMPOSITE", False):  # computed from other metrics: it reaches them through this module
        params = {**params, "registry": sys.modules[__name__]}
    scorer: Scorer = factory(spec, settings, models, **params)
    return scorer


def _video_scorers(scorers: Mapping[str, Scorer]) -> dict[str, VideoScorer]:
    """The scorers among `scorers` whose metric judges videos (`spec.media`): `VideoScorer`s, which take
    `VideoSample`s and have `VideoNeeds` (what the one return type of `get_scorer` does not say)."""
    return {name: cast("VideoScorer", s) for name, s in scorers.items() if s.spec.media == "video"}


PER_FRAME_LEFT_OUT = ("dbpp_cp", "dbpp_pf")
"""Image metrics that "all" does not apply to the frames of a video: one judge request per frame and criterion."""


def metrics_for(
    samples: Sequence[Any], settings: Settings | None = None, *, video: bool | None = None
) -> list[MetricSpec]:
    """The built-in metrics that apply to `samples`: every image metric (applied per frame to a video output, except
    the DreamBench++ judge, `PER_FRAME_LEFT_OUT`), plus the video metrics when some sample's output is a video (or
    when `video` says so). With `settings`, a judge that cannot be asked (OpenAI's API without
    `MASC_JUDGE_API_KEY`: NaturalScore, and the DreamBench++ judge in `api` mode) is left out, with the metrics
    computed from it: "all" never fails on a paid API that is not configured; naming such a metric gives the error
    that says what to set. A metric whose components are not all in the registry is left out too."""
    video = any(isinstance(s, Sample) and s.is_video for s in samples) or bool(video)
    specs = list_metrics(None if video else "image")
    if video:
        specs = [spec for spec in specs if spec.name not in PER_FRAME_LEFT_OUT]
    left_out = _unaskable(settings) if settings is not None else set()
    for name, parts in _components().items():
        if any(part not in _SPECS or part in left_out for part in parts):
            left_out.add(name)
    return [spec for spec in specs if spec.name not in left_out]


def _components() -> dict[str, tuple[str, ...]]:
    """Metrics computed from other metrics -> the metrics they need (any domain)."""
    from .video.opens2v_total import COMPONENT_METRICS

    return {"opens2v_total": COMPONENT_METRICS}


def _unaskable(settings: Settings) -> set[str]:
    """The judge metrics that `settings` cannot ask (no key for OpenAI's API)."""
    from ..errors import ModelUnavailableError
    from .judges.client import JudgeConfig
    from .judges.dbpp import judge_available

    out = set()
    try:
        JudgeConfig.from_settings(settings)
    except ModelUnavailableError:
        out.add("naturalscore")
    if not judge_available(settings):
        out.update(("dbpp_cp", "dbpp_pf"))
    return out


def resolve_metric_names(
    names: str | Iterable[str], samples: Sequence[Any], settings: Settings | None = None, *, video: bool | None = None
) -> list[str]:
    """`"all"` -> the names of `metrics_for(samples, settings, video=video)`; otherwise the given names (of either
    media), validated."""
    items = [p.strip() for p in names.split(",")] if isinstance(names, str) else [str(p).strip() for p in names]
    if "all" in items:
        return [spec.name for spec in metrics_for(samples, settings, video=video)]
    return parse_metric_names(items, media=None)


def score_metrics(
    samples: Sequence[Sample],
    names: str | Iterable[str],
    settings: Settings,
    models: ModelRegistry | None = None,
    *,
    missing: str = "raise",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    chunk_size: int = 256,
) -> dict[str, list[MetricValue]]:
    """Every requested metric for every sample, images and videos alike: name -> one `MetricValue` per sample, in
    order. `names`: `"all"` (see `metrics_for`) or metric names of either media.

    Image outputs go through in chunks of `chunk_size`; within a chunk each backbone encodes each distinct image
    once (CLIP-I, CLIP-I-Seg, CLIP-T and CLIPScore share the CLIP embedding cache) and CP and PF come from one MaSC
    pass. A video output gets every image metric per sampled frame (`masc_ui.metrics.video.frames`: the frames of a
    video through each backbone together, mean over frames) and the video metrics (GmeScore, NexusScore,
    NaturalScore); a video metric of an image output is NaN (or an `InputError` with `missing="raise"`). Inputs are
    checked for every metric before any model runs (see `Scorer.score`)."""
    from .video.frames import as_video_sample, score_videos
    from .video.sample import check_video_inputs

    samples = list(samples)
    wanted = resolve_metric_names(names, samples, settings)
    if chunk_size < 1:
        raise InputError(f"chunk_size must be >= 1, got {chunk_size}")
    models = models if models is not None else ModelRegistry()
    params = dict(params or {})
    for name in params:
        if name not in wanted:
            raise InputError(f"parameters given for metric {name!r}, which is not among the requested {wanted}")
    scorers = {name: get_scorer(name, settings, models, **params.get(name, {})) for name in wanted}
    on_images = {n: s for n, s in scorers.items() if s.spec.media == "image"}
    on_videos = _video_scorers(scorers)
    is_video = [isinstance(s, Sample) and s.is_video for s in samples]
    videos = [i for i, v in enumerate(is_video) if v]
    images = [i for i, v in enumerate(is_video) if not v]
    if missing == "raise":
        from .base import check_inputs

        for name, scorer in on_images.items():
            check_inputs(name, scorer.needs, samples, missing)
        for name, video_scorer in on_videos.items():
            if images:
                raise InputError(
                    f"{name} judges videos: the output of sample {images[0]} is an image; give a video "
                    "output or leave this metric out"
                )
            check_video_inputs(name, video_scorer.needs, [as_video_sample(samples[i]) for i in videos], missing)
    results: dict[str, list[MetricValue | None]] = {name: [None] * len(samples) for name in wanted}
    for start in range(0, len(images), chunk_size):
        chunk = images[start : start + chunk_size]
        for name, values in score_image_chunk([samples[i] for i in chunk], on_images, missing).items():
            for i, value in zip(chunk, values):
                results[name][i] = value
    if videos:
        video_samples = [samples[i] for i in videos]
        scored = (
            score_videos(video_samples, on_images, settings, score_image_chunk, positions=videos) if on_images else {}
        )
        as_videos = [as_video_sample(s) for s in video_samples]
        video_scorers: dict[str, Any] = dict(on_videos)  # they take VideoSamples
        composite = {n for n, s in video_scorers.items() if getattr(s, "COMPOSITE", False)}
        for name, scorer in video_scorers.items():
            if name not in composite:
                scored[name] = scorer.score(as_videos, missing="nan")
        for name in composite:  # from the values of this call where it has them, the others computed
            scored[name] = video_scorers[name].score(as_videos, missing="nan", known=scored)
        for name, values in scored.items():
            for i, value in zip(videos, values):
                results[name][i] = value
    for name in on_videos:
        for i in images:
            results[name][i] = _nan(name, f"{name} judges videos: the output of sample {i} is an image")
    return {name: [v for v in values if v is not None] for name, values in results.items()}


def score_image_chunk(samples: list[Sample], scorers: Mapping[str, Any], missing: str) -> dict[str, list[MetricValue]]:
    """Image metrics of `scorers` (name -> scorer) on image samples: each scorer once, CP and PF from one pass."""
    results: dict[str, list[MetricValue]] = {}
    for name, scorer in scorers.items():
        if name in results:
            continue
        partners = [n for n in getattr(scorer, "pair_names", ()) if n in scorers and n not in results]
        if len(partners) > 1:
            results.update(scorer.score_pair(samples, partners, missing=missing))
            continue
        results[name] = scorer.score(samples, missing=missing)
    return {name: results[name] for name in scorers}


def _nan(name: str, reason: str) -> MetricValue:
    return MetricValue(metric=name, value=math.nan, reason=reason)


def score_video_metrics(
    samples: Sequence[Any],
    names: str | Iterable[str],
    settings: Settings,
    models: ModelRegistry | None = None,
    *,
    missing: str = "raise",
) -> dict[str, list[MetricValue]]:
    """Every requested video metric (`"all"` = gmescore, nexusscore, naturalscore) for every
    `masc_ui.metrics.video.sample.VideoSample`: name -> one `MetricValue` per sample, in order. GmeScore and
    NexusScore share one GME embedder (and its caches). Inputs are checked for every metric before any model runs."""
    from .video.sample import check_video_inputs

    wanted = parse_metric_names(names, media="video")
    models = models if models is not None else ModelRegistry()
    scorers = _video_scorers({name: get_scorer(name, settings, models) for name in wanted})
    samples = list(samples)
    if missing == "raise":
        for name, scorer in scorers.items():
            check_video_inputs(name, scorer.needs, samples, missing)
    return {name: scorer.score(samples, missing=missing) for name, scorer in scorers.items()}
