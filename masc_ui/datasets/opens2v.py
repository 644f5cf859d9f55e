"""OpenS2V-Eval's layout, read without writing anything; `read_opens2v` turns it into the records that
`masc-ui import PATH --format opens2v` stores (`masc_ui.workbench.ingest`).

    <videos folder>/<key>.mp4                 one generated video per manifest key (OpenS2V reads .mp4; .webm,
                                              .mov, .mkv are accepted too)
    <reference-images folder>/<img_paths[i]>  the subject images, paths relative to this folder
    <manifest>.json                           {"<key>": {"img_paths": [...], "class_label": [...],
                                                         "prompt": "...", ...other fields kept}, ...}

`parse_opens2v` returns one `OpenS2VEntry` per usable key, in manifest order, and one `Problem` (`where` =
`<manifest name> [<key>]`) per unusable one: not an object, `img_paths` / `class_label` missing, not lists of
non-empty strings or of different lengths (OpenS2V's script zips them, silently dropping the extra ones), a
reference image missing or outside the images folder, a prompt that is not a string, no video file or several.
Videos with no manifest key are listed in `unmatched_videos` (OpenS2V skips them too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .entries import Parsed, Problem, SampleEntry

VIDEO_SUFFIXES = (".mp4", ".webm", ".mov", ".mkv")


@dataclass(frozen=True)
class OpenS2VEntry:
    """One generated video of the layout with its references."""

    key: str
    """The manifest key = the video's file stem (e.g. `singleobj_1`)."""
    video: Path
    refs: tuple[Path, ...]
    """Reference images (absolute), in `img_paths` order."""
    class_labels: tuple[str, ...]
    """OpenS2V `class_label`, one per reference (e.g. `Cup`)."""
    prompt: str | None
    info: dict = field(default_factory=dict)
    """The manifest's other fields (e.g. `synthesis_flag`), JSON-able."""


@dataclass
class OpenS2VLayout:
    """What `parse_opens2v` read."""

    entries: list[OpenS2VEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unmatched_videos: list[Path] = field(default_factory=list)


def nexus_class_labels(key: str, labels: tuple[str, ...] | list[str]) -> tuple[str | None, ...]:
    """The labels NexusScore detects, by OpenS2V's `get_nexusscore.py` rule on the key: in a key containing `face`,
    `Man` / `Woman` references are skipped (None; FaceSim judges them); in a key containing `human` they are detected
    as `human`; other labels unchanged."""
    out: list[str | None] = []
    for label in labels:
        if label in ("Man", "Woman") and "face" in key:
            out.append(None)
        elif label in ("Man", "Woman") and "human" in key:
            out.append("human")
        else:
            out.append(label)
    return tuple(out)


def parse_opens2v(videos_dir: Path, images_dir: Path, manifest: Path) -> OpenS2VLayout:
    """Read the layout (see the module docstring). Raises `InputError` when a folder or the manifest itself cannot
    be used; problems of single entries are collected, never raised."""
    videos_dir, images_dir, manifest = Path(videos_dir), Path(images_dir), Path(manifest)
    for folder, what in ((videos_dir, "videos folder"), (images_dir, "reference-images folder")):
        if not folder.is_dir():
            raise InputError(f"OpenS2V {what} {folder} does not exist or is not a folder")
    data = _read_manifest(manifest)
    layout = OpenS2VLayout()
    videos: dict[str, list[Path]] = {}
    for path in sorted(videos_dir.iterdir()):
        if path.is_file() and path.suffix.lower() in VIDEO_SUFFIXES:
            videos.setdefault(path.stem, []).append(path)
    root = images_dir.resolve()
    for key, value in data.items():
        where = f"{manifest.name} [{key}]"
        entry, reason = _entry(key, value, videos.get(key, []), root, videos_dir)
        if entry is None:
            layout.problems.append(Problem(where, reason))
        else:
            layout.entries.append(entry)
    layout.unmatched_videos = [p for stem, paths in videos.items() if stem not in data for p in paths]
    return layout


def _read_manifest(manifest: Path) -> dict:
    if not manifest.is_file():
        raise InputError(f"OpenS2V manifest {manifest} does not exist")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"OpenS2V manifest {manifest.name} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"OpenS2V manifest {manifest.name}: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            f"OpenS2V manifest {manifest.name} must hold a JSON object "
            '{"<video stem>": {"img_paths": [...], "class_label": [...]}}, '
            f"got a {type(data).__name__}"
        )
    return data


