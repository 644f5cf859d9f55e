"""Metric presets of the Score tab: named groups of registry metrics a researcher usually reports together.

Defined once here; the Score tab's preset buttons set its metric checkboxes to a preset, the labels come from the
registry's display names. `ALL_PRESET` ("all") is every metric the Score tab offers; `registry_order` puts any
selection of metrics in the registry's order (the order the score table shows them in, whatever the click order):

    >>> preset_label("prompt")
    'prompt (PF, CLIP-T, VQAScore, ITMScore)'
    >>> registry_order(["facesim", "pf", "cp"])
    ['cp', 'pf', 'facesim']
"""

from __future__ import annotations

from ..errors import InputError

PRESETS: dict[str, tuple[str, ...]] = {
    "subject": ("cp", "clip_i", "clip_i_seg", "dino_i", "facesim"),
    "prompt": ("pf", "clip_t", "vqascore", "itmscore"),
    "quality": ("pickscore", "facescore", "artscore"),
}
"""Preset name -> registry metric names: does the output keep the subject, follow the prompt, look good."""
ALL_PRESET = "all"
"""The preset of every metric offered (its button's label: `ALL_LABEL`)."""
ALL_LABEL = "all (every metric offered)"
SHORT_NAMES = {"cp": "CP", "pf": "PF"}
"""Labels shorter than the registry's display names ("MaSC CP") where the preset label names them."""


def preset_metrics(name: str) -> list[str]:
    """The registry metric names of preset `name`; `InputError` listing the presets otherwise."""
    try:
        return list(PRESETS[name])
    except (KeyError, TypeError):
        raise InputError(f"unknown metric preset {name!r}; presets: {', '.join(PRESETS)}") from None


def preset_label(name: str) -> str:
    """`name (Display, Names, ...)` of preset `name`, e.g. `quality (PickScore, FaceScore, ArtScore)`."""
    from ..metrics.registry import get_spec

    shown = [SHORT_NAMES.get(metric, get_spec(metric).display_name) for metric in preset_metrics(name)]
    return f"{name} ({', '.join(shown)})"


def registry_order(names: list[str]) -> list[str]:
    """`names` in the metric registry's declaration order (image metrics, then video metrics); names the registry
    does not hold (imported judges) after them, in the order given. Duplicates are dropped."""
    from ..metrics.registry import list_metrics

    order = {spec.name: i for i, spec in enumerate(list_metrics(None))}
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda n: (n not in order, order.get(n, 0), unique.index(n)))
