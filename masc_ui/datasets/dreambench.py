"""DreamBench++ importer (METRICS.md "Benchmark layouts"). Every part of the tree is optional:

```
captions/<category>/<idx>.txt     line 1: subject; lines 2-10: prompts 0-8
images/<category>/<idx>.jpg       the reference image
samples/<method>/tgt_image/<collection>/<prompt_idx>_<seed>.<ext>   generated outputs
samples/<method>/src_image/<collection>/<prompt_idx>_<seed>.<ext>   reference copy (used when images/ lacks it)
samples/<method>/text/<collection>/<prompt_idx>_<seed>.txt          prompt (used when captions/ lacks it)
data_human_rating/merged_data/group{1,2}/<method>-{cp,pf}.json      {"<collection>-<prompt_idx>": 0..4}
data_gpt_rating/{concept_preservation_full,prompt_following_full}/<method>.json   judge ratings, same shape
```

The collection id is `<category>_<idx>_<subject>` (subject lower-cased, spaces -> `_`; categories `animal`
and `human` are written `live_subject_animal` / `live_subject_human`).

Stored keys: a sample is `<method>/<collection>-<prompt_idx>`; when a prompt has outputs for several seeds,
the lowest seed gets that key (the one the published ratings refer to) and the others
`<method>/<collection>-<prompt_idx>@<seed>`. Human groups become the external raters `dreambench:group1`
and `dreambench:group2` (one rater per group and criterion file). The published GPT-4o ratings
(`data_gpt_rating/*_full/`) become values of the DreamBench++ judge metrics `dbpp_cp` and `dbpp_pf` (0..4 as
published), with the provenance of their making: model `gpt-4o-2024-05-13` and the rubric template the scripts used
(`masc_ui.metrics.judges.dreambench.template_params`: the style rubric for CP of `style` collections), so that they
are the same metric as the values the judge computes here with that model. With a `judge` name they become the
external metrics `<judge>_cp` and `<judge>_pf` instead, as before (provenance `import:<judge>_cp`).
A rating or judge value whose output image is not in this tree makes a *ratings-only* sample (no images)
with the key `<method>/<collection>-<prompt_idx>`, method, subject and category from captions/ when it has
the collection (else from the collection id: subject lower-cased with spaces), and the prompt from
captions/ when present, so that published ratings alone can be imported and judge-vs-human agreement
measured. When the key is already stored, the ratings go to that sample; importing the images later
(samples/ with the same key) attaches them to the same sample. A key whose collection id cannot be read
(not `<category>_<idx>_<subject>`) is skipped as an unknown key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .entries import MetricEntry, Parsed, RatingEntry, SampleEntry
from .layout import find_image, images_in, output_index, relative

LIVE_CATEGORIES = {"animal": "live_subject_animal", "human": "live_subject_human"}
HUMAN_GROUPS = ("group1", "group2")
JUDGE_FOLDERS = {"cp": "concept_preservation_full", "pf": "prompt_following_full"}
RATER_PREFIX = "dreambench:"
N_PROMPTS = 9

_COLLECTION = re.compile(r"^(?P<category>live_subject_animal|live_subject_human|[a-z]+)_(?P<idx>\d+)_(?P<subject>.+)$")
_RATING_KEY = re.compile(r"^(?P<collection>.+)-(?P<prompt_idx>\d+)$")


def collection_id(category: str, idx: str, subject: str) -> str:
    """`("animal", "00", "Kitten")` -> `"live_subject_animal_00_kitten"`."""
    cat = LIVE_CATEGORIES.get(category, category)
    return f"{cat}_{idx}_{'_'.join(subject.strip().lower().split())}"


def split_collection(collection: str) -> tuple[str, str, str] | None:
    """Inverse of `collection_id` as far as it goes: -> (category, idx, subject with spaces), or None."""
    m = _COLLECTION.match(collection)
    if m is None:
        return None
    category = {v: k for k, v in LIVE_CATEGORIES.items()}.get(m["category"], m["category"])
    return category, m["idx"], m["subject"].replace("_", " ")


@dataclass(frozen=True)
class _Collection:
    """One reference image with its caption file."""

    id: str
    category: str
    idx: str
    subject: str
    prompts: tuple[str, ...]
    image: Path | None
    where: str


def parse_dreambench(root: Path, judge: str | None = None) -> Parsed:
    """Read a DreamBench++ tree (any subset of it) into samples, human ratings and judge metric values (`judge`:
    None = `dbpp_cp` / `dbpp_pf`, a name = `<judge>_cp` / `<judge>_pf`; see the module docstring)."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(
            f"DreamBench++ folder {root}: not found; pass the folder holding captions/, images/, "
            "samples/, data_human_rating/ or data_gpt_rating/"
        )
    if judge is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", judge):
        raise InputError(
            f"judge name {judge!r}: use letters, digits, '_', '.', '-' (it becomes the metric names "
            f"<judge>_cp and <judge>_pf)"
        )
    known = [
        d for d in ("captions", "images", "samples", "data_human_rating", "data_gpt_rating") if (root / d).is_dir()
    ]
    if not known:
        raise InputError(
            f"DreamBench++ folder {root}: none of captions/, images/, samples/, data_human_rating/, "
            "data_gpt_rating/ is there; is this the benchmark's root folder?"
        )
    parsed = Parsed()
    collections = _collections(root, parsed)
    _samples(root, collections, parsed)
    _human_ratings(root, parsed)
    _judge_ratings(root, judge, parsed)
    _ratings_only_samples(collections, parsed)
    for part in ("samples", "data_human_rating", "data_gpt_rating"):
        if part not in known:
            parsed.notes.append(f"no {part}/ in {root}: nothing of that part imported")
    return parsed


