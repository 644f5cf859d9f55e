"""How a rater's screen after an answer (`TaskRepository.rater_screen`: next task, progress, statuses, read in one
snapshot) and the answer's write scale with the ratings already stored: the read is made on every answer, over
every sample in scope (with its stored count of complete ratings, schema revision 0006) and the rater's own answers.

    python bench/rater_state.py [--sizes 600:100,3000:400,6000:1500] [--postgres-url URL]

Each size `S:R` is S samples in one dataset marked for rating and 16 raters who each rated R of them (2 criteria:
2 x 16 x R rating rows), stored through `RatingRepository.rate_sample` like the app's answers (their mean time is
printed: what a write costs, the count of complete ratings included); then the best of 5 rounds of 20
`rater_screen` calls (overlap K = 3). Prints milliseconds per call per size. Not a test: read the growth, not the
absolute figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rating_load import _png, _schema  # noqa: E402

from storage.store import open_store  # noqa: E402

RATERS = 16


def measure(url: str | None, samples: int, per_rater: int) -> tuple[int, float, float]:
    """(rating rows stored, best milliseconds per `rater_screen` call, mean milliseconds per answer written)."""
    with tempfile.TemporaryDirectory(prefix="masc-rater-state-") as tmp:
        store = open_store(url, Path(tmp))
        try:
            ref, out = store.images.add(_png(0)), store.images.add(_png(1))
            store.samples.add_many(
                "campaign",
                [
                    dict(
                        references=[ref],
                        output=out,
                        prompt=f"a toy, take {i}",
                        subject="toy",
                        method="m",
                        external_key=f"k{i}",
                    )
                    for i in range(samples)
                ],
            )
            store.samples.set_for_rating("campaign", True)
            ids = [s.id for s in store.samples.list("campaign")]
            names = [f"rater{i:02d}" for i in range(RATERS)]
            for name in names:
                store.ratings.ensure_rater(name)
            start = time.perf_counter()
            for j, name in enumerate(names):
                for k in range(per_rater):
                    store.ratings.rate_sample(name, ids[(j * 37 + k) % len(ids)], {"cp": 3, "pf": 2})
            write_ms = 1000 * (time.perf_counter() - start) / (RATERS * per_rater)
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                for i in range(20):
                    store.tasks.rater_screen(names[i % RATERS], overlap_k=3, for_rating_only=True)
                best = min(best, (time.perf_counter() - start) / 20)
            return 2 * RATERS * per_rater, 1000 * best, write_ms
        finally:
            store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="600:100,3000:400,6000:1500",
        help="comma-separated SAMPLES:RATED_PER_RATER (default 600:100,3000:400,6000:1500)",
    )
    parser.add_argument("--postgres-url", help="also measure on this PostgreSQL server (a fresh schema, dropped)")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in part.split(":")) for part in args.sizes.split(",")]
    backends = [("sqlite", None)] + ([("postgres", args.postgres_url)] if args.postgres_url else [])
    for backend, base_url in backends:
        for samples, per_rater in sizes:
            url, drop = (None, None) if base_url is None else _schema(base_url)
            try:
                rows, ms, write_ms = measure(url, samples, per_rater)
            finally:
                if drop:
                    drop()
            print(
                f"{backend:9s} {samples:6d} samples  {rows:7d} rating rows  rater_screen {ms:7.1f} ms  "
                f"answer written (rate_sample, mean while filling) {write_ms:5.2f} ms",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
