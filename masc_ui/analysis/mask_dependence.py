"""Does a metric's ranking of methods depend on the masks? From the mask-sensitivity checks stored with the values
(`masc-ui batch --mask-sensitivity`: each sample's value with every mask eroded and dilated by a few pixels), the
groups (methods or categories) are ranked by their mean value with the samples' own masks and by their mean under
each mask variant; a metric whose ranking under some variant differs from the own-mask ranking is flagged, with
the groups whose rank moved.

Conventions: only samples with a check count (so both rankings rest on the same samples); a group's mean under a
variant is over its checked samples whose variant value was computed; ranks are competition ranks (1 = best,
ties share the best rank: `ranking.competition_ranks`) in the metric's direction; a group without a mean has no
rank. Fewer than two ranked groups cannot change order: no flag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .ranking import competition_ranks


@dataclass(frozen=True)
class MaskCheck:
    """One sample's mask-sensitivity check of one metric."""

    group: str | None
    """Its method (or category); None: not grouped, left out."""
    own: float
    """The value with the sample's own masks."""
    variants: Mapping[str, float | None]
    """Variant label (e.g. `eroded 3 px`) -> value; None where it could not be computed."""


@dataclass(frozen=True)
class RankMove:
    group: str
    own_rank: int | None
    variant_rank: int | None


@dataclass(frozen=True)
class MaskDependence:
    """The check of one metric over a dataset's groups."""

    metric: str
    n_samples: int
    """Checked samples that belong to a group."""
    groups: tuple[str, ...]
    own_ranks: tuple[int | None, ...]
    """Rank of each of `groups` by its own-mask mean."""
    moves: Mapping[str, tuple[RankMove, ...]]
    """Variant label -> the groups whose rank differs under it (only variants that change the ranking)."""

    @property
    def depends(self) -> bool:
        """True when some mask variant ranks the groups differently."""
        return bool(self.moves)

    def sentence(self, shown_name: str, by: str = "method") -> str:
        """E.g. `MaSC CP: the ranking of methods changes with the masks eroded 3 px (a 1 -> 2, b 2 -> 1); 12 samples
        checked`, or `MaSC CP: the ranking of methods is the same with every mask variant checked (12 samples)`."""
        if not self.depends:
            return (
                f"{shown_name}: the ranking of {_plural(by)} is the same with every mask variant checked "
                f"({self.n_samples} sample{'s' if self.n_samples != 1 else ''})"
            )
        parts = []
        for label, moved in self.moves.items():
            steps = ", ".join(f"{m.group} {_rank(m.own_rank)} -> {_rank(m.variant_rank)}" for m in moved)
            parts.append(f"{label} ({steps})")
        return (
            f"{shown_name}: the ranking of {_plural(by)} changes with the masks {'; '.join(parts)}; "
            f"{self.n_samples} sample{'s' if self.n_samples != 1 else ''} checked"
        )


def _plural(by: str) -> str:
    return {"category": "categories"}.get(by, f"{by}s")


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def mask_dependence(metric: str, checks: Sequence[MaskCheck], higher_is_better: bool = True) -> MaskDependence | None:
    """The ranking check of `metric` over `checks` (conventions in the module docstring); None without a grouped,
    finite check."""
    usable = [c for c in checks if c.group is not None and math.isfinite(c.own)]
    if not usable:
        return None
    groups = sorted({str(c.group) for c in usable})
    labels = list(dict.fromkeys(label for c in usable for label in c.variants))
    sign = 1.0 if higher_is_better else -1.0

    def ranks(values: Mapping[str, list[float]]) -> list[int | None]:
        means = np.array([np.mean(values[g]) if values.get(g) else np.nan for g in groups])
        return list(competition_ranks(sign * means))

    own: dict[str, list[float]] = {}
    for c in usable:
        own.setdefault(str(c.group), []).append(c.own)
    own_ranks = ranks(own)
    moves: dict[str, tuple[RankMove, ...]] = {}
    if sum(r is not None for r in own_ranks) >= 2:
        for label in labels:
            under: dict[str, list[float]] = {}
            for c in usable:
                v = c.variants.get(label)
                if v is not None and math.isfinite(v):
                    under.setdefault(str(c.group), []).append(float(v))
            variant_ranks = ranks(under)
            moved = tuple(RankMove(g, a, b) for g, a, b in zip(groups, own_ranks, variant_ranks, strict=True) if a != b)
            if moved:
                moves[label] = moved
    return MaskDependence(metric, len(usable), tuple(groups), tuple(own_ranks), moves)
