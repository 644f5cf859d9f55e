"""The engine keeps the connections its concurrent users needed (`storage.engine.POOL_SIZE`): a wave of raters
answering at once after another opens no new connection (a new PostgreSQL connection is a server process, and the
statements prepared on the old one are lost)."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from storage import schema as t
from storage.engine import POOL_SIZE

USERS_AT_ONCE = 12
"""More than SQLAlchemy's default pool of 5, at most `POOL_SIZE`."""


def test_waves_of_concurrent_transactions_reuse_the_connections_of_the_first(store, add_sample):
    assert USERS_AT_ONCE <= POOL_SIZE
    add_sample()
    opened = []
    sa.event.listen(store.tx.engine, "connect", lambda *_: opened.append(1))
    for _ in range(3):
        everyone_in = threading.Barrier(USERS_AT_ONCE, timeout=60)

        def read(s):
            found = s.execute(sa.select(sa.func.count()).select_from(t.Sample)).scalar_one()
            everyone_in.wait()  # every thread holds its connection at the same time
            return found

        results = []
        threads = [threading.Thread(target=lambda: results.append(store.tx.read(read))) for _ in range(USERS_AT_ONCE)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [1] * USERS_AT_ONCE
    assert len(opened) <= USERS_AT_ONCE  # the first wave's (some may have been open before it), none after it
