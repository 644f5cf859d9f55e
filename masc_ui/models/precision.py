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
cosines, softmaxes and outputs in float32 (METRICS.md), inputs are cast to the model's dtype, and the small heads
whose output is the score itself (a reward or regression head, a matching head, a detector's class/box heads) run in
float32 whatever the policy says (`keep_float32`, listed in provenance params as `float32_parts`). Every stored
value records the dtype in its provenance, which is part of its storage key, so bfloat16 and float32 values never
mix silently.

The capability report is a plain dataclass so tests (and users who know better) can hand the policy another
machine's report instead of this one's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
from torch import nn

from ..errors import InputError

ModuleT = TypeVar("ModuleT", bound=nn.Module)

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
            return (
                f"the CPU has {' and '.join(found)}{level}"
                if found
                else f"the CPU has neither AMX nor AVX-512-BF16{level}"
            )
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
        return HardwareReport(
            "cpu",
            cpu_capability=torch.backends.cpu.get_cpu_capability(),
            cpu_avx512_bf16=_cpu_flag("_is_avx512_bf16_supported"),
            cpu_amx=_cpu_flag("_is_amx_tile_supported"),
        )
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


def precision_policy(
    preference: str | torch.dtype | None, device: str, hardware: HardwareReport | None = None
) -> Precision:
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


FLOAT32_PART = "_masc_float32_part"


def cast_model(
    model: ModuleT, device: str | torch.device, dtype: torch.dtype, *, float32_parts: Sequence[str] = ()
) -> ModuleT:
    """`model` moved to `device` and cast to `dtype`, except its submodules named in `float32_parts` (dotted names,
    e.g. `head`, `class_head`), which keep the weights they have now and run in float32 (`keep_float32`).

    Give it the model as loaded in float32, so that the kept parts hold the checkpoint's own values, not values
    rounded to `dtype` and back. Returns `model` (changed in place).
    """
    kept = {name: model.get_submodule(name) for name in float32_parts}
    for name in kept:
        model.set_submodule(name, nn.Identity())  # out of the way of the cast below
    model.to(device=device, dtype=dtype)
    for name, part in kept.items():
        model.set_submodule(name, keep_float32(part.to(device)))
    return model


def keep_float32(module: nn.Module) -> nn.Module:
    """Run `module` in float32 whatever dtype the rest of its model runs in: for small, numerically sensitive parts
    whose output IS the score or decides it (a reward or regression head, a matching head, a detector's class and box
    heads), where bfloat16 would round the result itself to 3 significant digits for a negligible saving.

    Its parameters and buffers become float32 (values already rounded to a lower precision stay rounded: see
    `cast_model`), and a forward pre-hook casts the floating-point tensors it receives (positional and keyword) to
    the dtype of its own parameters, so it takes the bfloat16 activations of the model around it and returns float32.
    Idempotent; returns `module`.
    """
    module.float()
    if not getattr(module, FLOAT32_PART, False):
        module.register_forward_pre_hook(_cast_inputs, with_kwargs=True)
        setattr(module, FLOAT32_PART, True)
    return module


def float32_parts(model: nn.Module) -> list[str]:
    """The names of `model`'s submodules kept in float32 by `keep_float32` (for provenance)."""
    return [name for name, module in model.named_modules() if getattr(module, FLOAT32_PART, False)]


def _cast_inputs(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    dtype = next((p.dtype for p in module.parameters() if p.is_floating_point()), torch.float32)

    def cast(x: Any) -> Any:
        return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


def precision_params(dtype: torch.dtype, float32_parts: list[str]) -> dict[str, Any]:
    """Provenance params saying which parts of a model ran in float32 when the rest did not: `{}` in float32 (the
    exact mode's provenance, and so its storage key, stays as it was), else `{"float32_parts": [...]}`."""
    return {} if dtype == torch.float32 or not float32_parts else {"float32_parts": sorted(float32_parts)}


LOGIT_CHUNK_ROWS = 8192
"""Rows of an LM head upcast at a time by `float32_logits` (8192 x 4096 float32 = 128 MiB transient)."""


class HeadInput:
    """Records what `head` (a model's LM head, an `nn.Linear`) receives while the `with` block runs: `value` is the
    input of its last call. For `float32_logits`."""

    def __init__(self, head: nn.Linear) -> None:
        self.head = head
        self.value: torch.Tensor | None = None
        self._hook: Any = None

    def __enter__(self) -> HeadInput:
        self._hook = self.head.register_forward_pre_hook(self._record)
        return self

    def __exit__(self, *exc: object) -> None:
        self._hook.remove()

    def _record(self, module: nn.Module, args: tuple) -> None:
        self.value = args[0]


def float32_logits(
    head: nn.Linear, hidden: torch.Tensor, *, softcap: float | None = None, chunk_rows: int = LOGIT_CHUNK_ROWS
) -> torch.Tensor:
    """`head(hidden)` computed in float32, (..., out_features) float32: the logits of a language model whose head runs
    in bfloat16, without bfloat16's rounding of the logits themselves (a logit near 30 would be a multiple of 0.125,
    moving a softmax probability by up to 6%). The head's weights are upcast `chunk_rows` rows at a time, so no
    float32 copy of a large head is kept. `softcap`: the model's final logit soft-capping (Gemma's
    `final_logit_softcapping`: cap * tanh(logits / cap)), None when it has none."""
    x = hidden.float()
    parts = []
    for start in range(0, head.out_features, chunk_rows):
        bias = None if head.bias is None else head.bias[start : start + chunk_rows].float()
        parts.append(torch.nn.functional.linear(x, head.weight[start : start + chunk_rows].float(), bias))
    logits = torch.cat(parts, dim=-1)
    return logits if softcap is None else torch.tanh(logits / softcap) * softcap


def model_logits(
    forward: Callable[[], Any], head: nn.Linear, *, last_only: bool = False, softcap: float | None = None
) -> torch.Tensor:
    """The logits of `forward()`, a forward pass of the model whose LM head is `head`: the model's own `.logits` when
    the head is float32 (the exact mode's numbers, untouched), else recomputed in float32 from the head's input
    (`float32_logits`). `last_only`: only the last position's, (B, V) instead of (B, L, V)."""
    if head.weight.dtype == torch.float32:
        logits = forward().logits
        return logits[:, -1] if last_only else logits
    with HeadInput(head) as seen:
        forward()
    hidden = seen.value[:, -1] if last_only else seen.value
    return float32_logits(head, hidden, softcap=softcap)
