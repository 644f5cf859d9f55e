"""Rating load on the launched app: 16 simulated raters, plus 1 admin saving scored samples, for 60 s, over HTTP
with the page's protocol (`queue_client.py`: Gradio's queue, or one request per event for the events that skip it),
on SQLite and PostgreSQL.

    python bench/rating_load.py [--seconds 60] [--raters 16] [--think 0] [--postgres-url URL] [--modes per-rater,global]

Raters submit as fast as they can (`--think 0`, the default), or pause a random time after each answer (`--think S`:
exponential with mean S seconds, a random start within the first S seconds, as people answering at their own pace).
Modes, measured side by side in one run:
- `per-rater`: the app as it is (each rater's events one at a time, raters in parallel, the answers posted straight
  to their handler: `rate_tab.ANSWER_QUEUE`);
- `global`: every rating answer of every rater through one slot of Gradio's queue (the single-slot design, as a
  baseline).
A submit's latency is the time until its answer (the next task) is back; the clients do not download the images
(a browser fetches them in parallel). Prints, per backend and mode, the rating submits acknowledged, their
latency (p50 / p95 / max, seconds), the saves done, the CPU per submit of the server (its process's CPU time while
the raters submitted, after their logins, over the submits; the admin's Saves included) and of the simulated
clients (their own process, on the same machine), the server's longest garbage-collector pause, and whether every
acknowledged rating is in the database afterwards (each acknowledged submit is one more sample rated by that
rater), then the global / per-rater ratio of p95. Goal (not a test): p95 <= 0.3 s with 16 raters and 1 saver.
Exits 1 when an acknowledged rating is missing, no submit was made or a client failed. Figures from a busy shared
machine are noisy (the clients' CPU per submit, the same work in every run, shows how fast the machine was):
compare the modes of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import gc
import io
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "examples"
SAMPLES = 600
"""Samples every rater may rate (overlap = number of raters, so nobody runs out within a minute)."""
TOKEN_OUTPUT = 1
"""Where the task's token is among the Rate tab's outputs (`rate_tab.build`: state, token, ...; the page receives
every output, the session state's as null)."""


@dataclass
class Result:
    backend: str
    mode: str
    latencies: list[float] = field(default_factory=list)
    acknowledged: dict[str, int] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)
    saves: int = 0
    save_errors: int = 0
    server_cpu_s: float = 0.0
    """CPU seconds the server's process spent while the raters submitted (after their logins; the saver's Saves
    included)."""
    gc_pause_s: float = 0.0
    """The longest pause of the server process's cyclic garbage collector while the clients ran (every thread
    waits it out)."""
    client_cpu_s: float = 0.0
    """CPU seconds the simulated clients' process spent (on a small machine they compete with the server)."""
    errors: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return all(self.stored.get(r, 0) == n for r, n in self.acknowledged.items())

    def line(self) -> str:
        lat = sorted(self.latencies)
        if not lat:
            return f"{self.backend:10s} {self.mode:9s} no submits ({'; '.join(self.errors[:3])})"
        p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
        return (
            f"{self.backend:10s} {self.mode:9s} submits {len(lat):5d}  p50 {statistics.median(lat):.3f} s  "
            f"p95 {p95:.3f} s  max {lat[-1]:.3f} s  saves {self.saves} (refused {self.save_errors})  "
            f"CPU per submit: server {1000 * self.server_cpu_s / len(lat):.1f} ms, "
            f"clients {1000 * self.client_cpu_s / len(lat):.1f} ms  "
            f"longest GC pause {1000 * self.gc_pause_s:.0f} ms  "
            f"acknowledged ratings all present: {'yes' if self.intact else 'NO'}"
            + (f"\n    errors: {'; '.join(self.errors[:3])}" if self.errors else "")
        )

    def p95(self) -> float:
        lat = sorted(self.latencies)
        return lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")


def _png(seed: int) -> bytes:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _seed(store, n: int) -> None:
    ref = store.images.add(_png(0))
    items = []
    for i in range(n):
        out = store.images.add(_png(i + 1))
        items.append(
            dict(
                references=[ref],
                output=out,
                prompt=f"a toy on a table, take {i}",
                subject="toy",
                method=f"m{i % 3}",
                external_key=f"load-{i}",
            )
        )
    store.samples.add_many("load", items)
    store.samples.set_for_rating("load", True)  # raters get tasks only from datasets marked for rating