def _collections(root: Path, parsed: Parsed) -> dict[str, _Collection]:
    out: dict[str, _Collection] = {}
    captions = root / "captions"
    if not captions.is_dir():
        # Images without captions: the subject is unknown, so they cannot become collections on their own.
        if (root / "images").is_dir():
            parsed.notes.append("images/ without captions/: reference images are taken from samples/*/src_image")
        return out
    for cat_dir in sorted(p for p in captions.iterdir() if p.is_dir()):
        for txt in sorted(cat_dir.glob("*.txt")):
            where = relative(txt, root)
            lines = [ln.strip() for ln in txt.read_text(encoding="utf-8-sig").splitlines() if ln.strip()]
            if not lines:
                parsed.skip(where, "empty caption file: line 1 must be the subject, then the prompts")
                continue
            subject, prompts = lines[0], tuple(lines[1:])
            if len(prompts) != N_PROMPTS:
                parsed.notes.append(f"{where}: {len(prompts)} prompts instead of {N_PROMPTS}")
            cid = collection_id(cat_dir.name, txt.stem, subject)
            image = find_image(root / "images" / cat_dir.name / txt.stem)
            out[cid] = _Collection(cid, cat_dir.name, txt.stem, subject, prompts, image, where)
    return out


def _samples(root: Path, collections: dict[str, _Collection], parsed: Parsed) -> None:
    samples_dir = root / "samples"
    if not samples_dir.is_dir():
        return
    for method_dir in sorted(p for p in samples_dir.iterdir() if p.is_dir()):
        method = method_dir.name
        tgt = method_dir / "tgt_image"
        if not tgt.is_dir():
            parsed.skip(
                relative(method_dir, root),
                "no tgt_image/ folder: a method's outputs live in samples/<method>/tgt_image/<collection>/",
            )
            continue
        for coll_dir in sorted(p for p in tgt.iterdir() if p.is_dir()):
            outputs: dict[int, list[tuple[int | None, Path]]] = {}
            for img in images_in(coll_dir):
                index = output_index(img)
                if index is None:
                    parsed.skip(relative(img, root), "unexpected file name: outputs are <prompt_idx>_<seed>.<ext>")
                    continue
                outputs.setdefault(index[0], []).append((index[1], img))
            for prompt_idx, seeds in sorted(outputs.items()):
                seeds.sort(key=lambda s: (s[0] is not None, s[0] or 0))
                for rank, (seed, img) in enumerate(seeds):
                    entry = _sample(root, method, coll_dir.name, prompt_idx, seed, img, rank, collections)
                    if isinstance(entry, str):
                        parsed.skip(relative(img, root), entry)
                    else:
                        parsed.samples.append(entry)


def _sample(
    root: Path,
    method: str,
    collection: str,
    prompt_idx: int,
    seed: int | None,
    img: Path,
    rank: int,
    collections: dict[str, _Collection],
) -> SampleEntry | str:
    coll = collections.get(collection)
    stem = img.stem
    sample_dir = img.parent.parent.parent
    if coll is not None:
        subject, category = coll.subject, coll.category
    else:
        split = split_collection(collection)
        if split is None:
            return f"unknown collection {collection!r}: not in captions/ and not of the form <category>_<idx>_<subject>"
        category, _, subject = split
    prompt = None
    text_file = sample_dir / "text" / collection / f"{stem}.txt"
    if text_file.is_file():
        prompt = text_file.read_text(encoding="utf-8-sig").strip() or None
    if prompt is None and coll is not None and prompt_idx < len(coll.prompts):
        prompt = coll.prompts[prompt_idx]
    if prompt is None:
        return (
            f"no prompt: neither {relative(text_file, root)} nor prompt {prompt_idx} of the caption file "
            f"of {collection}"
        )
    ref = coll.image if coll is not None and coll.image is not None else None
    if ref is None:
        ref = find_image(sample_dir / "src_image" / collection / stem)
    if ref is None:
        return f"no reference image: neither images/<category>/<idx>.* nor samples/{method}/src_image/{collection}/{stem}.*"
    key = f"{method}/{collection}-{prompt_idx}" + (f"@{seed}" if rank > 0 else "")
    return SampleEntry(
        where=relative(img, root),
        key=key,
        subject=subject,
        prompt=prompt,
        out=img,
        refs=(ref,),
        method=method,
        seed=seed,
        category=category,
        info={"collection": collection, "prompt_idx": prompt_idx},
    )


