"""Two imports creating one dataset at once: the creator's for-rating mark wins, on SQLite and PostgreSQL.

The interleaving that lost the mark is forced, not hoped for: import B (the creator) pauses after its first sample
until import A (started then, so it finds the dataset already there, unmarked if the mark came later) has stored its
first sample; B then finishes, and A finishes last."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datasets"))
from dataset_trees import write_manifest  # noqa: E402

from masc_ui.settings import Settings  # noqa: E402
from masc_ui.workbench import build_workbench  # noqa: E402


def _notes(summaries) -> list[str]:
    return [n for s in summaries for n in s.notes if "for rating" in n]


def test_the_creators_mark_wins_when_two_imports_create_one_dataset(tmp_path, database_url):
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url)
    manifest = write_manifest(tmp_path / "m", subjects=1, outputs=3)
    creator, other = build_workbench(settings, resolve=False), build_workbench(settings, resolve=False)
    a_started, a_wrote = threading.Event(), threading.Event()
    a_may_finish = threading.Event()
    results: dict[str, list] = {}

    def a_progress(_: int) -> None:
        a_wrote.set()
        a_may_finish.wait()

    def run_a() -> None:
        a_started.set()
        _, parsed = other.imports.read("manifest", manifest, dataset="shared")
        results["a"] = other.imports.ingest(parsed, user=None, dataset="shared", fmt="manifest", progress=a_progress)

    a = threading.Thread(target=run_a)

    def b_progress(_: int) -> None:
        if not a.is_alive() and "a" not in results:
            a.start()
            a_started.wait()
            a_wrote.wait()  # A found the dataset B created, and stored a sample into it

    try:
        _, parsed = creator.imports.read("manifest", manifest, dataset="shared")
        results["b"] = creator.imports.ingest(parsed, user=None, dataset="shared", fmt="manifest", progress=b_progress)
        a_may_finish.set()
        a.join()
        marks = {d.name: d.for_rating for d in creator.database.samples.datasets()}
    finally:
        a_may_finish.set()
        creator.close()
        other.close()
    assert marks == {"shared": True}
    assert results["b"][0].created_dataset and not results["a"][0].created_dataset
    assert (
        _notes(results["b"])
        == _notes(results["a"])
        == ["dataset 'shared' is marked for rating (raters get its samples as tasks)"]
    )
