"""Kill test of the app's Save: SIGKILL a process in the middle of Saves, N times, then prove that the database
never holds a sample without its values, nor a value without the masks it was computed with.

    python bench/crash_saves.py [--cycles 200] [--db URL] [--seed N] [--max-delay-ms 60]

Each cycle forks a child that saves samples in a loop through the record use case, exactly as the Score tab's
Save does after scoring (images, sample, masks, values): new samples (random images, a reference and an output
mask, CP / PF / CLIP-I / CLIP-I-Seg values), and every third Save the previous sample again with a new output
mask and new values. After each Save returns it reports the sample on a pipe. The parent SIGKILLs it at a
random moment (0..`max_delay_ms` after its first acknowledged Save), so kills land inside transactions,
commits, fsyncs and blob writes. Afterwards, for every sample stored: it has values; every value that the
mask rule says depends on masks names stored masks of that sample of the right image (CP: the references,
PF / CLIP-I-Seg: the output); every acknowledged Save is there with its values; SQLite's integrity check says
`ok`. Exits 1 on any violation. POSIX only (fork, SIGKILL).

Runs against whichever `masc_ui` is importable: `PYTHONPATH=/path/to/other/checkout python bench/crash_saves.py`
measures an older Save (which wrote images, sample, masks and values in separate transactions) the same way.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))
else:
    sys.path.append(str(ROOT))  # `bench.durability` importable without shadowing PYTHONPATH's masc_ui

import numpy as np  # noqa: E402

from bench.durability import kill_one_child  # noqa: E402

CHILD_READY_TIMEOUT_S = 120.0
PROVENANCE = {
    "model_id": "crash-test",
    "revision": "local",
    "params": {"fg_threshold": 0.5},
    "code_version": "test",
    "device": "cpu",
    "dtype": "float32",
}
METRICS = {"cp": "reference", "pf": "output", "clip_i": None, "clip_i_seg": "output"}
"""metric -> the image whose masks its values must name (None: no mask)."""


@dataclass
class SaveKillReport:
    cycles: int
    acknowledged: int
    """Saves the children reported as returned."""
    samples: int
    """Samples in the database afterwards."""
    values: int
    violations: list[str] = field(default_factory=list)
    """Samples without values, values without their masks, acknowledged Saves missing (must be empty)."""
    integrity: str = ""
    seconds: float = 0.0


def _saver() -> Callable:
    """save(settings, store, sample, values, mask_sources, user) with the record use case of this checkout (or
    the older StoreUseCases.save of a checkout from before it)."""
    try:
        from masc_ui.workbench.database import Database
        from masc_ui.workbench.recorder import Recorder

        def save(settings, store, sample, values, sources, user):
            return (
                Recorder(Database.of(store))
                .save(sample, values, user=user, dataset="crash", mask_sources=sources)
                .sample_id
            )
    except ImportError:  # a checkout from before masc_ui/workbench/
        from masc_ui.workbench_store import StoreUseCases

        def save(settings, store, sample, values, sources, user):
            return (
                StoreUseCases(settings, store)
                .save(sample, values, dataset="crash", method=None, mask_sources=sources, user=user)
                .sample_id
            )

    return save


def _sample(rng: np.random.Generator, out_mask_shift: int = 0):
    from PIL import Image

    from masc_ui.metrics.sample import Sample

    def image() -> Image.Image:
        return Image.fromarray(rng.integers(0, 256, (24, 32, 3), dtype=np.uint8))

    ref_mask = np.zeros((24, 32), bool)
    ref_mask[4:20, 6:26] = True
    out_mask = np.zeros((24, 32), bool)
    out_mask[2 + out_mask_shift % 8 : 18, 4:28] = True
    return Sample(
        refs=(image(),),
        out=image(),
        prompt="a photo of a toy on a table",
        subject="toy",
        ref_masks=(ref_mask,),
        out_mask=out_mask,
    )


def _values(rng: random.Random) -> dict:
    from masc_ui.metrics.sample import MetricValue

    return {m: MetricValue(m, rng.uniform(-1, 1), provenance=dict(PROVENANCE)) for m in METRICS}


def _child(url: str, data_dir: Path, fd: int, seed: int) -> None:
    code = 0
    try:
        from dataclasses import replace

        from masc_ui.settings import Settings
        from storage import Store
        from storage.engine import create_engine

        settings = Settings(data_dir=data_dir, database_url=url)
        store = Store(create_engine(url), data_dir)
        save = _saver()
        os.write(fd, b"ready\n")
        rng, nrng = random.Random(seed), np.random.default_rng(seed)
        previous = None
        for i in range(10**9):
            if previous is not None and i % 3 == 2:
                mask = np.roll(previous.out_mask, 1 + i % 5, axis=1)
                sample = replace(previous, out_mask=mask)  # the same sample, a new output mask
            else:
                sample = _sample(nrng, i)
            sample_id = save(settings, store, sample, _values(rng), {"ref0": "drawn", "out": "sam"}, "crash")
            previous = sample
            os.write(fd, f"{sample_id}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        os.write(fd, f"error {type(exc).__name__}: {exc}\n".encode())
        code = 1
    finally:
        os._exit(code)


def _one_cycle(url: str, data_dir: Path, rng: random.Random, max_delay_s: float) -> list[int]:
    child_seed = rng.randrange(2**31)
    lines = kill_one_child(
        lambda fd: _child(url, data_dir, fd, child_seed), rng, max_delay_s, ready_timeout_s=CHILD_READY_TIMEOUT_S
    )
    return [int(line) for line in lines]


def verify(store) -> tuple[list[str], int, int]:
    """(violations, samples, values) of the database behind `store` (see the module docstring)."""
    import sqlalchemy as sa

    from storage import schema

    def read(s):
        samples = list(s.scalars(sa.select(schema.Sample.id)))
        values = s.execute(
            sa.select(schema.MetricValue.id, schema.MetricValue.sample_id, schema.MetricValue.metric)
        ).all()
        used = s.execute(
            sa.select(
                schema.MetricValueMask.metric_value_id,
                schema.MaskVersion.id,
                schema.SampleImage.sample_id,
                schema.SampleImage.role,
            )
            .join(schema.MaskVersion, schema.MaskVersion.id == schema.MetricValueMask.mask_version_id)
            .join(schema.SampleImage, schema.SampleImage.id == schema.MaskVersion.sample_image_id)
        ).all()
        n_masks = dict(
            s.execute(
                sa.select(schema.MetricValueMask.metric_value_id, sa.func.count()).group_by(
                    schema.MetricValueMask.metric_value_id
                )
            ).all()
        )
        return samples, values, used, n_masks

    samples, values, used, n_masks = store.tx.read(read)
    violations = []
    with_values = {sid for _, sid, _ in values}
    violations += [f"sample #{sid} has no values" for sid in samples if sid not in with_values]
    masks_of: dict[int, list[tuple[int, str]]] = {}
    for vid, _, sid, role in used:
        masks_of.setdefault(vid, []).append((sid, role))
    for vid, sid, metric in values:
        role = METRICS.get(metric)
        found = masks_of.get(vid, [])
        if len(found) != n_masks.get(vid, 0):
            violations.append(f"value #{vid} ({metric}) names a mask that is not stored")
        if role is not None and (sid, role) not in found:
            violations.append(f"value #{vid} ({metric}) of sample #{sid} lacks its {role} mask")
        if any(s != sid or r != role for s, r in found):
            violations.append(f"value #{vid} ({metric}) names masks it does not use")
    return violations, len(samples), len(values)


def run_save_kills(
    database_url: str | None,
    data_dir: Path,
    *,
    cycles: int,
    seed: int = 0,
    max_delay_s: float = 0.06,
    progress: Callable[[int, int], None] | None = None,
) -> SaveKillReport:
    """Run `cycles` save-and-SIGKILL cycles against the database (None = SQLite in `data_dir`)."""
    from storage import open_store

    _saver()  # import the record use case (and what it imports) once, before the children are forked
    _sample(np.random.default_rng(0))
    start = time.monotonic()
    rng = random.Random(seed)
    data_dir = Path(data_dir)
    with open_store(database_url, data_dir) as store:
        url = store.engine.url.render_as_string(hide_password=False)
    acked: list[int] = []
    for cycle in range(cycles):
        acked += _one_cycle(url, data_dir, rng, max_delay_s)
        if progress is not None:
            progress(cycle + 1, len(acked))
    with open_store(database_url, data_dir) as store:
        violations, n_samples, n_values = verify(store)
        present = {s.id for s in store.samples.list("crash")} if acked else set()
        violations += [f"acknowledged Save of sample #{sid} is missing" for sid in sorted(set(acked) - present)]
        integrity = store.integrity_check()
    if integrity != "ok":
        violations.append(f"integrity check: {integrity}")
    return SaveKillReport(cycles, len(acked), n_samples, n_values, violations, integrity, time.monotonic() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--db", default=None, help="database URL (default: fresh SQLite)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay-ms", type=float, default=60.0, help="kill 0..this many ms after start")
    args = parser.parse_args()
    import masc_ui

    with tempfile.TemporaryDirectory(prefix="masc-crash-saves-") as tmp:

        def progress(done: int, acked: int) -> None:
            if done % 50 == 0:
                print(f"  {done}/{args.cycles} kills, {acked} acknowledged Saves so far", flush=True)

        report = run_save_kills(
            args.db,
            Path(tmp) / "data",
            cycles=args.cycles,
            seed=args.seed,
            max_delay_s=args.max_delay_ms / 1000,
            progress=progress,
        )
    backend = "sqlite" if args.db is None else args.db.split(":", 1)[0]
    print(f"code                    {Path(masc_ui.__file__).resolve().parent.parent}")
    print(f"backend                 {backend}")
    print(f"SIGKILLed savers        {report.cycles}")
    print(f"acknowledged Saves      {report.acknowledged}")
    print(f"samples / values        {report.samples} / {report.values}")
    kinds = {
        "samples without values": "has no values",
        "values without their masks": "lacks its",
        "values naming a mask not stored": "not stored",
        "values naming masks they do not use": "does not use",
        "acknowledged Saves missing": "is missing",
    }
    print(f"violations              {len(report.violations)}")
    for kind, text in kinds.items():
        print(f"  {kind:<36}{sum(text in v for v in report.violations)}")
    print(f"integrity               {report.integrity}")
    print(f"wall time               {report.seconds:.1f} s ({report.seconds / report.cycles * 1000:.0f} ms per kill)")
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
