"""Scoring use cases: build a sample from decoded inputs, score it with every asked metric (each backbone once,
results cached per sample content), explain MaSC with patch maps on the same engine, explain the catalogue metrics,
score files for the CLI. Each call that runs a model checks the acting user's role (admins only).

Images arrive as `InputImage`s decoded once at the edge (upload, CLI file, database blob); every cache below
them (the result cache here, MaSC's encodings, the CLIP/DINO/PickScore embeddings) keys by their `sha256`. The
output may be a video (`InputVideo`, same identity rule): the same calls score it (every image metric per frame,
the video metrics), see `masc_ui.metrics.video.frames`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..caching import LruCache
from ..errors import InputError
from ..imaging import (
    ImageSource,
    InputImage,
    InputVideo,
    VideoLimits,
    as_mask_array,
    open_image,
    open_media,
)
from ..metrics.sample import MetricValue, Sample
from ..metrics.video.frame_masks import FrameMasks
from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .explain import Explanation
from .sample_inputs import check_judgeable, check_mask_sizes, judgeable, output_mask
from .score_files import ScoreFiles
from .text_input import check_text_input
from .users import Accounts

if TYPE_CHECKING:
    from ..metrics.base import MetricSpec
    from ..metrics.masc.engine import MaSC
    from .catalogue_explain import CatalogueExplanations

Progress = Callable[[float, str], None]
"""progress(fraction in [0, 1], what is happening now)."""
RESULT_CACHE_SIZE = 64
"""Score reports kept by the workbench's result cache (one per distinct sample content and metric list)."""
NOT_STORED = "not stored for this sample: press Run to compute it"
"""Reason shown for a metric a stored sample has no value of."""
INPUT_WORDS = {"reference": "a reference image", "prompt": "the prompt", "out_mask": "a mask of the output"}
"""What the user calls each input a metric may lack (`Needs.missing` names; `ref_masks[i]` is handled apart)."""


@dataclass(frozen=True)
class ScoreRow:
    """One metric's line in the score table."""

    metric: str
    display_name: str
    value: float | None
    """None when the metric could not be computed (see `reason`)."""
    reason: str | None
    lo: float
    hi: float
    higher_is_better: bool
    convention: str

    def text(self, x100: bool = False) -> str:
        """The value in significant digits (`numbers.format_value`: 2.49e-09 reads `2.490e-09`, never `0.0000`),
        times 100 with `x100`; `n/a (reason)` without a value."""
        from ..analysis.numbers import format_value  # the analysis package loads its statistics lazily here

        if self.value is None:
            return f"n/a ({self.reason or 'not computed'})"
        return format_value(self.value * 100 if x100 else self.value)

    @property
    def range_text(self) -> str:
        return f"[{_num(self.lo)}, {_num(self.hi)}]"

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


@dataclass
class ScoreReport:
    """Every asked metric for one sample, in registry order, plus the raw values for storage."""

    rows: list[ScoreRow]
    values: dict[str, MetricValue] = field(default_factory=dict)
    seconds: float = 0.0
    """Wall time of the computation that produced the values."""
    cached: bool = False
    """True when the values came from the workbench's result cache (same images, masks, prompt, metrics)."""


def score_row(spec: MetricSpec, value: float | None, reason: str | None) -> ScoreRow:
    """The table row of registry spec `spec` with `value` (None: not computable, `reason` says why)."""
    return ScoreRow(
        spec.name,
        spec.display_name,
        value,
        None if value is not None else (reason or "not computable"),
        float(spec.range[0]),
        float(spec.range[1]),
        bool(spec.higher_is_better),
        spec.convention,
    )


