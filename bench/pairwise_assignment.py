"""Pairwise task latency: one rater's "next pair + answer both criteria" against the absolute Rate flow's "next
sample + submit both scores", side by side on one SQLite database, at a given dataset size.

The dataset (fresh temporary data dir) has --references references x --methods methods outputs (tiny PNGs), so
references x C(methods, 2) pairs. Each timed step is what the Rate tab does per task: the use case's next task
(pairwise: assignment by the pair planner inside the write transaction; the images decoded for the view) and the
answers committed. Prints milliseconds per step of both and their ratio; numbers depend on the machine and its
load: read the ratio.

    python bench/pairwise_assignment.py                      # 500 references x 4 methods: 2,000 outputs
    python bench/pairwise_assignment.py --references 2500 --steps 20
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from masc_ui.settings import Settings
from masc_ui.workbench.database import Database
from masc_ui.workbench.pairwise import PairwiseTasks
from masc_ui.workbench.ratings import RatingTasks
from storage import open_store


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (12, 12, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--references", type=int, default=500)
    parser.add_argument("--methods", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10, help="timed tasks of each kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, open_store(None, Path(folder)) as store:
        items = []
        for r in range(args.references):
            ref = store.images.add(_png(1_000_000 + r))
            for m in range(args.methods):
                items.append(
                    dict(
                        references=[ref],
                        output=store.images.add(_png(r * args.methods + m)),
                        prompt="p",
                        subject=f"subject {r}",
                        method=f"m{m}",
                        external_key=f"{r}/m{m}",
                    )
                )
        store.samples.add_many("bench", items)
        database = Database.of(store)
        settings = Settings(rating_overlap=2)
        pairwise, ratings = PairwiseTasks(database, settings), RatingTasks(database, settings)

        def pair_step() -> None:
            view = pairwise.next_task("alice")
            pairwise.submit("alice", view.token, {"cp": "left", "pf": "tie"})

        def rating_step() -> None:
            view = ratings.next_task("bob")
            ratings.submit("bob", view.sample_id, {"cp": 3, "pf": 2})

        pair_step(), rating_step()  # warm: plan built, connections open
        timings = {}
        for name, step in (("pairwise", pair_step), ("absolute", rating_step)):
            start = time.perf_counter()
            for _ in range(args.steps):
                step()
            timings[name] = (time.perf_counter() - start) / args.steps
    pairs = args.references * args.methods * (args.methods - 1) // 2
    print(f"{len(items)} outputs, {pairs} pairs, {args.steps} tasks each")
    print(f"pairwise next + answer: {timings['pairwise'] * 1000:.1f} ms/task")
    print(f"absolute next + submit: {timings['absolute'] * 1000:.1f} ms/task")
    print(f"ratio pairwise / absolute: {timings['pairwise'] / timings['absolute']:.2f}")


if __name__ == "__main__":
    main()
