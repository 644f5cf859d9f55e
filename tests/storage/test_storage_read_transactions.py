"""Read transactions (`storage.transactions.Transactions.read`): one snapshot that cannot write; on PostgreSQL they
end with COMMIT so that psycopg keeps the statements it prepared (a ROLLBACK makes it forget them all)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from storage import schema as t


def test_a_statement_read_again_and_again_stays_prepared_on_postgresql(store, add_sample, backend):
    if backend != "postgres":
        pytest.skip("prepared statements are psycopg's (PostgreSQL)")
    sample = add_sample()
    query = sa.select(t.Sample.id, t.Sample.prompt).where(t.Sample.id == sa.bindparam("sample_id"))
    for _ in range(40):  # psycopg prepares a statement on its 6th run on a connection; the pool holds a few
        assert store.tx.read(lambda s: s.execute(query, {"sample_id": sample.id}).one()) == (sample.id, sample.prompt)

    def prepared_here(s):
        return s.execute(sa.text("SELECT statement FROM pg_prepared_statements")).scalars().all()

    statements = store.tx.read(prepared_here)
    assert any("FROM samples" in text and "prompt" in text for text in statements), statements


def test_a_read_cannot_write(store, add_sample, backend):
    sample = add_sample()

    def rename(s):
        s.execute(sa.update(t.Sample).where(t.Sample.id == sample.id).values(prompt="changed"))
        return True

    if backend == "postgres":
        with pytest.raises(DBAPIError, match="read-only transaction"):
            store.tx.read(rename)
    else:
        assert store.tx.read(rename)  # SQLite rolls the read back
    assert store.samples.get(sample.id).prompt == sample.prompt
