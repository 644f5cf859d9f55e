"""The precision policy: which dtype `auto` picks on each kind of hardware (from a faked capability report,
never from a faked computation), explicit choices, the report torch gives on this machine."""

from __future__ import annotations

import pytest
import torch

from masc_ui.errors import InputError
from masc_ui.models import precision
from masc_ui.models.precision import (
    HardwareReport,
    cast_model,
    dtype_name,
    float32_logits,
    float32_parts,
    hardware_report,
    keep_float32,
    model_logits,
    precision_params,
    precision_policy,
)

CASES = [
    (HardwareReport("cuda", cuda_bf16=True, cuda_name="NVIDIA A100"), torch.bfloat16, "A100 computes bfloat16"),
    (HardwareReport("cuda", cuda_bf16=False, cuda_name="Tesla T4"), torch.float32, "T4 has no native bfloat16"),
    (
        HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True, cpu_amx=True),
        torch.bfloat16,
        "AMX and AVX-512-BF16",
    ),
    (HardwareReport("cpu", cpu_capability="AVX512", cpu_avx512_bf16=True), torch.bfloat16, "AVX-512-BF16"),
    (HardwareReport("cpu", cpu_capability="AVX512", cpu_amx=True), torch.bfloat16, "has AMX"),
    (HardwareReport("cpu", cpu_capability="AVX512"), torch.float32, "neither AMX nor AVX-512-BF16"),
    (HardwareReport("cpu", cpu_capability="AVX2"), torch.float32, "kernels: AVX2"),
    (HardwareReport("cpu", cpu_capability="DEFAULT"), torch.float32, "neither"),
    (HardwareReport("mps"), torch.float32, "mps is not covered"),
]


@pytest.mark.parametrize(
    "report, dtype, why", CASES, ids=[f"{r.device_type}-{dtype_name(d)}-{i}" for i, (r, d, _) in enumerate(CASES)]
)
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


def test_cast_model_keeps_a_head_with_its_float32_weights_inside_a_bfloat16_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
    exact_head = torch.nn.Linear(8, 1)
    exact_head.load_state_dict(model[2].state_dict())
    cast_model(model, "cpu", torch.bfloat16, float32_parts=("2",))
    keep_float32(model[2])  # idempotent: still one hook
    assert model[0].weight.dtype == torch.bfloat16 and model[2].weight.dtype == torch.float32
    assert torch.equal(model[2].weight, exact_head.weight)  # the float32 values, not bfloat16-rounded ones
    assert len(model[2]._forward_pre_hooks) == 1
    x = torch.randn(4, 16).to(torch.bfloat16)
    out = model(x)
    assert out.dtype == torch.float32
    assert torch.equal(out, exact_head(model[1](model[0](x)).float()))  # bfloat16 activations, a float32 head
    assert float32_parts(model) == ["2"]


def test_keep_float32_follows_its_own_parameters_when_cast_again():
    head = keep_float32(torch.nn.Linear(4, 2))
    head.to(torch.bfloat16)  # someone casts the whole model afterwards: inputs follow the head's dtype
    assert head(torch.randn(3, 4)).dtype == torch.bfloat16
    assert head(torch.randn(3, 4).to(torch.bfloat16)).dtype == torch.bfloat16


def test_precision_params_leave_the_exact_modes_provenance_as_it_was():
    assert precision_params(torch.float32, ["head"]) == {}
    assert precision_params(torch.bfloat16, []) == {}
    assert precision_params(torch.bfloat16, ["b", "a"]) == {"float32_parts": ["a", "b"]}


class _TinyLm(torch.nn.Module):
    """An embedding, a mixing layer and an LM head: `forward(ids).logits` (B, L, V)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(10, 16)
        self.mix = torch.nn.Linear(16, 16)
        self.lm_head = torch.nn.Linear(16, 300, bias=False)

    def forward(self, ids: torch.Tensor):
        from types import SimpleNamespace

        return SimpleNamespace(logits=self.lm_head(self.mix(self.embed(ids))))


def test_model_logits_recompute_a_bfloat16_heads_output_in_float32():
    torch.manual_seed(0)
    lm = _TinyLm()
    with torch.no_grad():
        lm.lm_head.weight.mul_(40)  # logits of tens, where bfloat16's spacing is 0.125-0.25
    ids = torch.tensor([[1, 2, 3], [4, 5, 6]])
    exact = model_logits(lambda: lm(ids), lm.lm_head)
    assert torch.equal(exact, lm(ids).logits)  # float32 model: its own logits, untouched
    lm.to(torch.bfloat16)
    hidden = lm.mix(lm.embed(ids))
    expected = torch.nn.functional.linear(hidden.float(), lm.lm_head.weight.float())
    got = model_logits(lambda: lm(ids), lm.lm_head)
    assert got.dtype == torch.float32 and torch.allclose(got, expected, rtol=1e-6, atol=1e-5)
    assert not torch.equal(lm(ids).logits.float(), expected)  # what the bfloat16 head itself gives is rounded
    last = model_logits(lambda: lm(ids), lm.lm_head, last_only=True)
    assert torch.allclose(last, expected[:, -1], rtol=1e-6, atol=1e-5)
    chunked = float32_logits(lm.lm_head, hidden, chunk_rows=7, softcap=30.0)
    assert torch.allclose(chunked, torch.tanh(expected / 30.0) * 30.0, rtol=1e-6, atol=1e-5)
