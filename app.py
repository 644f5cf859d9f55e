"""MaSC Workbench web app: `python app.py` locally and on Hugging Face Spaces.

Settings come from `MASC_*` environment variables (see README "Settings"), then these flags. With the
default `auto` profile and no reachable/cached real weights, the app starts on the offline demo weights
(written on first start) and says so on every screen.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from masc_ui.errors import WorkbenchError
from masc_ui.settings import PROFILES, Settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="MaSC Workbench web app")
    p.add_argument("--profile", choices=PROFILES, help="model profile (default auto)")
    p.add_argument("--device", help="auto, cpu, cuda, cuda:N, mps")
    p.add_argument("--host", help="address to bind (default 127.0.0.1; 0.0.0.0 on Spaces)")
    p.add_argument("--port", type=int, help="port (default 7860)")
    p.add_argument("--data-dir", type=Path, help="database + blob store folder")
    p.add_argument("--db", dest="database_url", help="database URL (default: SQLite in the data dir)")
    p.add_argument("--demo-weights-dir", type=Path, help="folder of the tiny demo checkpoints")
    p.add_argument("--users-file", type=Path, help="rater logins, one user:password per line")
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace, environ: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ if environ is None else environ)
    overrides = {k: getattr(args, k) for k in ("profile", "device", "host", "port", "data_dir", "database_url",
                                               "demo_weights_dir", "users_file")}
    if env.get("SPACE_ID") and "MASC_HOST" not in env and overrides["host"] is None:
        overrides["host"] = "0.0.0.0"  # Hugging Face Spaces routes to the container's public interface
    return Settings.from_env(env, **overrides)


def main(argv: list[str] | None = None) -> int:
    from masc_ui.ui.launch import serve
    from masc_ui.workbench import Workbench

    try:
        settings = settings_from(parse_args(argv))
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        wb = Workbench.open(settings, offline=offline)
        print(wb.status().line(), flush=True)
        serve(wb, block=True)
    except WorkbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