def _ratings_only_samples(collections: dict[str, _Collection], parsed: Parsed) -> None:
    """A ratings-only `SampleEntry` for every rated key that has no output image in this tree."""
    have = {e.key for e in parsed.samples}
    firsts: dict[str, str] = {}
    for item in [*parsed.ratings, *parsed.metrics]:
        if item.key not in have:
            firsts.setdefault(item.key, item.where)
    for key, where in firsts.items():
        method, rest = key.split("/", 1)
        m = _RATING_KEY.match(rest)
        assert m is not None  # keys were checked when read
        collection, prompt_idx = m["collection"], int(m["prompt_idx"])
        coll = collections.get(collection)
        if coll is not None:
            subject, category = coll.subject, coll.category
            prompt = coll.prompts[prompt_idx] if prompt_idx < len(coll.prompts) else None
        else:
            split = split_collection(collection)
            if split is None:
                continue  # its ratings are reported as unknown keys
            category, _, subject = split
            prompt = None
        parsed.samples.append(
            SampleEntry(
                where=where,
                key=key,
                subject=subject,
                prompt=prompt,
                out=None,
                method=method,
                category=category,
                info={"collection": collection, "prompt_idx": prompt_idx},
            )
        )


def _rating_files(folder: Path, suffix: str) -> list[tuple[str, Path]]:
    """(method, file) for `<method><suffix>` files in `folder`."""
    if not folder.is_dir():
        return []
    return [
        (p.name[: -len(suffix)], p)
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name.endswith(suffix) and len(p.name) > len(suffix)
    ]


def _human_ratings(root: Path, parsed: Parsed) -> None:
    merged = root / "data_human_rating" / "merged_data"
    if (root / "data_human_rating").is_dir() and not merged.is_dir():
        parsed.skip(
            "data_human_rating",
            "no merged_data/ folder: ratings are read from "
            "data_human_rating/merged_data/group{1,2}/<method>-{cp,pf}.json",
        )
        return
    for group in HUMAN_GROUPS:
        for criterion in ("cp", "pf"):
            for method, path in _rating_files(merged / group, f"-{criterion}.json"):
                for where, key, value in _rating_values(root, path, parsed):
                    score = _score(value)
                    if score is None:
                        parsed.skip(where, f"bad score: {value!r} is not an integer 0..4")
                        continue
                    parsed.ratings.append(RatingEntry(where, f"{method}/{key}", RATER_PREFIX + group, criterion, score))


def _judge_ratings(root: Path, judge: str | None, parsed: Parsed) -> None:
    for criterion, folder in JUDGE_FOLDERS.items():
        for method, path in _rating_files(root / "data_gpt_rating" / folder, ".json"):
            for where, key, value in _rating_values(root, path, parsed):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 4:
                    parsed.skip(where, f"bad score: {value!r} is not a number 0..4")
                    continue
                made = {} if judge is not None else _published_judge(criterion, key)
                parsed.metrics.append(
                    MetricEntry(
                        where,
                        f"{method}/{key}",
                        f"{judge or 'dbpp'}_{criterion}",
                        float(value),
                        relative(path, root),
                        rating_range=(0.0, 4.0),
                        **made,
                    )
                )


def _published_judge(criterion: str, key: str) -> dict[str, Any]:
    """`model_id` and `params` of a published GPT-4o rating of `criterion` for the rating key `key`: the scripts'
    model and rubric template (CP of a `style` collection: the style rubric)."""
    from ..metrics.judges.dreambench import PUBLISHED_MODEL, template, template_params

    m = _RATING_KEY.match(key)
    split = split_collection(m["collection"]) if m is not None else None
    rubric = "style" if criterion == "cp" and split is not None and split[0] == "style" else "subject"
    opening = template(criterion, rubric)
    params = {**template_params(opening), "source": "DreamBench++ data_gpt_rating (published)"}
    if criterion == "cp":
        params["rubric"] = rubric
    return {"model_id": PUBLISHED_MODEL, "params": params}


def _rating_values(root: Path, path: Path, parsed: Parsed):
    """(where, "<collection>-<prompt_idx>", value) of one ratings JSON file; a bad file is one problem."""
    where = relative(path, root)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        parsed.skip(where, f"not valid JSON: {exc}")
        return
    if not isinstance(data, dict):
        parsed.skip(where, f'not a JSON object {{"<collection>-<prompt_idx>": score}}, got {type(data).__name__}')
        return
    for key, value in data.items():
        item = f"{where}: key {key!r}"
        if _RATING_KEY.match(key) is None:
            parsed.skip(item, "bad key: expected <collection>-<prompt_idx>")
            continue
        yield item, key, value


def _score(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if float(value).is_integer() and 0 <= value <= 4:
        return int(value)
    return None
