"""The app's own process takes what is alive at startup out of the garbage collector's walks
(`launch.settle_heap`); processes that launch many apps (tests) do not, unless they ask."""

from __future__ import annotations

import gc
from pathlib import Path

import gradio as gr
import pytest

from masc_ui.ui import launch


def test_settle_heap_freezes_what_is_alive_and_later_garbage_is_still_collected():
    before = gc.get_threshold()
    try:
        launch.settle_heap()
        assert gc.get_freeze_count() > 1000
        assert gc.get_threshold() == (launch.YOUNG_GC_THRESHOLD, *before[1:]) and launch.YOUNG_GC_THRESHOLD > before[0]

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle made after the freeze
        del a, b
        assert gc.collect() >= 2
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.parametrize(
    "block, settle, expected", [(True, None, 1), (False, None, 0), (False, True, 1), (True, False, 0)]
)
def test_serve_settles_the_heap_in_the_apps_own_process(
    demo_weights: Path, tmp_path: Path, monkeypatch, block, settle, expected
):
    from masc_ui.settings import Settings
    from masc_ui.workbench import build_workbench

    calls = []
    monkeypatch.setattr(launch, "settle_heap", lambda: calls.append(1))
    monkeypatch.setattr(gr.Blocks, "block_thread", lambda self: calls.append("blocked"))
    wb = build_workbench(
        Settings(
            profile="demo",
            demo_weights_dir=demo_weights,
            device="cpu",
            dtype="float32",
            data_dir=tmp_path / "data",
            port=launch.free_port(),
        )
    )
    try:
        app = launch.serve(wb, block=block, settle=settle)
        app.close()
    finally:
        wb.close()
    assert calls.count(1) == expected
    assert calls.count("blocked") == (1 if block else 0)  # `python app.py` waits for the server as before
