"""Schema revision 0009 (crowd studies) on top of the gold answers' revision: a downgrade below it refuses while a
study exists and changes nothing, and goes through on a database without studies (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from storage import migrate
from storage.migrate import head_revision


def _revision_below() -> str:
    """The revision below the studies' one: the gold answers' (found by its title, not its number)."""
    from pathlib import Path

    versions = Path(migrate.__file__).parent / "migrations" / "versions"
    gold = next(p for p in versions.glob("*.py") if '"""gold answers' in p.read_text(encoding="utf-8"))
    return next(
        line.split('"')[1] for line in gold.read_text(encoding="utf-8").splitlines() if line.startswith("revision")
    )


def test_downgrade_below_the_studies_revision_refuses_while_studies_exist(store, add_sample):
    below = _revision_below()
    sample = add_sample()
    study = store.studies.create(
        sample.dataset,
        "pilot",
        tasks_per_participant=3,
        gold_rate=0.0,
        completion_code="C0DE",
        redirect_url=None,
        secret_hash="a" * 64,
    )
    store.studies.join(study.id, "p1", f"study{study.id}:p1")
    with pytest.raises(RuntimeError, match="cannot downgrade below revision 0009: the database holds 2 crowd study"):
        migrate.downgrade(store.engine, below)
    assert migrate.current_revision(store.engine) == head_revision()
    assert [s.name for s in store.studies.studies()] == ["pilot"]


def test_downgrade_and_upgrade_without_studies(store):
    below = _revision_below()
    migrate.downgrade(store.engine, below)
    assert migrate.current_revision(store.engine) == below
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == head_revision()
    assert store.studies.studies() == []
