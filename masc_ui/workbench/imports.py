"""`masc-ui import`: read a benchmark layout (`masc_ui.datasets`) and ingest it into the database, marking the
datasets it fills for rating (raters get their samples as tasks) unless told not to."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..settings import Settings
from .database import Database
from .recorder import Recorder

if TYPE_CHECKING:
    from ..datasets.entries import ImportSummary, Parsed, Problem


def import_formats() -> list[tuple[str, str]]:
    """(name, description) of every import format (`masc-ui import FORMAT`), in the importers' registry order."""
    from ..datasets import list_importers

    return [(i.name, i.description) for i in list_importers()]


class Imports:
    """Importing benchmark layouts into one `Database`; judge values go through the record use case."""

    def __init__(self, database: Database, settings: Settings, recorder: Recorder | None = None) -> None:
        self._database = database
        self._settings = settings
        self._recorder = recorder if recorder is not None else Recorder(database)

    def read(self, fmt: str, path: Path, *, dataset: str | None = None, **options: Any) -> tuple[str, Parsed]:
        """(dataset name, parsed layout) of `path` in import format `fmt`; nothing is written. The dataset
        defaults to the format's own (ImagenHub: `imagenhub`); InputError when the format has none."""
        from ..datasets import get_importer, read_layout

        name = dataset or get_importer(fmt).default_dataset
        if name is None:
            raise InputError(f"import format {fmt!r} needs --dataset NAME (the dataset name in the database)")
        return name, read_layout(fmt, path, **options)

    def ingest(
        self,
        parsed: Parsed,
        *,
        user: str | None,
        dataset: str,
        fmt: str,
        progress: Callable[[int], None] | None = None,
        for_rating: bool | None = None,
    ) -> list[ImportSummary]:
        """Store `parsed` (see `masc_ui.workbench.ingest.ingest_all`); one `ImportSummary` per dataset.

        `for_rating`: True marks every dataset the import fills for rating, False unmarks them, None (the
        default) marks the datasets this import creates and leaves the mark of existing ones as it is (so a
        re-import never undoes an admin's choice). A dataset is created together with its mark (one INSERT), so of
        two imports creating it at once the creator's mark wins. Each summary's notes say what was done.

        InputError, with nothing created or marked, when the layout holds nothing to store, or when nothing of it
        could be stored (every record skipped): the message says what was missing (the importer's notes) and why
        records were skipped."""
        from ..imaging import VideoLimits
        from .ingest import ingest_all

        self._database.accounts.require_admin(user, "importing")
        if not _holds_records(parsed):
            layouts = [parsed, *parsed.parts.values()]
            raise InputError(
                _nothing_imported(
                    dataset,
                    fmt,
                    [n for p in layouts for n in p.notes],
                    [x for p in layouts for x in p.problems],
                    existed=dataset in self._database.datasets(),
                )
            )
        summaries = self._database.run(
            partial(
                ingest_all,
                dataset=dataset,
                importer=fmt,
                parsed=parsed,
                max_pixels=self._settings.max_image_pixels,
                progress=progress,
                video_limits=VideoLimits.from_settings(self._settings),
                recorder=self._recorder,
                for_rating=for_rating is not False,
            )
        )
        marks = {d.name: d.for_rating for d in self._database.samples.datasets()}
        if all(summary.stored_nothing for summary in summaries):
            raise InputError(
                _nothing_imported(
                    dataset,
                    fmt,
                    [n for x in summaries for n in x.notes],
                    [p for x in summaries for p in x.problems],
                    existed=dataset in marks,
                )
            )
        for summary in summaries:
            name = summary.dataset
            if name not in marks:
                continue  # a summary of parts only (`<dataset>-*`), or a dataset that stored nothing
            if for_rating is not None and marks[name] != for_rating:
                self._database.samples.set_for_rating(name, for_rating)
                marks[name] = for_rating
            wanted = marks[name]
            summary.notes.append(
                f"dataset {name!r} is {'marked' if wanted else 'not marked'} for rating"
                + (
                    " (raters get its samples as tasks)"
                    if wanted
                    else " (raters get no tasks from it; `masc-ui db for-rating NAME` marks it)"
                )
            )
        return summaries


def _holds_records(parsed: Parsed) -> bool:
    """True when `parsed` (its parts included) holds a sample, rating, metric value, judgment or gold pair answer to
    store."""
    return any(
        p.samples or p.ratings or p.metrics or p.pairwise or p.pair_gold for p in [parsed, *parsed.parts.values()]
    )


def _nothing_imported(dataset: str, fmt: str, notes: list[str], problems: list[Problem], *, existed: bool) -> str:
    """The message of an import that stored nothing: why records were skipped, what the importer missed
    (its notes), and that nothing was created (`existed`: the dataset was there before)."""
    reasons = Counter(p.reason.split(":")[0] for p in problems).most_common()
    parts = []
    if problems:
        parts.append(
            "every record was skipped, by reason: "
            + "; ".join(f"{r} ({n})" for r, n in reasons)
            + f" (e.g. {'; '.join(str(p) for p in problems[:3])})"
        )
    parts += notes
    why = "; ".join(parts) or "the layout holds no sample, rating or metric value"
    outcome = f"dataset {dataset!r} is unchanged" if existed else "no dataset was created or marked for rating"
    return f"nothing imported into dataset {dataset!r} ({fmt}): {why}. So {outcome}; fix the files and import again."


def sample_count(parsed: Parsed) -> int:
    """How many samples a parsed layout holds, its parts included (for a progress bar)."""
    return len(parsed.samples) + sum(len(p.samples) for p in parsed.parts.values())
