"""The status line says which precision is in use and why (the precision policy's reason)."""

from __future__ import annotations

from masc_ui.models import precision
from masc_ui.models.precision import HardwareReport
from masc_ui.workbench import build_workbench


def test_status_line_gives_the_dtype_and_the_policys_reason(demo_settings, monkeypatch):
    monkeypatch.setattr(
        precision,
        "hardware_report",
        lambda device: HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True),
    )
    line = build_workbench(demo_settings.replace(dtype="auto")).status().line()
    assert "dtype: bfloat16 (auto: the CPU has AVX-512-BF16 (kernels: AVX512))" in line
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_capability="AVX2"))
    line = build_workbench(demo_settings.replace(dtype="auto")).status().line()
    assert "dtype: float32 (auto: the CPU has neither AMX nor AVX-512-BF16 (kernels: AVX2))" in line
    line = build_workbench(demo_settings.replace(dtype="float32")).status().line()
    assert "dtype: float32 (set explicitly; the exact mode)" in line
