"""Metric presets of the Score tab: named groups of registry metrics a researcher usually reports together.

Defined once here; the Score tab's preset buttons set its metric checkboxes to a preset, the labels come from the
registry's display names. Two presets are the tables of a benchmark paper: the DreamBench++ table (DINO-I, CLIP-I,
CLIP-T and its judge's CP and PF) and the OpenS2V-Eval table (its seven scores and their weighted total). A preset
ticks the members the Score tab offers for the sample on screen (`offered_preset`: video metrics while a video is
loaded, a judge when it can be asked) and says which it left out and why. `ALL_PRESET` ("all") is every metric
offered; `registry_order` puts any selection of metrics in the registry's order (the order the score table shows
them in, whatever the click order):

    >>> preset_label("prompt")
    'prompt (PF, CLIP-T, VQAScore, ITMScore)'
    >>> preset_label("opens2v")
    'OpenS2V table (Aesthetic, Motion, FaceSim, GmeScore, NexusScore, NaturalScore, OpenS2V Total)'
    >>> registry_order(["facesim", "pf", "cp"])
    ['cp', 'pf', 'facesim']
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError

PRESETS: dict[str, tuple[str, ...]] = {
    "subject": ("cp", "clip_i", "clip_i_seg", "dino_i", "facesim"),
    "prompt": ("pf", "clip_t", "vqascore", "itmscore"),
    "quality": ("pickscore", "facescore", "artscore"),
    "dreambench": ("dino_i", "clip_i", "clip_t", "dbpp_cp", "dbpp_pf"),
    "opens2v": ("aesthetic", "motion", "facesim", "gmescore", "nexusscore", "naturalscore", "opens2v_total"),
}
"""Preset name -> registry metric names: does the output keep the subject, follow the prompt, look good; the
columns of DreamBench++'s table and of OpenS2V-Eval's (FaceSim-Cur is `facesim`)."""
TITLES = {"dreambench": "DreamBench++ table", "opens2v": "OpenS2V table"}
"""The words a preset's button shows when they are not its name."""
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
    return f"{TITLES.get(name, name)} ({', '.join(shown)})"


def offered_preset(name: str, offered: Sequence[str], *, video: bool = False) -> tuple[list[str], str]:
    """(the members of preset `name` among the metric names `offered`, in the preset's order; a sentence naming the
    members left out and why, empty when none is). Without an output video (`video` False) a video metric is left
    out for that; any other member left out is not offered with these settings (a judge that cannot be asked, or a
    score computed from one)."""
    from ..metrics.registry import get_spec

    members = preset_metrics(name)
    chosen = [m for m in members if m in offered]
    missing = [get_spec(m) for m in members if m not in offered]
    videos = [spec.display_name for spec in missing if spec.media == "video" and not video]
    others = [spec.display_name for spec in missing if spec.display_name not in videos]
    reasons = []
    if videos:
        reasons.append(f"{', '.join(videos)} score videos only: load an output video to add {_them(videos)}")
    if others:
        reasons.append(
            f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} not offered with these settings "
            "(each needs a judge that can be asked: MASC_JUDGE_API_KEY, or MASC_DBPP_JUDGE=local for DreamBench++'s)"
        )
    if not reasons:
        return chosen, ""
    return chosen, f"{TITLES.get(name, name)}: " + "; ".join(reasons) + "."


def _them(names: Sequence[str]) -> str:
    return "it" if len(names) == 1 else "them"


def registry_order(names: list[str]) -> list[str]:
    """`names` in the metric registry's declaration order (image metrics, then video metrics); names the registry
    does not hold (imported judges) after them, in the order given. Duplicates are dropped."""
    from ..metrics.registry import list_metrics

    order = {spec.name: i for i, spec in enumerate(list_metrics(None))}
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda n: (n not in order, order.get(n, 0), unique.index(n)))
