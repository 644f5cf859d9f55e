"""Kill test of rating durability at scale: 1,000 SIGKILLs of a rating writer, then prove nothing
acknowledged was lost and the database is intact.

    python bench/crash_ratings.py [--cycles 1000] [--db URL] [--data-dir DIR] [--seed N]

Without --db it uses a fresh SQLite database in a temporary folder. Prints the figures; exits 1 if an
acknowledged rating is missing or the integrity check fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.durability import run_kill_cycles  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--db", default=None, help="database URL (default: fresh SQLite)")
    parser.add_argument("--data-dir", type=Path, default=None, help="blob/SQLite folder (default: temp dir)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay-ms", type=float, default=80.0, help="kill 0..this many ms after start")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="masc-crash-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"

        def progress(done: int, acked: int) -> None:
            if done % 100 == 0:
                print(f"  {done}/{args.cycles} kills, {acked} acknowledged ratings so far", flush=True)

        try:
            report = run_kill_cycles(
                args.db,
                data_dir,
                cycles=args.cycles,
                seed=args.seed,
                max_delay_s=args.max_delay_ms / 1000,
                progress=progress,
            )
        except AssertionError as exc:
            print(f"FAILED: {exc}")
            return 1
    backend = "sqlite" if args.db is None else args.db.split(":", 1)[0]
    print(f"backend                 {backend}")
    print(f"SIGKILLed writers       {report.cycles}")
    print(f"acknowledged ratings    {report.acknowledged}")
    print(f"missing after recovery  {report.missing}")
    print(f"integrity checks        {report.integrity_checks} (final: {report.integrity})")
    print(f"wall time               {report.seconds:.1f} s ({report.seconds / report.cycles * 1000:.0f} ms per kill)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
