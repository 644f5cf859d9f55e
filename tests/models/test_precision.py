"""The precision policy: which dtype `auto` picks on each kind of hardware (from a faked capability report,
never from a faked computation), explicit choices, the report torch gives on this machine."""
from __future__ import annotations

import pytest
import torch

from masc_ui.errors import InputError
from masc_ui.models import precision
from masc_ui.models.precision import HardwareReport, dtype_name, hardware_report, precision_policy

CASES = [
    (HardwareReport("cuda", cuda_bf16=True, cuda_name="NVIDIA A100"), torch.bfloat16, "A100 computes bfloat16"),
    (HardwareReport("cuda", cuda_bf16=False, cuda_name="Tesla T4"), torch.float32, "T4 has no native bfloat16"),
    (HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True, cpu_amx=True), torch.bfloat16,
     "AMX and AVX-512-BF16"),
    (HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True), torch.bfloat16, "AVX-512-BF16"),
    (HardwareReport("cpu", cpu_capability="AVX512", cpu_amx=True), torch.bfloat16, "has AMX"),
    (HardwareReport("cpu", cpu_capability="AVX512"), torch.float32, "neither AMX nor AVX-512-BF16"),
    (HardwareReport("cpu", cpu_capability="AVX2"), torch.float32, "kernels: AVX2"),
    (HardwareReport("cpu", cpu_capability="DEFAULT"), torch.float32, "neither"),
    (HardwareReport("mps"), torch.float32, "mps is not covered"),
]


@pytest.mark.parametrize("report, dtype, why", CASES, ids=[f"{r.device_type}-{dtype_name(d)}-{i}"
                                                           for i, (r, d, _) in enumerate(CASES)])
def test_auto_follows_the_capability_report(report, dtype, why):
    chosen = precision_policy("auto", report.device_type, report)
    assert chosen.dtype == dtype
    assert why in chosen.reason and chosen.reason.startswith("auto: ")
    assert chosen.exact == (dtype == torch.float32)
    assert precision_policy(None, report.device_type, report).dtype == dtype
    assert precision_policy("", report.device_type, report).dtype == dtype


def test_the_model_name_plays_no_part():
    """Only the hardware decides: the same report gives the same choice whatever is loaded later."""
    report = HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True)
    assert {precision_policy("auto", "cpu", report).dtype for _ in range(3)} == {torch.bfloat16}


def test_auto_reads_this_machines_report(monkeypatch):
    """Without a report the policy asks torch (`hardware_report`), and only that: faking the report changes it."""
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_amx=True))
    assert precision_policy("auto", "cpu").dtype == torch.bfloat16
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_capability="AVX2"))
    assert precision_policy("auto", "cpu").dtype == torch.float32


def test_cpu_report_comes_from_torch_cpuinfo(monkeypatch):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    report = hardware_report("cpu")
    assert report.cpu_avx512_bf16 and not report.cpu_amx and report.fast_bf16
    assert report.cpu_capability == torch.backends.cpu.get_cpu_capability()
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    assert not hardware_report("cpu").fast_bf16
    monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported")  # an older torch without the query: no AMX
    assert not hardware_report("cpu").cpu_amx


def test_cuda_report_without_cuda_is_not_fast():
    if torch.cuda.is_available():
        pytest.skip("checks the report of a machine without CUDA")
    report = hardware_report("cuda")
    assert report.device_type == "cuda" and not report.fast_bf16
    assert precision_policy("auto", "cuda").dtype == torch.float32


def test_explicit_choices_win_over_the_hardware():
    fast = HardwareReport("cpu", cpu_amx=True)
    slow = HardwareReport("cpu", cpu_capability="AVX2")
    assert precision_policy("float32", "cpu", fast).dtype == torch.float32
    assert precision_policy("float32", "cpu", fast).exact
    assert "exact mode" in precision_policy("float32", "cpu", fast).reason
    assert precision_policy("bfloat16", "cpu", slow).dtype == torch.bfloat16
    assert precision_policy("float16", "cpu", slow).dtype == torch.float16
    assert precision_policy(torch.bfloat16, "cpu", slow).dtype == torch.bfloat16
    assert precision_policy("bfloat16", "cpu", slow).describe() == "bfloat16 (set explicitly)"


@pytest.mark.parametrize("bad", ["int8", "fp32", 3, torch.float64])
def test_unknown_dtypes_are_refused(bad):
    with pytest.raises(InputError, match="dtype .* not supported; use one of auto, float32, bfloat16, float16"):
        precision_policy(bad, "cpu")
