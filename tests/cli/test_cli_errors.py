"""Bad input for the command line: every error is one line on stderr starting `error:`, exit status 2, no traceback,
and nothing huge is allocated or read (numeric settings are bounded, devices and folders are refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from masc_ui.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "assets" / "examples" / "cat-on-grass"


def _corpus(tmp: Path) -> dict[str, list[str]]:
    latin1 = tmp / "latin1.jsonl"
    latin1.write_bytes('{"ref": "r.png", "out": "o.png", "prompt": "caf\xe9", "subject": "cup"}\n'.encode("latin-1"))
    folder = tmp / "a-folder"
    folder.mkdir(exist_ok=True)
    empty = tmp / "empty.png"
    empty.write_bytes(b"")
    data = ["--data-dir", str(tmp / "data")]
    score = ["score", "--metrics", "clip_i", "--profile", "demo", "--demo-weights-dir", str(tmp / "no-weights")]
    return {
        "patch budget far too large": [
            "score",
            "--ref",
            "r.png",
            "--out",
            "o.png",
            "--naflex-max-patches",
            "100000000",
        ],
        "patch budget not a number": ["score", "--ref", "r.png", "--out", "o.png", "--naflex-max-patches", "lots"],
        "threshold nan": ["score", "--ref", "r.png", "--out", "o.png", "--fg-threshold", "nan"],
        "threshold above one": ["batch", "--dataset", "d", "--fg-threshold", "7"],
        "batch size zero": ["batch", "--dataset", "d", "--batch-size", "0"],
        "negative limit": ["batch", "--dataset", "d", "--limit", "-3"],
        "bootstrap too many": ["agreement", "--n-boot", "1000000000"],
        "seed negative": ["agreement", "--seed", "-1"],
        "port out of range": ["serve", "--port", "70000"],
        "ref is a device": [*score, "--ref", "/dev/zero", "--out", str(EXAMPLE / "out.jpg")],
        "ref is a folder": [*score, "--ref", str(folder), "--out", str(EXAMPLE / "out.jpg")],
        "ref is missing": [*score, "--ref", str(tmp / "nope.png"), "--out", str(EXAMPLE / "out.jpg")],
        "ref is empty": [*score, "--ref", str(empty), "--out", str(EXAMPLE / "out.jpg")],
        "prompt with NUL": [
            *score,
            "--ref",
            str(EXAMPLE / "ref.jpg"),
            "--out",
            str(EXAMPLE / "out.jpg"),
            "--prompt",
            "a\x00cat",
        ],
        "manifest not UTF-8": ["import", "manifest", str(latin1), "--dataset", "d", *data],
        "manifest is a folder": ["import", "manifest", str(folder), "--dataset", "d", *data],
        "unknown dataset": ["export", "-o", str(tmp / "x.csv"), "--dataset", "nope", *data],
        "restore a missing dump": ["db", "restore", str(tmp / "nope.json"), *data],
        "unknown command": ["frobnicate"],
        "bad point": ["segment", str(EXAMPLE / "ref.jpg"), "--point", "1,2,3,4", "-o", str(tmp / "m.png")],
        "users add without a file": ["users", "add", "alice", "--password-stdin"],
        "unknown setting value": ["batch", "--dataset", "d", "--profile", "gigantic"],
    }


@pytest.mark.parametrize("case", list(_corpus(Path("/tmp"))))
def test_bad_input_is_one_line_with_status_2(case: str, tmp_path: Path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.delenv("MASC_USERS_FILE", raising=False)
    argv = _corpus(tmp_path)[case]
    with pytest.raises(SystemExit) if case in _USAGE_ERRORS else _no_exit():
        status = main(argv)
        assert status == 2, (case, status)
    err = capsys.readouterr().err.strip().splitlines()
    err = [line for line in err if not line.startswith(("Writing model", "Loading"))]
    assert len(err) == 1 and err[0].startswith("error: "), (case, err)
    assert "Traceback" not in err[0]


_USAGE_ERRORS = {
    "patch budget far too large",
    "patch budget not a number",
    "threshold nan",
    "threshold above one",
    "batch size zero",
    "negative limit",
    "bootstrap too many",
    "seed negative",
    "port out of range",
    "unknown command",
    "bad point",
    "unknown setting value",
}


class _no_exit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_usage_errors_exit_with_status_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["score", "--ref", "r.png", "--out", "o.png", "--naflex-max-patches", "100000000"])
    assert caught.value.code == 2
    assert "must be within [1, 16384]" in capsys.readouterr().err


def test_a_prompt_that_is_not_utf8_is_one_line_in_a_real_process(tmp_path: Path):
    """Bytes that are not UTF-8 on the command line reach Python as lone surrogates: refused before any work."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"masc_ui",
            b"score",
            b"--metrics",
            b"clip_t",
            b"--ref",
            str(EXAMPLE / "ref.jpg").encode(),
            b"--out",
            str(EXAMPLE / "out.jpg").encode(),
            b"--prompt",
            b"caf\xe9 au lait",
            b"--profile",
            b"demo",
            b"--demo-weights-dir",
            str(tmp_path / "w").encode(),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=300,
    )
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert "--prompt contains text that is not valid UTF-8" in lines[0]
