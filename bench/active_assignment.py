"""How many answers each rating-assignment policy needs until every method's 95% interval of its mean human rating
is under a width, simulated on ImagenHub's recorded ratings (`../shared/data/imagenhub`: 3 raters per task, SC
in {0, 0.5, 1}), side by side in one run over several seeds (`masc_ui.analysis.active_assignment`).

Each simulated answer is one of the sample's three recorded ratings, drawn at random; three simulated raters take
turns; a policy never hands a rater a sample twice. The stop is judged on the interval the answers truly give
(the module docstring), the policy chooses from what it has seen. Prints, per task and width, the median answers
(and their range over the seeds) of `overlap` (the app's rule, K = 2), `random` and `widest`, the Kendall tau-b of
the methods' estimated means with their means over all recorded ratings at the stop, and widest's share of the
others' answers (the goal: at most 0.60).

    python bench/active_assignment.py                         # widths 0.20 and 0.15, seeds 0-9, SC
    python bench/active_assignment.py --widths 0.1 --seeds 20 --criterion pq
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from masc_ui.analysis.active_assignment import POLICIES, pool_from_cells, simulate  # noqa: E402
from masc_ui.datasets.imagenhub import read_imagenhub  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "imagenhub" / "human_ratings"
GOAL = 0.60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="ImagenHub's human_ratings folder")
    parser.add_argument("--widths", default="0.2,0.15", help="interval widths on the 0-1 scale, comma-separated")
    parser.add_argument("--seeds", type=int, default=10, help="seeds per (task, width, policy)")
    parser.add_argument("--criterion", choices=("sc", "pq"), default="sc")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(
            f"no ImagenHub ratings at {args.data}; pass --data PATH (the folder holding <task>/<task>_rater<N>.tsv)"
        )
    column = 0 if args.criterion == "sc" else 1
    widths = [float(w) for w in args.widths.split(",")]
    tasks = read_imagenhub(args.data).tasks
    print(f"criterion {args.criterion}, seeds 0..{args.seeds - 1}, 3 simulated raters, overlap K = 2")
    print(
        "| task | samples | width | " + " | ".join(POLICIES) + " | widest / overlap | widest / random | tau at stop |"
    )
    print("|---|--:|--:|" + "--:|" * len(POLICIES) + "--:|--:|---|")
    for name, task in tasks.items():
        cells = {
            rater: {m: {uid: cell[column] for uid, cell in task.cells[rater][m].items()} for m in task.models}
            for rater in task.raters
        }
        pool = pool_from_cells(cells)
        for width in widths:
            runs = {p: [simulate(pool, p, width, seed) for seed in range(args.seeds)] for p in POLICIES}
            median = {p: float(np.median([o.answers for o in runs[p]])) for p in POLICIES}
            shown = [
                f"{median[p]:.0f} ({min(o.answers for o in runs[p])}-{max(o.answers for o in runs[p])})"
                + ("" if all(o.reached for o in runs[p]) else " not reached")
                for p in POLICIES
            ]
            taus = ", ".join(f"{p} {np.nanmean([o.tau for o in runs[p]]):.2f}" for p in POLICIES)
            ratios = [median["widest"] / median[p] for p in ("overlap", "random")]
            marks = [f"{r:.2f}{' ✓' if r <= GOAL else ''}" for r in ratios]
            print(
                f"| {name} | {len(pool.methods)} | {width:g} | "
                + " | ".join(shown)
                + f" | {' | '.join(marks)} | {taus} |"
            )


if __name__ == "__main__":
    main()
