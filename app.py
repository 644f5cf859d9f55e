"""MaSC Workbench web app: `python app.py` locally and on Hugging Face Spaces (same as `masc-ui serve`).

Settings come from `MASC_*` environment variables (see README "Settings"), then the flags of
`masc-ui serve --help`. With the default `auto` profile and no reachable/cached real weights, the app starts
on the offline demo weights (written on first start) and says so on every screen. On Spaces (`SPACE_ID` set)
it listens on 0.0.0.0 unless `MASC_HOST` says otherwise.
"""

from __future__ import annotations

import sys

from masc_ui.cli import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
