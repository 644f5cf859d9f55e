"""`masc-ui guide set / show`: a guide from a Markdown file with examples and a practice round, shown back; bad
input gets a one-line error and changes nothing."""

from __future__ import annotations

from gold_samples import save_samples

from masc_ui.cli import main
from masc_ui.workbench import build_workbench


def test_set_and_show_a_guide(demo_settings, tmp_path, capsys):
    with build_workbench(demo_settings) as wb:
        ids = save_samples(wb, tmp_path / "img", 4)
        wb.gold.mark(user=None, dataset="d", sample=f"#{ids[0]}", criterion="cp", accepted="3", note="same cat")
    guide = tmp_path / "guide.md"
    guide.write_text("# Rating the cats\n\nLook at the ears.", encoding="utf-8")
    data = ["--data-dir", str(demo_settings.data_dir)]
    args = ["guide", "set", "--dataset", "d", str(guide), "--example", f"#{ids[1]}:4:-:the same cat: all details"]
    assert main([*args, "--practice", "1", "--practice-sample", f"#{ids[0]}", "--skippable", *data]) == 0
    assert capsys.readouterr().out.strip() == (
        "rating guide of 'd' is version 1: 1 example(s), practice round of 1 task(s) from 1 practice sample(s)"
    )
    assert main(["guide", "show", "--dataset", "d", *data]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rating guide of 'd': version 1 of 1, by a local process at ")
    assert f"practice round: 1 task(s), raters may skip it; practice samples: #{ids[0]}" in out
    assert "# Rating the cats\n\nLook at the ears." in out and f"  #{ids[1]}:4:-:the same cat: all details" in out
    # errors: one line each, nothing stored
    assert main(["guide", "set", "--dataset", "d", str(tmp_path / "none.md"), *data]) == 2
    assert "guide file" in capsys.readouterr().err
    assert main(["guide", "set", "--dataset", "d", str(guide), "--example", f"#{ids[1]}:7:-", *data]) == 2
    assert "CP must be a score 0-4 or -, got '7'" in capsys.readouterr().err
    assert main(["guide", "set", "--dataset", "d", str(guide), "--practice-sample", f"#{ids[2]}", *data]) == 2
    assert "is not a gold task" in capsys.readouterr().err
    assert main(["guide", "show", "--dataset", "nope", *data]) == 2
    assert "dataset 'nope' is not in the database" in capsys.readouterr().err
    assert main(["guide", "show", "--dataset", "d", *data]) == 0
    assert "version 1 of 1" in capsys.readouterr().out
