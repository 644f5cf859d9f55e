"""The MaSC example of the docs' Library page runs as written (offline, on the tiny demo checkpoint)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LIBRARY_PAGE = Path(__file__).resolve().parents[3] / "docs" / "library.md"
SECTION = "## MaSC: a drop-in replacement for `masc-metric`"


def test_library_page_masc_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    text = LIBRARY_PAGE.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(LIBRARY_PAGE), "exec"), {"__name__": "library_example"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("a photo of on a beach")
    assert lines[-1] == "parked on a road"