def sample_fingerprint(sample: Sample) -> str:
    """SHA-256 over what a score depends on: the images' content hashes, the masks, prompt and subject."""
    h = hashlib.sha256()
    for img in (*sample.refs, sample.out):
        h.update(img.sha256.encode())
    for m in (*sample.ref_masks, sample.out_mask):
        if isinstance(m, FrameMasks):
            h.update(m.digest().encode())
            continue
        h.update(b"-" if m is None else hashlib.sha256(np.ascontiguousarray(m, dtype=np.float32).tobytes()).digest())
        h.update(b"" if m is None else str(np.shape(m)).encode())
    h.update(repr((sample.prompt, sample.subject, len(sample.ref_masks), sample.ref_labels)).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class FileScores:
    """What `Scoring.score_files` computed for one output (`masc-ui score`)."""

    output: InputImage | InputVideo
    names: list[str]
    """The metrics scored (`all` resolved for this output), in registry order."""
    rows: list[ScoreRow]
    """Each metric's value with its display name, range and direction."""
    values: dict[str, MetricValue]
    records: dict[str, dict[str, Any]]
    """metric -> `{metric, value, reason, extras, provenance}` (NaN as None): the `--json` output with `--metrics`."""
    masc: dict[str, Any] | None = None
    """The default (MaSC CP and PF): `{"cp", "pf", "extras"}` with every diagnostic (NaN as None); None otherwise."""
    warnings: list[str] = field(default_factory=list)
    """What the numbers need said next to them (e.g. a prompt left empty by the subject stripper)."""
    video_summary: str | None = None
    """For a video output, one line: its file, frames, fps, size, and how the image metrics read it."""


class Scoring:
    """Scoring for one process: the settings in force, the shared model registry, the result cache, the logins."""

    def __init__(
        self, settings: Settings, models: ModelRegistry, device: str, accounts: Accounts | None = None
    ) -> None:
        self.settings = settings
        self.models = models
        self.device = device
        self._accounts = accounts if accounts is not None else Accounts()
        self._results: LruCache[ScoreReport] = LruCache(RESULT_CACHE_SIZE)

    # --- inputs ----------------------------------------------------------------------------------------------

    def load_image(self, src: ImageSource | InputImage | None, name: str) -> InputImage:
        """A user image (path, bytes, PIL, array, or an `InputImage` returned as it is) decoded once, refused
        with a clear InputError when unusable."""
        if src is None:
            raise InputError(f"{name} is missing: upload an image (drag and drop, paste or pick a file)")
        return check_judgeable(open_image(src, name=name, max_pixels=self.settings.max_image_pixels))

    def load_output(
        self, src: str | Path | bytes | InputImage | InputVideo | None, name: str = "output"
    ) -> InputImage | InputVideo:
        """The generated output: an image (as `load_image`) or a video (`open_video` within the settings' video
        limits), told apart by the file's first bytes; decoded inputs are returned as they are."""
        if src is None:
            raise InputError(f"{name} is missing: upload the generated image or video")
        return judgeable(
            open_media(
                src,
                name=name,
                max_pixels=self.settings.max_image_pixels,
                limits=VideoLimits.from_settings(self.settings),
            )
        )

    def make_sample(
        self,
        refs: Sequence[ImageSource | InputImage],
        out: str | Path | bytes | InputImage | InputVideo | None,
        prompt: str | None,
        subject: str | None,
        ref_masks: Sequence[np.ndarray | None] = (),
        out_mask: np.ndarray | FrameMasks | None = None,
        *,
        out_mask_frame: int = 0,
        ref_labels: Sequence[str | None] = (),
    ) -> Sample:
        """Validate the pieces of a sample (images by `load_image`, the output by `load_output`, masks by
        `as_mask_array`). For a video output, `out_mask` is a `FrameMasks`, or an array drawn on frame
        `out_mask_frame` and reused on every frame (`FrameMasks.static`). A mask of another size than its image is
        refused (InputError naming both sizes, `check_mask_sizes`): it is never stretched silently."""
        if not refs:
            raise InputError("reference image is missing: upload at least one image of the subject")
        if len(refs) > self.settings.max_references:
            raise InputError(self.too_many_references(len(refs)))
        ref_imgs = tuple(self.load_image(r, f"reference image {i + 1}") for i, r in enumerate(refs))
        out_img = self.load_output(out, "output image" if not isinstance(out, InputVideo) else "output video")
        masks = tuple(
            None if m is None else as_mask_array(m, name=f"mask of reference {i + 1}") for i, m in enumerate(ref_masks)
        )
        check_text_input(prompt, "prompt")
        check_text_input(subject, "subject name", field="subject")
        sample = Sample(
            refs=ref_imgs,
            out=out_img,
            prompt=(prompt or "").strip() or None,
            subject=(subject or "").strip() or None,
            ref_masks=masks,
            out_mask=output_mask(out_img, out_mask, out_mask_frame, "mask of the output"),
            ref_labels=tuple(ref_labels),
        )
        check_mask_sizes(sample)
        return sample

    def too_many_references(self, n: int) -> str:
        """Why a sample of `n` reference images is refused (over `Settings.max_references`)."""
        most = self.settings.max_references
        return (
            f"a sample takes at most {most} reference images (MASC_MAX_REFERENCES) and {n} were given; "
            f"remove {n - most} of the extra references"
        )

    # --- scoring ---------------------------------------------------------------------------------------------

    def metric_specs(self, sample: Sample | None = None, *, video: bool = False) -> list[MetricSpec]:
        """The metrics the Score tab offers: the image metrics, and for a video output (`sample`'s, or `video`) the
        video metrics too; a judge that cannot be asked (no API key) is not offered (`metrics_for`)."""
        from ..metrics.registry import metrics_for

        return metrics_for([] if sample is None else [sample], self.settings, video=video)

    def metric_spec(self, name: str) -> MetricSpec:
        """The registry's declaration of metric `name` (display name, range, direction, convention)."""
        from ..metrics.registry import get_spec

        return get_spec(name)

    def score(
        self, sample: Sample, names: Sequence[str] | None = None, *, user: str | None, progress: Progress | None = None
    ) -> ScoreReport:
        """Every metric in `names` (default: all) for `sample`, each backbone run once; a metric that cannot be
        computed gets a row with value None and the reason. Results are cached per (sample content, metrics).
        Admins only."""
        from ..metrics.registry import get_spec, list_metrics, metrics_for, score_metrics

        self._accounts.require_admin(user, "scoring")
        known = [s.name for s in list_metrics(None if sample.is_video else "image")]
        wanted = [s.name for s in metrics_for([sample], self.settings)] if not names else list(names)
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise InputError(f"unknown metric(s) {unknown}; choose among {known}")
        specs = {n: get_spec(n) for n in wanted}
        key = sample_fingerprint(sample) + ":" + ",".join(wanted)
        hit = self._results.get(key)
        if hit is not None:
            return dataclasses.replace(hit, cached=True)
        if progress:
            progress(0.05, f"scoring {len(wanted)} metric(s) on {self.device}")
        started = time.perf_counter()
        with self.models.reporting(self._load_reporter(progress)):
            results = score_metrics([sample], wanted, self.settings, self.models, missing="nan")
        rows, values = [], {}
        for name in wanted:
            mv = results.get(name, [None])[0]
            if mv is None:
                mv = MetricValue(name, math.nan, "the metric returned no value")
            finite = mv.value is not None and not math.isnan(mv.value)
            lacking = specs[name].needs.missing(sample)
            reason = missing_inputs_text(lacking) if lacking and not finite else mv.reason
            if reason != mv.reason:  # the reason Save stores is the one the table shows, in the user's words
                mv = dataclasses.replace(mv, reason=reason)
            values[name] = mv
            rows.append(score_row(specs[name], float(mv.value) if finite else None, reason))
        report = ScoreReport(rows, values, seconds=time.perf_counter() - started)
        self._results.put(key, report)
        if progress:
            progress(1.0, "done")
        return report

    def _load_reporter(self, progress: Progress | None) -> Callable[[Any], None]:
        """on_load(model registry key): a progress message naming the model and its size (first use only)."""
        from .model_sizes import load_message

        def on_load(key: Any) -> None:
            if progress:
                progress(0.1, load_message(key, self.settings))

        return on_load

    def masc_engine(self) -> MaSC:
        """The MaSC engine the registry's `cp`/`pf` scorers use (same registry key, same encoding caches)."""
        from ..metrics.masc.scorer import MaSCScorer
        from ..metrics.registry import get_scorer

        scorer = get_scorer("cp", self.settings, self.models)
        assert isinstance(scorer, MaSCScorer)
        engine: MaSC = scorer.engine()
        return engine

    def explain(self, sample: Sample, *, user: str | None, progress: Progress | None = None) -> Explanation:
        """MaSC patch maps of `sample` drawn as heat maps and correspondence lines (`explain.Explanation`), on
        the engine Run used: images Run encoded are not encoded again. Admins only."""
        from .explain import explain_sample

        self._accounts.require_admin(user, "explaining scores")
        if sample.is_video:
            raise InputError("the output is a video: choose one of its frames to explain (explain_frame)")
        if progress:
            progress(0.1, "computing MaSC patch maps")
        return explain_sample(self.masc_engine(), sample)

    def explain_frame(
        self, sample: Sample, frame_index: int, *, user: str | None, progress: Progress | None = None
    ) -> Explanation:
        """Explain frame `frame_index` of a video sample (the frame as an image sample with its own output mask,
        `VideoViews.frame_sample`): a frame Run scored is not encoded again. Admins only."""
        from .video import VideoViews

        self._accounts.require_admin(user, "explaining scores")
        return self.explain(VideoViews(self.settings).frame_sample(sample, frame_index), user=user, progress=progress)

    def explain_catalogue(
        self, sample: Sample, names: Sequence[str] | None, *, user: str | None, progress: Progress | None = None
    ) -> CatalogueExplanations:
        """The catalogue explanations (VQAScore, ITMScore, FaceSim, FaceScore; `catalogue_explain`) of the chosen
        metrics among `names` (None: every explainable one), on Run's values (`score` with the same `names` is a
        result-cache hit). InputError when none of `names` is explainable, or the output is a video. Admins only."""
        from .catalogue_explain import catalogue_choice, explain_values

        self._accounts.require_admin(user, "explaining scores")
        chosen, wanted = catalogue_choice(sample, names)
        report = self.score(sample, chosen, user=user, progress=progress)
        if progress:
            progress(0.9, "drawing the explanations")
        return explain_values(sample, report.values, wanted, self.settings, self.models)

    def score_files(self, files: ScoreFiles, *, user: str | None, sample: Sample | None = None) -> FileScores:
        """`masc-ui score`: the output of `files` against its references, for each metric asked (`all`: every
        metric that applies to this output). The default (MaSC CP and PF of an image) comes with every diagnostic
        (`FileScores.masc`). A metric whose inputs are missing raises InputError naming the flag. `sample`: the
        files already opened (`ScoreFiles.open`). Admins only."""
        from ..metrics.masc.factory import build_masc, result_record
        from ..metrics.registry import get_spec, resolve_metric_names, score_metrics
        from ..metrics.value_records import metric_record

        self._accounts.require_admin(user, "scoring")
        sample = sample if sample is not None else files.open(self.settings)
        names = resolve_metric_names(files.metrics, [sample], self.settings)
        masc = None
        if files.masc_only and not sample.is_video:
            masc = result_record(build_masc(self.settings, self.models).score_many([sample])[0])
            values = {
                name: MetricValue(
                    name,
                    math.nan if masc[name] is None else float(masc[name]),
                    masc["extras"].get(f"{name}_reason"),
                    masc["extras"],
                    masc["extras"].get("provenance", {}),
                )
                for name in ("cp", "pf")
            }
        else:
            values = {
                name: found[0] for name, found in score_metrics([sample], names, self.settings, self.models).items()
            }
        rows = [score_row(get_spec(n), None if v.is_nan else float(v.value), v.reason) for n, v in values.items()]
        video = None
        if isinstance(sample.out, InputVideo):
            w, h = sample.out.size
            video = (
                f"video\t{files.out}\t{sample.out.frame_count} frames\t{sample.out.fps:g} fps\t{w}x{h}"
                f"\timage metrics: mean over {self.settings.video_frames} sampled frames"
            )
        return FileScores(
            sample.out,
            list(values),
            rows,
            values,
            {name: metric_record(v) for name, v in values.items()},
            masc,
            empty_prompt_warnings(values, files.prompt),
            video,
        )


def empty_prompt_warnings(values: Mapping[str, MetricValue], prompt: str | None) -> list[str]:
    """A warning when PF was computed on a prompt that the subject stripper left empty (`"a dog"` without `dog`):
    PF then compares the output's background with an empty text, a number that says nothing about the prompt."""
    pf = values.get("pf")
    if pf is None or pf.is_nan or not (prompt or "").strip():
        return []
    text = (pf.extras or {}).get("prompt_text")
    if not isinstance(text, str) or text.strip():
        return []
    return [
        f"pf: the prompt {prompt!r} is empty once the subject's name is removed, so PF compares the output with an "
        "empty text and says nothing about the prompt; give the full prompt the output was generated from (the "
        "subject's name is removed from it), or --stripper none to keep it whole"
    ]


def missing_inputs_text(lacking: Sequence[str]) -> str:
    """A score-table reason for the inputs a metric lacks (`Needs.missing` names), in the Score tab's words,
    e.g. `needs a mask of reference 1 and the prompt: add them, then Run`."""
    words = []
    for name in lacking:
        if name.startswith("ref_masks["):
            words.append(f"a mask of reference {int(name[len('ref_masks[') : -1]) + 1}")
        else:
            words.append(INPUT_WORDS.get(name, name))
    masks = any(n.startswith("ref_masks[") or n == "out_mask" for n in lacking)
    how = "draw them under Masks, then Run" if masks else "add them, then Run"
    return f"needs {' and '.join(words)}: {how}"


def stored_rows(latest: Mapping[str, Any], *, video: bool = False) -> list[ScoreRow]:
    """Score rows of every registered metric (the video metrics too for a `video` output) from stored records
    (`value`, `reason`); metrics never stored show `n/a (not stored for this sample: press Run to compute it)`, and a
    stored reason in the scorers' words (`cp needs ref_masks[0], which sample 0 lacks`: values stored by batch, or
    before Save stored the table's words) is shown in the Score tab's (`user_reason`)."""
    from ..metrics.registry import list_metrics

    rows = []
    for spec in list_metrics(None if video else "image"):
        rec = latest.get(spec.name)
        value = None if rec is None else rec.value
        reason = NOT_STORED if rec is None else user_reason(rec.reason)
        rows.append(score_row(spec, value, reason))
    return rows


_LACKS = re.compile(r"^\w+ needs (?P<names>.+), which sample \d+ lacks$")
"""A scorer's reason for inputs a sample lacks (`metrics.base.check_inputs`)."""


def user_reason(reason: str | None) -> str | None:
    """`reason` in the Score tab's words: a scorer's "X needs ref_masks[0], prompt, which sample 0 lacks" becomes
    `missing_inputs_text` ("needs a mask of reference 1 and the prompt: ..."); any other reason as it is."""
    found = _LACKS.match(reason or "")
    if found is None:
        return reason
    return missing_inputs_text([n.strip() for n in found.group("names").split(",")])


def _num(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:g}"
