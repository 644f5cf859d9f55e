"""ImagenHub human-rating TSVs (METRICS.md "Benchmark layouts"): one file per task and rater,

```
<root>/<task>/<task>_rater<N>.tsv      header: uid <model 1> <model 2> ...; cells "[SC, PQ]", values in {0, 0.5, 1}
```

(`root` may also be the folder above, holding `human_ratings/`). SC = semantic consistency, PQ = perceptual
quality; ImagenHub's overall score is O = sqrt(SC * PQ). A bad cell is reported by file, line and column and
left out; the rest of the file is read.

`read_imagenhub` reads the TSVs into plain tables (no storage). `parse_imagenhub` is the importer
(`masc-ui import imagenhub PATH`): one dataset per task, `<dataset>-<task>` (default `imagenhub-<task>`), so
that `masc-ui agreement --dataset imagenhub-<task> --by method` gives the per-model numbers of ImagenHub's
notebook (the same model name, e.g. DreamBooth, occurs in several tasks). In each: one ratings-only sample
(no images, no prompt) per model and uid, key `<model>/<uid>`, method = model, subject = uid (the TSVs name
no subjects; a uid is the same prompt and subject for every model), category = task; the raters are the
external raters `imagenhub:rater1`, `imagenhub:rater2`, ... with criteria `sc` and `pq`, stored on the
0-4 scale as cell value x 4 (0 -> 0, 0.5 -> 2, 1 -> 4; see `storage.IMPORTED_CRITERIA`). O is not stored:
`masc_ui.analysis.imagenhub` derives it from the stored SC and PQ.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .entries import Parsed, Problem, RatingEntry, SampleEntry
from .layout import relative

VALUES = (0.0, 0.5, 1.0)
"""The allowed SC and PQ values."""
STORED_SCALE = 4
"""A cell value times this is the stored 0-4 rating."""
RATER_PREFIX = "imagenhub:"
_RATER_FILE = re.compile(r"^(?P<task>.+)_rater(?P<rater>\d+)\.tsv$")


@dataclass
class ImagenHubTask:
    """The ratings of one task: `cells[rater][model][uid] = (SC, PQ)`."""

    name: str
    raters: list[str] = field(default_factory=list)
    """`rater1`, `rater2`, ... in file order."""
    models: list[str] = field(default_factory=list)
    """Model columns, in the first file's order."""
    uids: list[str] = field(default_factory=list)
    """Sample ids (e.g. `sample_0.jpg`), in first-seen order."""
    cells: dict[str, dict[str, dict[str, tuple[float, float]]]] = field(default_factory=dict)
    where: dict[str, dict[str, str]] = field(default_factory=dict)
    """`where[rater][uid]`: `"<task>/<task>_rater<N>.tsv:<line>"`, the row a rater's cells of `uid` are on."""


@dataclass
class ImagenHubRatings:
    tasks: dict[str, ImagenHubTask] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def read_imagenhub(root: Path) -> ImagenHubRatings:
    """Read every `<task>/<task>_rater<N>.tsv` under `root` (or `root/human_ratings`)."""
    root = Path(root)
    if (root / "human_ratings").is_dir():
        root = root / "human_ratings"
    if not root.is_dir():
        raise InputError(
            f"ImagenHub ratings folder {root}: not found; pass the folder holding <task>/<task>_rater<N>.tsv"
        )
    files = sorted(p for p in root.glob("*/*.tsv") if _RATER_FILE.match(p.name))
    if not files:
        raise InputError(f"ImagenHub ratings folder {root}: no <task>/<task>_rater<N>.tsv files found")
    out = ImagenHubRatings()
    for path in sorted(files, key=lambda p: (p.parent.name, int(_RATER_FILE.match(p.name)["rater"]))):
        task = out.tasks.setdefault(path.parent.name, ImagenHubTask(path.parent.name))
        _read_file(path, f"rater{_RATER_FILE.match(path.name)['rater']}", task, relative(path, root), out.problems)
    return out


def parse_cell(text: str) -> tuple[float, float]:
    """`"[0.5, 1]"` -> (0.5, 1.0). Raises ValueError (with the reason) for anything else."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"not a [SC, PQ] pair: {text!r}") from None
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"not a [SC, PQ] pair: {text!r}")
    pair = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) not in VALUES:
            raise ValueError(f"value {v!r} in {text!r} is not one of 0, 0.5, 1")
        pair.append(float(v))
    return pair[0], pair[1]


def _read_file(path: Path, rater: str, task: ImagenHubTask, where: str, problems: list[Problem]) -> None:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if not header or header[0].strip() != "uid" or len(header) < 2:
            problems.append(Problem(f"{where}:1", "bad header: expected 'uid' then one column per model"))
            return
        models = [h.strip() for h in header[1:]]
        task.raters.append(rater)
        for m in models:
            if m not in task.models:
                task.models.append(m)
        cells = task.cells.setdefault(rater, {m: {} for m in models})
        for row in reader:
            lineno = reader.line_num
            if not row or not any(c.strip() for c in row):
                continue
            uid = row[0].strip()
            if len(row) != len(header):
                problems.append(
                    Problem(f"{where}:{lineno}", f"wrong cell count: {len(row)} cells for {len(header)} columns")
                )
                continue
            if uid not in task.uids:
                task.uids.append(uid)
            task.where.setdefault(rater, {})[uid] = f"{where}:{lineno}"
            for model, text in zip(models, row[1:]):
                try:
                    cells[model][uid] = parse_cell(text.strip())
                except ValueError as exc:
                    problems.append(Problem(f"{where}:{lineno} column {model}", f"bad cell: {exc}"))


def parse_imagenhub(root: Path) -> Parsed:
    """The importer: `Parsed` with one part per task (see the module docstring); bad cells and rows are its
    problems (file:line column), skipped."""
    ratings = read_imagenhub(root)
    parsed = Parsed(problems=list(ratings.problems))
    for name, task in ratings.tasks.items():
        part = Parsed()
        for model in task.models:
            for uid in task.uids:
                rated = [r for r in task.raters if uid in task.cells.get(r, {}).get(model, {})]
                if not rated:
                    continue
                key = f"{model}/{uid}"
                part.samples.append(
                    SampleEntry(
                        where=task.where[rated[0]][uid],
                        key=key,
                        subject=uid,
                        prompt=None,
                        out=None,
                        method=model,
                        category=name,
                        info={"task": name, "uid": uid},
                    )
                )
                for rater in rated:
                    sc, pq = task.cells[rater][model][uid]
                    where = f"{task.where[rater][uid]} column {model}"
                    part.ratings += [
                        RatingEntry(where, key, RATER_PREFIX + rater, "sc", round(sc * STORED_SCALE)),
                        RatingEntry(where, key, RATER_PREFIX + rater, "pq", round(pq * STORED_SCALE)),
                    ]
        parsed.parts[name] = part
    return parsed