def run(
    backend: str,
    url: str | None,
    mode: str,
    seconds: float,
    raters: int,
    weights: Path,
    tmp: Path,
    savers: int = 1,
    think: float = 0.0,
) -> Result:
    from masc_ui.settings import Settings
    from masc_ui.ui import rate_tab
    from masc_ui.ui.launch import free_port, serve
    from masc_ui.workbench import build_workbench

    names = [f"rater{i:02d}" for i in range(raters)]
    users = ",".join(["saver:saver-pw-1:admin"] + [f"{n}:pw-{n}-1:rater" for n in names])
    settings = Settings(
        profile="demo",
        demo_weights_dir=weights,
        device="cpu",
        dtype="float32",
        data_dir=tmp / f"{backend}-{mode}",
        database_url=url,
        users=users,
        port=free_port(),
        rating_overlap=raters,
    )
    wb = build_workbench(settings)
    _seed(wb.database.store, SAMPLES)
    before = rate_tab.ANSWER_QUEUE
    rate_tab.ANSWER_QUEUE = 1 if mode == "global" else before
    try:
        app = serve(wb, block=False, settle=True)  # as `python app.py` does (`launch.settle_heap`)
    finally:
        rate_tab.ANSWER_QUEUE = before
    result = Result(backend, mode)
    ctx = multiprocessing.get_context("spawn")
    queue, started = ctx.Queue(), ctx.Event()
    clients = ctx.Process(target=_clients, args=(app.local_url, names, savers, seconds, think, queue, started))
    pauses = GcPauses()
    clients.start()
    while not started.wait(timeout=1.0):  # the raters have logged in
        if not clients.is_alive():
            raise RuntimeError("the clients' process ended before the raters started")
    cpu_before = time.process_time()  # the server runs in this process (its threads included)
    with pauses:
        measured = queue.get(timeout=seconds + 600)
    result.server_cpu_s = time.process_time() - cpu_before
    result.gc_pause_s = pauses.longest
    clients.join(timeout=60)
    result.latencies, result.acknowledged = measured["latencies"], measured["acknowledged"]
    result.saves, result.save_errors, result.errors = measured["saves"], measured["save_errors"], measured["errors"]
    result.client_cpu_s = measured["client_cpu_s"]
    app.close()
    store = wb.database.store
    for name in names:
        current = (
            [r for r in store.ratings.current(rater=name) if r.status == "rated"]
            if name in {r.username for r in store.ratings.raters()}
            else []
        )
        result.stored[name] = len({r.sample_id for r in current if r.criterion == "cp"})
    wb.close()
    return result


