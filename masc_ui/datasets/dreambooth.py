"""DreamBooth importer (METRICS.md "Benchmark layouts"): subjects, their reference photos, class names and the
prompt templates of `github.com/google/dreambooth`, plus the generated outputs to judge.

```
<root>/dataset/<subject>/*.jpg                 reference photos (root may also be the dataset/ folder itself)
<root>/dataset/prompts_and_classes.txt         "subject_name,class" table and the two prompt lists
<outputs>/<method>/<subject>/<prompt_idx>_<seed>.<ext>   generated images (prompt_idx indexes the subject's list)
```

DreamBooth ships no generated images, so samples need `outputs`; without it the importer only checks the
layout and says so. The images were generated from the templates filled with `unique_token` and the class
(`'a {0} {1} in the jungle'` -> "a sks dog in the jungle"), kept as `info["generation_prompt"]` (and the token as
`info["unique_token"]`). The identifier token means nothing outside the fine-tuned model, so the sample's prompt
is the template filled with the class alone ("a dog in the jungle"): that is what raters read, what the text
encoders of the metrics get, and `info["prompt_subject"]` = the class is what text-prompted segmentation looks
for and what the PF stripper removes. Live subjects (class `cat` or `dog`, the paper's 9) use the "Live Subject
Prompts", every other subject the "Object Prompts". All photos of a subject are the sample's references (CP
averages over them). Key: `<method>/<subject>-<prompt_idx>_<seed>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .entries import Parsed, SampleEntry
from .layout import images_in, output_index, relative

PROMPTS_FILE = "prompts_and_classes.txt"
LIVE_CLASSES = ("cat", "dog")
DEFAULT_TOKEN = "sks"

_TEMPLATE = re.compile(r"""^\s*(['"])(?P<text>.*)\1\.format\(\s*unique_token\s*,\s*class_token\s*\)\s*,?\s*$""")


@dataclass(frozen=True)
class DreamBoothPrompts:
    """What `prompts_and_classes.txt` holds."""

    classes: dict[str, str]
    """subject folder name -> class name."""
    object_prompts: tuple[str, ...]
    """Templates with `{0}` (unique token) and `{1}` (class)."""
    live_prompts: tuple[str, ...]

    def prompts_for(self, subject: str) -> tuple[str, ...]:
        return self.live_prompts if self.classes.get(subject) in LIVE_CLASSES else self.object_prompts


def read_prompts_and_classes(path: Path) -> DreamBoothPrompts:
    """Parse DreamBooth's `prompts_and_classes.txt`. Raises `InputError` when a part is missing."""
    if not path.is_file():
        raise InputError(f"DreamBooth: {path} not found; the dataset folder must hold {PROMPTS_FILE}")
    classes: dict[str, str] = {}
    lists: dict[str, list[str]] = {"object": [], "live": []}
    section = None
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        text = line.strip()
        low = text.lower()
        if low == "classes":
            section = "classes"
        elif low.startswith("object prompts"):
            section = "object"
        elif low.startswith("live subject prompts"):
            section = "live"
        elif section == "classes" and "," in text and low != "subject_name,class":
            name, cls = (t.strip() for t in text.split(",", 1))
            classes[name] = cls
        elif section in lists:
            m = _TEMPLATE.match(text)
            if m is not None:
                lists[section].append(m["text"])
    missing = [
        n
        for n, v in (
            ("the class table", classes),
            ("the object prompts", lists["object"]),
            ("the live subject prompts", lists["live"]),
        )
        if not v
    ]
    if missing:
        raise InputError(f"DreamBooth: {path} lacks {', '.join(missing)}; is it the file from google/dreambooth?")
    return DreamBoothPrompts(classes, tuple(lists["object"]), tuple(lists["live"]))


def parse_dreambooth(root: Path, outputs: Path | None = None, unique_token: str = DEFAULT_TOKEN) -> Parsed:
    """Read the DreamBooth subjects under `root` and the generated images under `outputs` into samples."""
    root = Path(root)
    dataset = root / "dataset" if (root / "dataset" / PROMPTS_FILE).is_file() else root
    prompts = read_prompts_and_classes(dataset / PROMPTS_FILE)
    subjects = {p.name: images_in(p) for p in sorted(dataset.iterdir()) if p.is_dir()}
    parsed = Parsed()
    for name, refs in subjects.items():
        if name not in prompts.classes:
            parsed.skip(relative(dataset / name, root), f"unknown subject: {name!r} has no class in {PROMPTS_FILE}")
        elif not refs:
            parsed.skip(relative(dataset / name, root), "no reference photos in the subject's folder")
    absent = sorted(set(prompts.classes) - set(subjects))
    if absent:
        parsed.notes.append(f"{len(absent)} subject(s) of {PROMPTS_FILE} have no folder here: {', '.join(absent)}")
    if outputs is None:
        parsed.notes.append(
            f"{len(subjects)} subject folder(s) read; no outputs folder given, so no samples: DreamBooth ships no "
            "generated images, pass yours (`--outputs DIR`, laid out <method>/<subject>/<prompt_idx>_<seed>.png)"
        )
        return parsed
    outputs = Path(outputs)
    if not outputs.is_dir():
        raise InputError(
            f"DreamBooth outputs folder {outputs}: not found; lay generated images out as "
            "<outputs>/<method>/<subject>/<prompt_idx>_<seed>.png"
        )
    for method_dir in sorted(p for p in outputs.iterdir() if p.is_dir()):
        for subj_dir in sorted(p for p in method_dir.iterdir() if p.is_dir()):
            _outputs_of(method_dir.name, subj_dir, subjects, prompts, unique_token, outputs, parsed)
    return parsed


def without_token(template: str, cls: str) -> str:
    """A prompt template filled with the class alone, the identifier token left out: 'a {0} {1} in the jungle' ->
    "a dog in the jungle" (spaces collapsed)."""
    return " ".join(template.format("", cls).split())


def _outputs_of(
    method: str,
    subj_dir: Path,
    subjects: dict[str, list[Path]],
    prompts: DreamBoothPrompts,
    token: str,
    outputs: Path,
    parsed: Parsed,
) -> None:
    name = subj_dir.name
    refs = subjects.get(name)
    for img in images_in(subj_dir):
        where = relative(img, outputs)
        if not refs or name not in prompts.classes:
            parsed.skip(where, f"unknown subject: {name!r} has no reference photos or no class in the dataset")
            continue
        index = output_index(img)
        if index is None:
            parsed.skip(where, "unexpected file name: outputs are <prompt_idx>_<seed>.<ext>")
            continue
        prompt_idx, seed = index
        templates = prompts.prompts_for(name)
        if prompt_idx >= len(templates):
            parsed.skip(where, f"unknown prompt index: {prompt_idx} (the subject has {len(templates)} prompts)")
            continue
        cls = prompts.classes[name]
        generation_prompt = templates[prompt_idx].format(token, cls)
        parsed.samples.append(
            SampleEntry(
                where=where,
                key=f"{method}/{name}-{prompt_idx}_{seed if seed is not None else 0}",
                subject=name,
                prompt=without_token(templates[prompt_idx], cls),
                out=img,
                refs=tuple(refs),
                method=method,
                seed=seed,
                category="live" if cls in LIVE_CLASSES else "object",
                info={
                    "class": cls,
                    "prompt_idx": prompt_idx,
                    "prompt_subject": cls,
                    "generation_prompt": generation_prompt,
                    "unique_token": token,
                },
            )
        )
