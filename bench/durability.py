"""Kill test of rating durability (used by tests/storage and `bench/crash_ratings.py`; a test harness, not part of
the product: it lives in `bench/`).

Each cycle forks a child process that opens the database, creates its rater, then writes ratings in a
loop and, after each commit returns, reports the rating on a pipe. The parent SIGKILLs the child at a
random moment (0..`max_delay_s` after its first rating is acknowledged), so kills land in the middle of
transactions, commits and fsyncs. Afterwards every acknowledged rating (id, revision, score) must be in the
database — as the current rating or in its history — and SQLite's `PRAGMA integrity_check` must say
`ok`. POSIX only (fork, SIGKILL).
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import sqlalchemy as sa

from storage import schema as t
from storage.engine import create_engine
from storage.store import Store, open_store

CHILD_READY_TIMEOUT_S = 60.0


class Ack(NamedTuple):
    """A rating the child reported after its commit returned."""

    rating_id: int
    revision: int
    score: int


@dataclass(frozen=True)
class KillReport:
    cycles: int
    """Children started and SIGKILLed."""
    acknowledged: int
    """Rating writes the children reported as committed."""
    missing: int
    """Acknowledged writes not found afterwards (must be 0)."""
    integrity: str
    """Result of the final integrity check (`ok`)."""
    integrity_checks: int
    """Integrity checks run along the way (all `ok`, else the run stops with an error)."""
    seconds: float
    """Wall time of the whole run."""


def run_kill_cycles(
    database_url: str | None,
    data_dir: Path,
    *,
    cycles: int,
    seed: int = 0,
    max_delay_s: float = 0.08,
    samples: int = 20,
    check_every: int = 25,
    progress: Callable[[int, int], None] | None = None,
) -> KillReport:
    """Run `cycles` write-and-SIGKILL cycles against the database; see the module docstring.

    Raises AssertionError if an acknowledged rating is missing or an integrity check fails, and
    RuntimeError if a child fails on its own (its error message is included).
    """
    start = time.monotonic()
    rng = random.Random(seed)
    data_dir = Path(data_dir)
    with open_store(database_url, data_dir) as store:
        url = store.engine.url.render_as_string(hide_password=False)
        sample_ids = _make_samples(store, samples)
    acked: list[Ack] = []
    checks = 0
    for cycle in range(cycles):
        acked += _one_cycle(url, data_dir, sample_ids, f"crash-{seed}-{cycle}", rng, max_delay_s)
        if (cycle + 1) % check_every == 0 or cycle + 1 == cycles:
            integrity = _verify(url, data_dir, acked)
            checks += 1
        if progress is not None:
            progress(cycle + 1, len(acked))
    return KillReport(
        cycles=cycles,
        acknowledged=len(acked),
        missing=0,
        integrity=integrity,
        integrity_checks=checks,
        seconds=time.monotonic() - start,
    )


def _make_samples(store: Store, n: int) -> list[int]:
    ids = []
    for i in range(n):
        digest = store.images.add(b"\x89PNG\r\n\x1a\n" + f"kill-test image {i}".encode())
        ids.append(
            store.samples.add(
                "kill-test",
                references=[digest],
                output=digest,
                prompt=f"prompt {i}",
                subject="thing",
                external_key=f"kill-{i}",
            ).id
        )
    return ids


def kill_one_child(
    child: Callable[[int], None],
    rng: random.Random,
    max_delay_s: float,
    *,
    ready_timeout_s: float = CHILD_READY_TIMEOUT_S,
) -> list[bytes]:
    """Fork a child running `child(write_fd)` (it reports "ready", then one line per acknowledged write, and never
    returns: it ends with `os._exit`), SIGKILL it 0..`max_delay_s` after its first acknowledged write, and return
    the complete lines it reported after "ready" (a last line without its newline was not fully reported).
    Raises RuntimeError when the child does not get ready or reports `error ...`."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        os.close(read_fd)
        child(write_fd)
        os._exit(1)
    os.close(write_fd)
    buffer = b""
    try:
        deadline = time.monotonic() + ready_timeout_s
        while buffer.count(b"\n") < 2:  # "ready" and the first acknowledged write
            ready, _, _ = select.select([read_fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(read_fd, 65536) if ready else b""
            if not chunk:
                raise RuntimeError(f"kill-test child did not get ready: {buffer.decode(errors='replace')}")
            buffer += chunk
        time.sleep(rng.uniform(0.0, max_delay_s))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    while chunk := os.read(read_fd, 65536):
        buffer += chunk
    os.close(read_fd)
    lines = buffer.split(b"\n")[:-1]
    for line in lines:
        if line.startswith(b"error"):
            raise RuntimeError(f"kill-test child failed: {line.decode(errors='replace')}")
    return [line for line in lines if line != b"ready"]


def _one_cycle(
    url: str, data_dir: Path, sample_ids: list[int], rater: str, rng: random.Random, max_delay_s: float
) -> list[Ack]:
    child_seed = rng.randrange(2**31)
    lines = kill_one_child(lambda fd: _child(url, data_dir, sample_ids, rater, fd, child_seed), rng, max_delay_s)
    return [Ack(*map(int, line.split())) for line in lines]


def _child(url: str, data_dir: Path, sample_ids: list[int], rater: str, fd: int, seed: int) -> None:
    code = 0
    try:
        store = Store(create_engine(url), data_dir)
        store.ratings.ensure_rater(rater)
        os.write(fd, b"ready\n")
        rng = random.Random(seed)
        for i in range(10**9):
            sample = sample_ids[i % len(sample_ids)]
            criterion = t.CRITERIA[(i // len(sample_ids)) % len(t.CRITERIA)]
            rating = store.ratings.rate(
                rater,
                sample,
                criterion,
                rng.randint(t.SCORE_MIN, t.SCORE_MAX),
                seconds_spent=rng.uniform(1, 60),
                presentation_order=i + 1,
            )
            os.write(fd, f"{rating.id} {rating.revision} {rating.score}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        os.write(fd, f"error {type(exc).__name__}: {exc}\n".encode())
        code = 1
    finally:
        os._exit(code)


def _verify(url: str, data_dir: Path, acked: list[Ack]) -> str:
    with Store(create_engine(url), data_dir) as store:
        integrity = store.integrity_check()
        assert integrity == "ok", f"integrity check failed after SIGKILLs: {integrity}"

        def stored(s: sa.orm.Session) -> set[tuple[int, int, int | None]]:
            rows = {(r.id, r.revision, r.score) for r in s.scalars(sa.select(t.Rating))}
            rows |= {(h.rating_id, h.revision, h.score) for h in s.scalars(sa.select(t.RatingHistory))}
            return rows

        present = store.tx.read(stored)
    missing = [a for a in acked if tuple(a) not in present]
    assert not missing, f"{len(missing)} acknowledged rating writes are missing, e.g. {missing[:3]}"
    return integrity
