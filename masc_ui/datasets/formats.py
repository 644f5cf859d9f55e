"""The importers, by name: a dict of small specs (no if/elif chains), `list_importers()` to discover them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .dreambench import parse_dreambench
from .dreambooth import DEFAULT_TOKEN, parse_dreambooth
from .entries import Parsed
from .imagenhub import parse_imagenhub
from .manifest import parse_manifest
from .opens2v import read_opens2v
from .pair_gold_manifest import read_pair_gold
from .pairwise_manifest import read_pairwise


@dataclass(frozen=True)
class ImporterSpec:
    name: str
    description: str
    """One line: what `path` must be."""
    read: Callable[..., Parsed]
    """`read(path, **options) -> Parsed`."""
    options: dict[str, Any]
    """Option name -> default (what the CLI offers as `--<name>`)."""
    default_dataset: str | None = None
    """Dataset name used when none is given (None = the user must name one). For a layout with several
    datasets (`Parsed.parts`) the name is the prefix: `<name>-<part>`."""


IMPORTERS: dict[str, ImporterSpec] = {
    "manifest": ImporterSpec(
        "manifest",
        "a .jsonl or .csv file, one sample per row (ref, ref_mask, out, out_mask, prompt, subject, "
        "method, seed, key, category), paths relative to the file",
        parse_manifest,
        {},
    ),
    "dreambench": ImporterSpec(
        "dreambench",
        "a DreamBench++ folder (captions/, images/, samples/, data_human_rating/, data_gpt_rating/; any subset)",
        parse_dreambench,
        {"judge": None},
    ),
    "dreambooth": ImporterSpec(
        "dreambooth",
        "the google/dreambooth repository (or its dataset/ folder) plus --outputs "
        "<method>/<subject>/<prompt_idx>_<seed>.png",
        parse_dreambooth,
        {"outputs": None, "unique_token": DEFAULT_TOKEN},
    ),
    "imagenhub": ImporterSpec(
        "imagenhub",
        "ImagenHub human ratings: <task>/<task>_rater<N>.tsv (or the folder holding human_ratings/); "
        "one dataset <dataset>-<task> per task, ratings-only samples <model>/<uid>, criteria sc, pq",
        parse_imagenhub,
        {},
        default_dataset="imagenhub",
    ),
    "opens2v": ImporterSpec(
        "opens2v",
        "OpenS2V-Eval: the JSON manifest (or its folder; img_paths relative to it, or --images DIR) and "
        "the generated videos <key>.mp4 in --videos DIR (default <folder>/videos), one model per import "
        "(--method, default the videos folder's name)",
        read_opens2v,
        {"videos": None, "images": None, "method": None},
    ),
    "pairwise": ImporterSpec(
        "pairwise",
        "pairwise human judgments, a .jsonl or .csv file, one per row (left, right: sample keys of the "
        "dataset; criterion cp|pf; winner left|right|tie; rater; optional both_bad, time, seconds)",
        read_pairwise,
        {},
    ),
    "pair-gold": ImporterSpec(
        "pair-gold",
        "gold pairs, a .jsonl or .csv file, one pair per row (left, right: sample keys of the dataset or #id; "
        "gold_cp, gold_pf: the accepted answer a|b|tie, a = left is better; optional kind gold|attention, note)",
        read_pair_gold,
        {},
    ),
}


def list_importers() -> list[ImporterSpec]:
    return list(IMPORTERS.values())


def get_importer(name: str) -> ImporterSpec:
    try:
        return IMPORTERS[name]
    except KeyError:
        raise InputError(f"unknown import format {name!r}; use one of {', '.join(IMPORTERS)}") from None


def read_layout(name: str, path: Path, **options: Any) -> Parsed:
    """Parse `path` with importer `name`; options not given (None) take the importer's defaults."""
    spec = get_importer(name)
    unknown = sorted(k for k, v in options.items() if v is not None and k not in spec.options)
    if unknown:
        raise InputError(
            f"import format {name!r} takes no option(s) {', '.join(unknown)}"
            + (f"; it takes {', '.join(spec.options)}" if spec.options else "")
        )
    given = {k: v for k, v in options.items() if v is not None and k in spec.options}
    try:
        return spec.read(Path(path), **{**{k: v for k, v in spec.options.items() if v is not None}, **given})
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: a {name} file is not UTF-8 text (byte {exc.start} cannot be decoded); save it "
            "as UTF-8 and import again"
        ) from None
    except IsADirectoryError as exc:
        raise InputError(f"{path}: expected a file, found a folder ({exc.filename})") from None
