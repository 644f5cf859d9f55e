"""`masc-ui study`: create (the link printed once, never stored), list (table and JSON), close; bad input is one
clear line and exit status 2."""

from __future__ import annotations

import json

from gold_samples import save_samples

from masc_ui.cli import main
from masc_ui.workbench import build_workbench


def test_create_list_and_close(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        save_samples(wb, tmp_path / "img", 3)
    data = ["--data-dir", str(demo_settings.data_dir)]
    create = ["study", "create", "--dataset", "d", "--name", "pilot", "--tasks", "2", "--code", "C0DE42"]
    assert main([*create, "--base-url", "https://rate.example.org/", *data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "study 1 is open; its link (printed this once, keep it safe):"
    assert out[1].startswith("https://rate.example.org/study/1.") and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in out[1]
    secret = out[1].split("/study/1.", 1)[1].split("?", 1)[0]
    assert secret not in (demo_settings.data_dir / "masc.sqlite3").read_bytes().decode("latin-1")
    assert main(["study", "list", "--json", *data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["id"], s["name"], s["tasks"], s["state"]) for s in listed] == [(1, "pilot", 2, "open")]
    assert main(["study", "close", "--id", "1", *data]) == 0
    assert "study 1 is closed" in capsys.readouterr().out
    assert main(["study", "list", *data]) == 0
    assert "\tclosed" in capsys.readouterr().out
    assert main(["study", "close", "--id", "7", *data]) == 2
    assert "study 7 does not exist" in capsys.readouterr().err
    assert main([*create[:-2], "--redirect", "ftp://x", *data]) == 2
    assert "the redirect URL must be a whole http(s) address" in capsys.readouterr().err
    assert main([*create[:-2], *data]) == 2
    assert "give a completion code" in capsys.readouterr().err
