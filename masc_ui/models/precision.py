"""The one precision policy of every backbone (SigLIP2, CLIP family, PickScore, DINO, SAM, SAM 3, ...).

`auto` runs the forward passes in bfloat16 where the hardware computes it fast and in float32 elsewhere:

- CUDA: bfloat16 when the GPU computes it natively (`torch.cuda.is_bf16_supported(including_emulation=False)`,
  compute capability >= 8.0, e.g. A100, H100, RTX 30xx/40xx), float32 on older GPUs;
- CPU: bfloat16 when torch's CPU backend reports AMX tiles or AVX-512-BF16 instructions (read from torch's
  cpuinfo: `torch.cpu._is_amx_tile_supported()`, `torch.cpu._is_avx512_bf16_supported()`), float32 otherwise
  (bfloat16 matmuls without those instructions are emulated and slower than float32);
- MPS and any other device: float32.

`float32` is the exact mode (MaSC equals `masc-metric` within 1e-5 in it); `bfloat16` and `float16` can be
asked for explicitly. The policy decides the dtype the weights and activations have; every score keeps its
cosines in float32 (METRICS.md), and every stored value records the dtype in its provenance, which is part of
its storage key, so bfloat16 and float32 values never mix silently.

The capability report is a plain dataclass so tests (and users who know better) can hand the policy another
machine's report instead of this one's.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import InputError

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
"""The dtypes a user can ask for by name (besides `auto`)."""


@dataclass(frozen=True)
class HardwareReport:
    """What torch reports about the compute units behind one device."""

    device_type: str
    """`cpu`, `cuda`, `mps`, ... (the device string's type)."""
    cuda_bf16: bool = False
    """The CUDA device computes bfloat16 natively (not emulated)."""
    cuda_name: str = ""
    """The CUDA device's name, for the reason text."""
    cpu_capability: str = ""
    """torch's CPU kernel level (`torch.backends.cpu.get_cpu_capability()`: `AVX512`, `AVX2`, `DEFAULT`, ...)."""
    cpu_avx512_bf16: bool = False
    """The CPU has AVX-512-BF16 (`vdpbf16ps`), as torch's cpuinfo reports."""
    cpu_amx: bool = False
    """The CPU has AMX tiles (Intel Sapphire Rapids and later), as torch's cpuinfo reports."""

    @property
    def fast_bf16(self) -> bool:
        """Whether bfloat16 matmuls run in hardware here (faster than float32), so `auto` picks bfloat16."""
        if self.device_type == "cuda":
            return self.cuda_bf16
        if self.device_type == "cpu":
            return self.cpu_amx or self.cpu_avx512_bf16
        return False

    def describe(self) -> str:
        """One phrase: what the device offers for bfloat16."""
        if self.device_type == "cuda":
            name = self.cuda_name or "the GPU"
            return f"{name} computes bfloat16 natively" if self.cuda_bf16 else f"{name} has no native bfloat16"
        if self.device_type == "cpu":
            found = [n for n, ok in (("AMX", self.cpu_amx), ("AVX-512-BF16", self.cpu_avx512_bf16)) if ok]
            level = f" (kernels: {self.cpu_capability})" if self.cpu_capability else ""
            return (f"the CPU has {' and '.join(found)}{level}" if found
                    else f"the CPU has neither AMX nor AVX-512-BF16{level}")
        return f"{self.device_type} is not covered by the bfloat16 policy"


def hardware_report(device: str) -> HardwareReport:
    """Ask torch what `device` (`cpu`, `cuda`, `cuda:1`, `mps`, ...) computes fast. Reads, never computes."""
    device_type = torch.device(device).type
    if device_type == "cuda":
        if not torch.cuda.is_available():
            return HardwareReport("cuda")
        index = torch.device(device).index
        index = torch.cuda.current_device() if index is None else index
        with torch.cuda.device(index):
            native = bool(torch.cuda.is_bf16_supported(including_emulation=False))
        return HardwareReport("cuda", cuda_bf16=native, cuda_name=torch.cuda.get_device_name(index))
    if device_type == "cpu":
        return HardwareReport("cpu", cpu_capability=torch.backends.cpu.get_cpu_capability(),
                              cpu_avx512_bf16=_cpu_flag("_is_avx512_bf16_supported"),
                              cpu_amx=_cpu_flag("_is_amx_tile_supported"))
    return HardwareReport(device_type)


def _cpu_flag(name: str) -> bool:
    """One of torch's cpuinfo queries (`torch.cpu._is_*_supported`); False when this torch lacks it."""
    query = getattr(torch.cpu, name, None)
    return bool(query()) if callable(query) else False


@dataclass(frozen=True)
class Precision:
    """The dtype the policy chose for one device, and why."""

    dtype: torch.dtype
    reason: str
    """E.g. `auto: the CPU has AVX-512-BF16 (kernels: AVX512)`, `set explicitly; the exact mode`."""

    @property
    def name(self) -> str:
        """`float32`, `bfloat16` or `float16` (the form stored in provenance)."""
        return dtype_name(self.dtype)

    @property
    def exact(self) -> bool:
        """True in float32, the mode whose MaSC scores equal masc-metric's within 1e-5."""
        return self.dtype == torch.float32

    def describe(self) -> str:
        """`bfloat16 (auto: the CPU has AVX-512-BF16 (kernels: AVX512))`."""
        return f"{self.name} ({self.reason})"


def precision_policy(preference: str | torch.dtype | None, device: str,
                     hardware: HardwareReport | None = None) -> Precision:
    """The precision for `device`: `auto`/None/"" -> bfloat16 where `hardware` (default: what torch reports for
    `device`) computes it fast, float32 elsewhere; a dtype or its name -> that dtype.

    Raises `InputError` for an unknown dtype name.
    """
    if isinstance(preference, torch.dtype):
        if preference not in DTYPES.values():
            raise InputError(f"dtype {preference} is not supported; use one of auto, {', '.join(DTYPES)}")
        return Precision(preference, _asked(preference))
    if preference in (None, "", "auto"):
        report = hardware if hardware is not None else hardware_report(device)
        if report.fast_bf16:
            return Precision(torch.bfloat16, f"auto: {report.describe()}")
        return Precision(torch.float32, f"auto: {report.describe()}")
    if not isinstance(preference, str) or preference not in DTYPES:
        raise InputError(f"dtype {preference!r} is not supported; use one of auto, {', '.join(DTYPES)}")
    return Precision(DTYPES[preference], _asked(DTYPES[preference]))


def _asked(dtype: torch.dtype) -> str:
    return "set explicitly; the exact mode" if dtype == torch.float32 else "set explicitly"


def dtype_name(dtype: torch.dtype) -> str:
    """`torch.bfloat16` -> `bfloat16`."""
    return str(dtype).removeprefix("torch.")
