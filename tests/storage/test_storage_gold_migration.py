"""Schema revision 0008 (gold answers) on top of 0007 (mask proposals), from a database at 0008: a downgrade below 0008 refuses while gold
answers exist and changes nothing, and goes through once they are removed (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from storage import migrate


def test_downgrade_below_0008_refuses_while_gold_answers_exist(store, add_sample):
    sample = add_sample()
    migrate.downgrade(store.engine, "0008")  # the revisions above 0008 hold nothing yet
    store.gold.mark(sample.id, "cp", 3, 4)
    with pytest.raises(RuntimeError, match="cannot downgrade below revision 0008: the database holds 1 gold answers"):
        migrate.downgrade(store.engine, "0007")
    assert migrate.current_revision(store.engine) == "0008"
    assert [g.sample_id for g in store.gold.answers()] == [sample.id]
    with store.engine.begin() as conn:  # by SQL: today's repositories also clear revision 0010's practice rounds
        conn.exec_driver_sql("DELETE FROM gold_answers")
    migrate.downgrade(store.engine, "0007")
    assert migrate.current_revision(store.engine) == "0007"
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == migrate.head_revision()
