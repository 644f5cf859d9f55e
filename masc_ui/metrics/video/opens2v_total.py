"""OpenS2V-Eval's Total Score (OpenS2V-Nexus, the v1.0 leaderboard's `merge_result.py`, read, not copied): a
weighted sum of six scores, each clipped and min-max normalised as the leaderboard does.

| component (our metric)      | clip                 | normalised        | Open / Single domain | Human domain |
|-----------------------------|----------------------|-------------------|----------------------|--------------|
| Aesthetics (`aesthetic`)    | [4, 7]               | (x - 4) / 3       | 0.12                 | 0.15         |
| Motion (`motion`)           | abs, then at most 1  | x                 | 0.12                 | 0.15         |
| FaceSim (`facesim`)         | at most 1            | x                 | 0.20                 | 0.25         |
| GmeScore (`gmescore`)       | at most 1            | x                 | 0.12                 | 0.15         |
| NexusScore (`nexusscore`)   | at most 0.05         | x / 0.05          | 0.20                 | -            |
| NaturalScore (`naturalscore`) | rating in [1, 5]   | (rating - 1) / 4  | 0.24                 | 0.30         |

Our NaturalScore is already (mean rating - 1) / 4, so its component is that value clipped to [0, 1].

Two levels:
- `total_score(values, domain)`: the Total of ONE video from its component values (the scorer's value). OpenS2V
  computes FaceSim only for videos with a face reference and NexusScore only for subjects it can detect (a
  NexusScore of 0 it treats as not detected), and averages each component over the videos that have it, which has no
  exact per-video analogue. Our rule: FaceSim and NexusScore (`OPTIONAL`) may be absent (NaN; NexusScore also 0), and
  are then left out with the other weights rescaled to sum to 1; any other component NaN makes the Total NaN, naming
  it.
- `benchmark_total(videos, domain)`: the leaderboard's own aggregation over a set of videos: each component clipped
  per video, averaged over the videos that have it (NexusScore: over those where it is not 0, as the release does;
  a mean of 0 when no video has it, as there), then normalised and weighted. The mean of per-video Totals equals it when every video has
  every component and no NexusScore is 0.

The scorer (`OpenS2VTotalScorer`, param `domain`: `open`, the default, also right for Single-Domain / Single-Object;
or `human`) takes each component's value from the values computed in the same `score_metrics` call when there are
any, and computes the others through the registry. Extras: `components` (name -> raw value, None when NaN),
`normalised`, `weights`, `weights_used`, `left_out`, `domain`, `component_reasons`. Provenance params: the domain,
version, weights, clips and each component scorer's own provenance.

OpenS2V-Eval v1.1 replaced Motion by Motion Smoothness (a Q-Align video-quality model) and Motion Amplitude (the
same computation as our `motion`) with other weights; Motion Smoothness is not implemented here, so neither is the
v1.1 Total.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...imaging import ALL_FRAMES
from ...models.loaded_models import ModelRegistry
from ...settings import Settings
from ..base import MetricSpec, check_params, nan_value
from ..provenance import make_provenance
from ..sample import MetricValue, Sample
from .frames import value_provenance
from .sample import VideoNeeds, VideoSample, check_video_inputs

VERSION = "OpenS2V-Eval v1.0"


@dataclass(frozen=True)
class Component:
    """One weighted score: how a value is clipped and mapped to [0, 1] before weighting."""

    metric: str
    lo: float
    """Lower clip (-inf where the release clips only from above)."""
    hi: float
    """Upper clip."""
    norm_lo: float
    """The normalised value is (clipped - norm_lo) / (norm_hi - norm_lo)."""
    norm_hi: float
    absolute: bool = False
    """Take |value| before clipping (Motion)."""
    when_absent: float = 0.0
    """The leaderboard's normalised value when no video has the component: its mean of 0, in its own units,
    normalised (Aesthetics: (0 - 4) / 3; NaturalScore: a mean rating of 0, (0 - 1) / 4)."""

    def normalise(self, value: float) -> float:
        x = abs(value) if self.absolute else value
        x = min(max(x, self.lo), self.hi)
        return (x - self.norm_lo) / (self.norm_hi - self.norm_lo)


COMPONENTS = {
    "aesthetic": Component("aesthetic", 4.0, 7.0, 4.0, 7.0, when_absent=-4.0 / 3.0),
    "motion": Component("motion", -math.inf, 1.0, 0.0, 1.0, absolute=True),
    "facesim": Component("facesim", -math.inf, 1.0, 0.0, 1.0),
    "gmescore": Component("gmescore", -math.inf, 1.0, 0.0, 1.0),
    "nexusscore": Component("nexusscore", -math.inf, 0.05, 0.0, 0.05),
    "naturalscore": Component("naturalscore", 0.0, 1.0, 0.0, 1.0, when_absent=-0.25),
}
"""Our metric name -> its clip and normalisation (NaturalScore: ours is already (rating - 1) / 4)."""
COMPONENT_METRICS = tuple(COMPONENTS)
WEIGHTS = {
    "open": {
        "aesthetic": 0.12,
        "motion": 0.12,
        "facesim": 0.20,
        "gmescore": 0.12,
        "nexusscore": 0.20,
        "naturalscore": 0.24,
    },
    "human": {"aesthetic": 0.15, "motion": 0.15, "facesim": 0.25, "gmescore": 0.15, "naturalscore": 0.30},
}
"""Domain -> component -> weight (`open`: the release's Open-Domain, Single-Domain and Single-Object)."""
DOMAINS = tuple(WEIGHTS)
EXCLUDE_ZERO = ("nexusscore",)
"""Components whose 0 values the leaderboard leaves out of its mean."""
OPTIONAL = ("facesim", "nexusscore")
"""Components OpenS2V computes for some videos only: a video without them has a Total of the others."""


def _check_domain(domain: str) -> dict[str, float]:
    if domain not in WEIGHTS:
        raise InputError(f"OpenS2V Total domain must be one of {', '.join(DOMAINS)}, got {domain!r}")
    return WEIGHTS[domain]


def total_score(values: Mapping[str, float | None], domain: str = "open") -> tuple[float, str | None, dict[str, Any]]:
    """(Total, reason when NaN, extras) of one video from its component values (`values`: metric name -> raw value;
    None or NaN = not computable). Components the domain does not weigh are ignored; see the module docstring for
    absent ones. Extras: `components` (raw), `normalised`, `weights` (the domain's), `weights_used` (rescaled over the
    components used), `left_out`, `domain`."""
    weights = _check_domain(domain)
    raw: dict[str, float | None] = {}
    normalised: dict[str, float | None] = {}
    for name in weights:
        value = values.get(name)
        ok = value is not None and math.isfinite(float(value))
        raw[name] = float(value) if ok and value is not None else None
        normalised[name] = COMPONENTS[name].normalise(float(value)) if ok and value is not None else None
    left_out = [
        name
        for name in weights
        if name in OPTIONAL and (raw[name] is None or (name in EXCLUDE_ZERO and raw[name] == 0.0))
    ]
    lacking = [name for name in weights if normalised[name] is None and name not in left_out]
    used = {name: weight for name, weight in weights.items() if name not in left_out}
    scale = sum(used.values())
    extras: dict[str, Any] = {
        "components": raw,
        "normalised": normalised,
        "weights": dict(weights),
        "weights_used": {name: weight / scale for name, weight in used.items()},
        "left_out": left_out,
        "domain": domain,
    }
    if lacking:
        return math.nan, f"the OpenS2V Total needs {', '.join(lacking)}, which {_is_or_are(lacking)} NaN", extras
    return sum(weight * (normalised[name] or 0.0) for name, weight in used.items()) / scale, None, extras


def _is_or_are(names: Sequence[str]) -> str:
    return "is" if len(names) == 1 else "are"


def benchmark_total(videos: Sequence[Mapping[str, float | None]], domain: str = "open") -> dict[str, float]:
    """The leaderboard's numbers for a set of videos (each: metric name -> raw value, missing/None/NaN = the video
    lacks it): `total` and each weighted component's normalised mean (see the module docstring)."""
    weights = _check_domain(domain)
    out: dict[str, float] = {}
    for name in weights:
        part = COMPONENTS[name]
        kept = []
        for video in videos:
            value = video.get(name)
            if value is None or not math.isfinite(float(value)):
                continue
            if name in EXCLUDE_ZERO and float(value) == 0.0:
                continue
            x = abs(float(value)) if part.absolute else float(value)
            kept.append(min(max(x, part.lo), part.hi))
        if not kept:
            out[name] = part.when_absent
            continue
        out[name] = (sum(kept) / len(kept) - part.norm_lo) / (part.norm_hi - part.norm_lo)
    out["total"] = sum(weights[name] * out[name] for name in weights)
    return out


def as_sample(video: VideoSample) -> Sample:
    """The `Sample` the registry scores for a `VideoSample` (output = the video; class labels as reference labels)."""
    return Sample(
        refs=video.refs, out=video.video, prompt=video.prompt, subject=video.subject, ref_labels=video.class_labels
    )


class OpenS2VTotalScorer:
    """The OpenS2V Total of each video (see the module docstring). Built by the registry's `get_scorer`, which
    passes itself as `registry` (this module cannot import it)."""

    COMPOSITE = True
    FRAME_RULE = ALL_FRAMES
    """The frames its components read together (each component records its own sampling)."""
    PARAMS = {"domain": "open"}

    def __init__(
        self,
        spec: MetricSpec,
        settings: Settings,
        models: ModelRegistry | None = None,
        *,
        registry: Any,
        **params: Any,
    ) -> None:
        check_params(spec.name, params, list(self.PARAMS))
        self.spec = spec
        self.settings = settings
        self.models = models if models is not None else ModelRegistry()
        self.registry = registry
        self.params = {**self.PARAMS, **params}
        self.weights = _check_domain(self.params["domain"])
        self.components = tuple(self.weights)

    NEEDS = VideoNeeds(prompt=True, reference=True)
    """A subject-to-video sample: GmeScore reads the prompt, FaceSim and NexusScore the references (class labels are
    NexusScore's own need: without them it is left out)."""

    @property
    def needs(self) -> VideoNeeds:
        return self.NEEDS

    def _component_scorers(self) -> dict[str, Any]:
        missing = [name for name in self.components if name not in self.registry.metric_names(None)]
        if missing:
            from ...errors import ModelUnavailableError

            raise ModelUnavailableError(
                f"the OpenS2V Total needs the metric(s) {', '.join(missing)}, which this installation does not have"
            )
        return {name: self.registry.get_scorer(name, self.settings, self.models) for name in self.components}

    def provenance(self) -> dict[str, Any]:
        parts = {name: scorer.provenance() for name, scorer in self._component_scorers().items()}
        return make_provenance(
            model_id="opens2v-total",
            revision=VERSION,
            params={
                **self.params,
                "weights": self.weights,
                "clips": {name: [COMPONENTS[name].lo, COMPONENTS[name].hi] for name in self.components},
                "components": parts,
            },
            device=None,
            dtype=None,
        )

    def score(
        self,
        samples: Sequence[VideoSample],
        *,
        missing: str = "raise",
        known: Mapping[str, Sequence[MetricValue]] | None = None,
    ) -> list[MetricValue]:
        """One Total per video sample, in order. `known`: component name -> one value per sample (in this order)
        already computed; the other components are computed here. `missing` as the other video scorers."""
        samples = list(samples)
        ok, reasons = check_video_inputs(self.spec.name, self.needs, samples, missing)
        if not samples:
            return []
        provenance = self.provenance()

        def own(i: int) -> dict[str, Any]:
            return value_provenance(self, self.settings, provenance, samples[i].video.frame_count)

        values = [nan_value(self.spec.name, reasons.get(i, ""), own(i)) for i in range(len(samples))]
        given = {name: list(vs) for name, vs in (known or {}).items() if name in self.components}
        todo = [name for name in self.components if name not in given]
        computed = (
            self.registry.score_metrics(
                [as_sample(samples[i]) for i in ok], todo, self.settings, self.models, missing="nan"
            )
            if todo and ok
            else {}
        )
        for k, i in enumerate(ok):
            parts = {name: given[name][i] for name in given} | {name: computed[name][k] for name in computed}
            value, reason, extras = total_score({n: v.value for n, v in parts.items()}, self.params["domain"])
            extras["component_reasons"] = {n: v.reason for n, v in parts.items() if v.is_nan}
            values[i] = MetricValue(self.spec.name, value, _with_reasons(reason, parts), extras, own(i))
        return values


def _with_reasons(reason: str | None, parts: Mapping[str, MetricValue]) -> str | None:
    if reason is None:
        return None
    why = [f"{name}: {value.reason}" for name, value in parts.items() if value.is_nan and value.reason]
    return reason + (f" ({'; '.join(why)})" if why else "")
