"""Start-up time of `python app.py` without network: seconds from launching the process to Gradio's "Running on"
line, on a fresh data dir (the demo checkpoints are written first) and on a warm one (they are there), measured
side by side in one run (runs alternate fresh, warm, fresh, warm, ...).

    python bench/startup.py                    # 3 runs each, default profile `auto`, no network
    python bench/startup.py --repeats 5 --hf-hub-offline

"No network" is made deterministic: the Hugging Face endpoint is a closed loopback port (connection refused at
once) and HF_HOME an empty folder (nothing cached), so `auto` takes its offline path: cache lookup, one probe,
demo profile. With `--hf-hub-offline` HF_HUB_OFFLINE=1 is set instead (no probe at all). Printed per kind: the
median and each run's seconds to the profile line (the decision, imports included) and to "Running on", then
fresh/warm; and every line the app printed that is neither the profile line nor Gradio's URL lines (there
should be none: no retries, tracebacks, warnings or progress bars).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNING = "Running on"
PROFILE = "profile: "


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_once(data_dir: Path, hf_home: Path, hub_offline: bool, timeout_s: float) -> tuple[float, float, list[str]]:
    """(seconds to the profile line, seconds to "Running on", unexpected lines) of one `python app.py`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MASC_") and k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SPACE_ID")
    }
    env |= {
        "MASC_DATA_DIR": str(data_dir),
        "MASC_PORT": str(_free_port()),
        "MASC_DEVICE": "cpu",
        "HF_HOME": str(hf_home),
        "HF_ENDPOINT": f"http://127.0.0.1:{_free_port()}",
        "PYTHONUNBUFFERED": "1",
    }
    if hub_offline:
        env["HF_HUB_OFFLINE"] = "1"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    lines: list[str] = []
    decided = ready = float("nan")
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            now = time.perf_counter() - start
            lines.append(line.rstrip("\n"))
            if line.startswith(PROFILE):
                decided = now
            if RUNNING in line:
                ready = now
                break
            if now > timeout_s:
                break
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    if ready != ready:  # NaN: never got there
        raise SystemExit(
            f"the app did not print {RUNNING!r} within {timeout_s:.0f} s; its output:\n" + "\n".join(lines[-40:])
        )
    unexpected = [ln for ln in lines if ln.strip() and not ln.startswith((PROFILE, "* "))]
    return decided, ready, unexpected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind (default 3)")
    parser.add_argument("--hf-hub-offline", action="store_true", help="set HF_HUB_OFFLINE=1 (no probe)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one start")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="masc-startup-"))
    hf_home = work / "hf-home"
    results: dict[str, list[tuple[float, float]]] = {"fresh": [], "warm": []}
    noise: list[str] = []
    try:
        warm_dir = work / "warm"
        start_once(warm_dir, hf_home, args.hf_hub_offline, args.timeout)  # writes the demo checkpoints once
        for i in range(args.repeats):
            fresh_dir = work / f"fresh-{i}"
            for kind, data_dir in (("fresh", fresh_dir), ("warm", warm_dir)):
                decided, ready, unexpected = start_once(data_dir, hf_home, args.hf_hub_offline, args.timeout)
                results[kind].append((decided, ready))
                noise += unexpected
            shutil.rmtree(fresh_dir, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mode = "HF_HUB_OFFLINE=1" if args.hf_hub_offline else "no network (endpoint refused), HF_HUB_OFFLINE unset"
    print(f"python app.py, profile auto, {mode}, {args.repeats} run(s) each, CPU")
    print(f"{'data dir':<10}{'profile line (s)':>18}{'Running on (s)':>16}   runs (Running on)")
    medians = {}
    for kind, runs in results.items():
        medians[kind] = statistics.median(r for _, r in runs)
        decided = statistics.median(d for d, _ in runs)
        print(f"{kind:<10}{decided:>18.2f}{medians[kind]:>16.2f}   " + ", ".join(f"{r:.2f}" for _, r in runs))
    print(f"fresh / warm: {medians['fresh'] / medians['warm']:.2f}x")
    print(f"unexpected output lines: {len(noise)}")
    for line in dict.fromkeys(noise):
        print(f"  {line}")


if __name__ == "__main__":
    main()