def _entry(
    key: str, value: object, videos: list[Path], root: Path, videos_dir: Path
) -> tuple[OpenS2VEntry | None, str]:
    if not isinstance(value, dict):
        return None, f"the entry must be an object with img_paths and class_label, got {type(value).__name__}"
    paths, labels, prompt = value.get("img_paths"), value.get("class_label"), value.get("prompt")
    for name, items in (("img_paths", paths), ("class_label", labels)):
        if not isinstance(items, list) or not items:
            return None, f"{name} must be a non-empty list, got {items!r}"
        if not all(isinstance(item, str) and item.strip() for item in items):
            return None, f"{name} must hold non-empty strings, got {items!r}"
    if len(paths) != len(labels):
        return None, f"img_paths has {len(paths)} item(s) but class_label {len(labels)}; give one label per image"
    if prompt is not None and not isinstance(prompt, str):
        return None, f"prompt must be a string, got {type(prompt).__name__}"
    refs = []
    for rel in paths:
        path = (root / rel).resolve()
        if not path.is_relative_to(root):
            return None, f"reference image {rel!r} lies outside the reference-images folder"
        if not path.is_file():
            return None, f"reference image {rel!r} not found in {root}"
        refs.append(path)
    if not videos:
        return None, f"no video {key}.mp4 (or {', '.join(VIDEO_SUFFIXES[1:])}) in {videos_dir}"
    if len(videos) > 1:
        return None, f"several videos for one key: {', '.join(p.name for p in videos)}; keep one"
    info = {k: v for k, v in value.items() if k not in ("img_paths", "class_label", "prompt")}
    return OpenS2VEntry(
        key=key,
        video=videos[0],
        refs=tuple(refs),
        class_labels=tuple(labels),
        prompt=(prompt.strip() or None) if prompt is not None else None,
        info=info,
    ), ""


def read_opens2v(
    path: Path, videos: Path | None = None, images: Path | None = None, method: str | None = None
) -> Parsed:
    """The import records of an OpenS2V layout (`--format opens2v`).

    `path`: the manifest (e.g. `Open-Domain_Eval.json`), or the folder holding exactly one `.json` manifest.
    `images`: where `img_paths` resolve (default: the manifest's folder, i.e. the OpenS2V-Eval root, as OpenS2V's
    `--input_image_folder`). `videos`: the generated videos `<key>.mp4` (default `<manifest folder>/videos`).
    `method`: the model that generated them (default: the videos folder's name).

    One sample per usable manifest key: key `<method>/<key>` (so several models' videos share a dataset), output =
    the video, references = `img_paths`, prompt, subject = the distinct class labels joined with " and ",
    category = the key without its number (`singleobj_1` -> `singleobj`), info = the manifest's other fields plus
    `opens2v_key`, `class_label` and `ref_labels` (NexusScore's labels, `nexus_class_labels`). Unusable keys are
    problems named `<manifest> [<key>]`; videos with no key are listed in a note."""
    manifest = _manifest_of(Path(path))
    images = Path(images) if images is not None else manifest.parent
    if videos is None:
        videos = manifest.parent / "videos"
        if not videos.is_dir():
            raise InputError(
                f"OpenS2V import: no videos folder given and {videos} does not exist; pass --videos DIR "
                "(the generated videos, one <key>.mp4 per manifest key)"
            )
    videos = Path(videos)
    method = (method or videos.resolve().name).strip()
    layout = parse_opens2v(videos, images, manifest)
    parsed = Parsed(problems=list(layout.problems))
    for entry in layout.entries:
        labels = list(dict.fromkeys(label.strip() for label in entry.class_labels))
        parsed.samples.append(
            SampleEntry(
                where=f"{manifest.name} [{entry.key}]",
                key=f"{method}/{entry.key}",
                subject=" and ".join(labels),
                prompt=entry.prompt,
                out=entry.video,
                refs=entry.refs,
                method=method,
                category=entry.key.rstrip("0123456789").rstrip("_") or None,
                info={
                    **entry.info,
                    "opens2v_key": entry.key,
                    "class_label": list(entry.class_labels),
                    "ref_labels": list(nexus_class_labels(entry.key, entry.class_labels)),
                },
            )
        )
    if layout.unmatched_videos:
        names = ", ".join(p.name for p in layout.unmatched_videos[:10])
        more = f" and {len(layout.unmatched_videos) - 10} more" if len(layout.unmatched_videos) > 10 else ""
        parsed.notes.append(
            f"{len(layout.unmatched_videos)} video(s) in {videos} have no key in {manifest.name} and "
            f"were not imported (OpenS2V skips them too): {names}{more}"
        )
    if not layout.entries and not layout.problems:
        parsed.notes.append(f"{manifest.name} holds no entries")
    return parsed


def _manifest_of(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.is_dir():
        raise InputError(
            f"OpenS2V import: {path} does not exist; give the manifest (e.g. Open-Domain_Eval.json) or "
            "the folder holding it"
        )
    found = sorted(p for p in path.glob("*.json") if p.is_file())
    if len(found) != 1:
        listed = ", ".join(p.name for p in found) or "none"
        raise InputError(
            f"OpenS2V import: {path} must hold exactly one .json manifest (found {listed}); give the "
            "manifest file itself as PATH"
        )
    return found[0]