class GcPauses:
    """Within the block, the longest collection of the cyclic garbage collector (`gc.callbacks`)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._began = 0.0

    def _on(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.longest = max(self.longest, time.perf_counter() - self._began)

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._on)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on)


def _clients(url: str, names: list[str], savers: int, seconds: float, think: float, queue, started) -> None:
    """In a process of its own (the server's interpreter lock is not shared with the clients): the raters as
    coroutines of one event loop, each with its own page session and connection (`queue_client`, the page's
    protocol), the savers as `gradio_client` threads (they upload files); started together, the measurements put on
    `queue`."""
    import asyncio

    from gradio_client import Client, handle_file
    from queue_client import QueueSession

    out = {"latencies": [], "acknowledged": {}, "saves": 0, "save_errors": 0, "errors": []}
    cpu_before = [0.0]
    lock = threading.Lock()
    go = threading.Event()
    stop_at = [time.monotonic() + 3600]

    async def rater(name: str, page: QueueSession, token: str) -> None:
        acked = k = 0
        # Pauses drawn at random (exponential, mean `think`; seeded per rater): with one fixed pause the raters stay
        # in lockstep and all submit in the same instant, so the last of each burst waits for the 15 others.
        pauses = random.Random(name)
        try:
            await asyncio.sleep(pauses.uniform(0, think))  # people do not start in the same second either
            while time.monotonic() < stop_at[0] and token:
                k += 1
                began = time.perf_counter()
                answer = await page.call("rate_submit", token, k % 5, (k * 3) % 5, "")
                out["latencies"].append(time.perf_counter() - began)
                acked += "saved your answer" in answer[-1]
                token = answer[TOKEN_OUTPUT]
                await asyncio.sleep(pauses.expovariate(1 / think) if think > 0 else 0)
        except Exception as exc:  # noqa: BLE001 - reported in the figures (a changed endpoint, a refused call)
            out["errors"].append(f"{name}: {exc}")
        finally:
            await page.close()
        out["acknowledged"][name] = acked

    async def raters() -> None:
        pages = []
        for name in names:  # raters log in one after the other, as people do
            page = None
            try:
                page = await QueueSession.open(url, name, f"pw-{name}-1")
                token = (await page.call("rate_open"))[TOKEN_OUTPUT]
                pages.append((name, page, token))
            except Exception as exc:  # noqa: BLE001 - reported in the figures
                out["errors"].append(f"{name}: {exc}")
                if page is not None:
                    await page.close()
        go.set()
        cpu_before[0] = time.process_time()
        started.set()  # the server measures its CPU from here
        stop_at[0] = time.monotonic() + seconds
        await asyncio.gather(*(rater(*p) for p in pages))

    def saver() -> None:
        try:
            client = Client(
                url, auth=("saver", "saver-pw-1"), verbose=False, download_files=False, httpx_kwargs={"timeout": 120}
            )
        except Exception as exc:  # noqa: BLE001 - reported in the figures
            with lock:
                out["errors"].append(f"saver: {exc}")
            return
        ex = EXAMPLES / "cat-on-grass"
        go.wait()
        i = 0
        while time.monotonic() < stop_at[0]:
            i += 1
            try:
                answer = client.predict(
                    handle_file(str(ex / "ref.jpg")),
                    None,
                    handle_file(str(ex / "out.jpg")),
                    f"a cat on the grass, save {i}",
                    "cat",
                    ["clip_i"],
                    "saved",
                    "",
                    False,
                    api_name="/save_new",
                )
                with lock:
                    out["saves"] += "saved as sample" in answer[0]
            except Exception as exc:  # noqa: BLE001 - rate-limited saves are part of the load
                with lock:
                    out["save_errors"] += 1
                    if "too many requests" not in str(exc) and len(out["errors"]) < 3:
                        out["errors"].append(f"saver: {exc}")
                time.sleep(1.0)

    threads = [threading.Thread(target=saver) for _ in range(savers)]
    for th in threads:
        th.start()
    try:
        asyncio.run(raters())
    finally:
        go.set()
        for th in threads:
            th.join()
    out["client_cpu_s"] = time.process_time() - cpu_before[0]
    started.set()  # also when no rater could log in
    queue.put(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--raters", type=int, default=16)
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("MASC_TEST_POSTGRES_URL"),
        help="a PostgreSQL server (a fresh schema is made and dropped); default MASC_TEST_POSTGRES_URL",
    )
    parser.add_argument("--modes", default="per-rater,global")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--savers", type=int, default=1, help="admins saving scored samples meanwhile (default 1)")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a rater waits after an answer before the next submit, drawn at random "
        "(exponential; default 0: no pause)",
    )
    args = parser.parse_args()

    from masc_ui.models.demo import write_demo_weights

    results = []
    with tempfile.TemporaryDirectory(prefix="masc-rating-load-") as tmp_name:
        tmp = Path(tmp_name)
        weights = tmp / "weights"
        write_demo_weights(weights)
        for backend in args.backends.split(","):
            if backend == "postgres" and not args.postgres_url:
                print("postgres: skipped (no --postgres-url / MASC_TEST_POSTGRES_URL)")
                continue
            for mode in args.modes.split(","):
                url, drop = (None, None) if backend == "sqlite" else _schema(args.postgres_url)
                try:
                    result = run(backend, url, mode, args.seconds, args.raters, weights, tmp, args.savers, args.think)
                finally:
                    if drop:
                        drop()
                print(result.line(), flush=True)
                results.append(result)
    print(
        f"\n{args.raters} raters (pause {args.think:g} s on average after each answer) + {args.savers} saver(s), "
        f"{args.seconds:.0f} s each; machine: {os.cpu_count()} CPUs "
        "(busy shared machines give noisy absolute figures)"
    )
    for backend in args.backends.split(","):
        by_mode = {r.mode: r for r in results if r.backend == backend}
        if "per-rater" in by_mode and "global" in by_mode:
            print(
                f"{backend}: p95 global / per-rater = {by_mode['global'].p95() / by_mode['per-rater'].p95():.2f}; "
                f"submits per-rater / global = {len(by_mode['per-rater'].latencies)}"
                f" / {len(by_mode['global'].latencies)}"
            )
    return 0 if all(r.intact and r.latencies and not r.errors for r in results) else 1


def _schema(base_url: str):
    import sqlalchemy as sa

    name = f"load_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {name}")
    url = sa.engine.make_url(base_url).update_query_dict({"options": f"-csearch_path={name}"})

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin.dispose()

    return url.render_as_string(hide_password=False), drop


if __name__ == "__main__":
    sys.exit(main())
