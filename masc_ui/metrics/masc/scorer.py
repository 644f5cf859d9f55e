"""MaSC's CP and PF behind the registry's scorer interface: one `MaSC.score_many` pass gives both.

The engine (`masc_ui.metrics.masc.engine.MaSC`) is built from the settings (`siglip_model` or the profile's,
`naflex_max_patches`, `fg_threshold`, `stripper`, device, dtype) and held in the `ModelRegistry`, so every
scorer of a process shares one engine and its encoding caches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...models.auto_profile import effective_model_ids, ensure_demo_checkpoints
from ...models.loaded_models import ModelRegistry
from ...models.loading import pick_device, pick_dtype
from ...settings import Settings
from ..base import MetricSpec, Needs, check_inputs, check_params, nan_value
from ..sample import MetricValue, Sample
from ..value_records import json_safe

if TYPE_CHECKING:
    from .engine import MaSC

PAIR = ("cp", "pf")
_OWN_EXTRAS = {
    "cp": ("cp_per_ref", "cp_n_ref_fg", "cp_n_ref_total", "cp_fg_frac_ref"),
    "pf": ("prompt_text", "prompt_stripped", "stripper", "stripper_model", "pf_n_fg", "pf_n_total", "pf_n_bg_pooled"),
}


class MaSCScorer:
    """Scorer of `cp` or `pf`; `score_pair(samples, ["cp", "pf"])` scores both from one engine pass."""

    pair_names = PAIR

    def __init__(
        self, spec: MetricSpec, settings: Settings, models: ModelRegistry | None = None, **params: Any
    ) -> None:
        check_params(spec.name, params, [])
        self.spec = spec
        self.settings = settings
        self.models = models if models is not None else ModelRegistry()
        self.params: dict[str, Any] = {}

    @property
    def needs(self) -> Needs:
        return self.spec.needs

    def engine(self) -> MaSC:
        """The process-wide MaSC engine for these settings (built on first use)."""
        from .engine import MaSC

        s = self.settings
        ensure_demo_checkpoints(s, ("siglip",), self.models)
        model_id = effective_model_ids(s, self.models).siglip
        device = pick_device(s.device)
        dtype = pick_dtype(s.dtype, device)
        key = ("masc-engine", model_id, device, str(dtype), s.naflex_max_patches, s.fg_threshold, s.stripper)
        return self.models.get(
            key,
            lambda: MaSC(
                model_id=model_id,
                device=device,
                dtype=dtype,
                naflex_max_patches=s.naflex_max_patches,
                fg_threshold=s.fg_threshold,
                stripper=s.stripper,
                models=self.models,
            ),
        )

    def provenance(self) -> dict[str, Any]:
        provenance: dict[str, Any] = json_safe(self.engine().provenance)
        return provenance

    def score(self, samples: Sequence[Sample], *, missing: str = "raise") -> list[MetricValue]:
        return self.score_pair(samples, [self.spec.name], missing=missing)[self.spec.name]

    def score_pair(
        self, samples: Sequence[Sample], names: Sequence[str], *, missing: str = "raise"
    ) -> dict[str, list[MetricValue]]:
        """name -> one `MetricValue` per sample for each of `names` (a subset of cp, pf), from one engine pass
        over the samples that at least one of them can score."""
        from ..registry import get_spec

        samples = list(samples)
        checks = {name: check_inputs(name, get_spec(name).needs, samples, missing) for name in names}
        if not samples:
            return {name: [] for name in names}
        todo = sorted(set().union(*(c.ok for c in checks.values())))
        engine = self.engine()
        provenance = self.provenance()
        results = dict(zip(todo, engine.score_many([samples[i] for i in todo]))) if todo else {}
        scored: dict[str, list[MetricValue]] = {}
        for name in names:
            values = []
            for i in range(len(samples)):
                if i in checks[name].reasons or i not in results:
                    values.append(nan_value(name, checks[name].reasons.get(i, ""), provenance))
                    continue
                r = results[i]
                value = float(getattr(r, name))
                extras = {k: r.extras[k] for k in _OWN_EXTRAS[name] if k in r.extras}
                reason = r.extras.get(f"{name}_reason") if math.isnan(value) else None
                values.append(
                    MetricValue(metric=name, value=value, reason=reason, extras=extras, provenance=provenance)
                )
            scored[name] = values
        return scored
