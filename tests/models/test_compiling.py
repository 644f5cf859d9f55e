"""`CompiledForward`: torch.compile when asked, the eager module when compilation is unavailable or fails."""

from __future__ import annotations

import pytest
import torch

from masc_ui.models import compiling
from masc_ui.models.compiling import CompiledForward, compile_unavailable


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(8, 4)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return torch.nn.functional.gelu(self.linear(x))


def _failing_backend(graph_module, example_inputs):
    raise RuntimeError("the compiler broke")


def test_disabled_is_the_eager_module():
    module = Tiny()
    forward = CompiledForward(module, "cpu", enabled=False)
    x = torch.randn(3, 8)
    assert torch.equal(forward(x), module(x))
    assert not forward.compiled and forward.fallback_reason is None


def test_a_failing_compiler_falls_back_to_eager_for_good():
    module = Tiny()
    forward = CompiledForward(module, "cpu", backend=_failing_backend)
    assert forward.compiled
    x = torch.randn(3, 8)
    with torch.inference_mode():
        expected = module(x)
        got = forward(x)
        again = forward(x)
    assert torch.equal(got, expected) and torch.equal(again, expected)
    assert not forward.compiled and "compilation failed" in forward.fallback_reason
    assert "the compiler broke" in forward.fallback_reason


def test_unavailable_compilation_is_never_tried(monkeypatch):
    import torch._dynamo

    monkeypatch.setattr(torch._dynamo, "is_dynamo_supported", lambda: False)
    assert compile_unavailable("cpu") == "torch.compile does not support this Python version"
    tried = []
    monkeypatch.setattr(torch, "compile", lambda *a, **k: tried.append(1))
    forward = CompiledForward(Tiny(), "cpu")
    assert not forward.compiled and tried == [] and "Python version" in forward.fallback_reason
    assert forward(torch.randn(2, 8)).shape == (2, 4)


def test_without_a_cpp_compiler_cpu_compilation_is_unavailable(monkeypatch):
    monkeypatch.setattr(compiling.shutil, "which", lambda name: None)
    monkeypatch.delenv("CXX", raising=False)
    assert "no C++ compiler" in compile_unavailable("cpu")
    assert compile_unavailable("cuda") is None  # GPU kernels come from Triton, not a C++ compiler
    monkeypatch.setattr(torch, "compile", None, raising=False)
    monkeypatch.delattr(torch, "compile")
    assert compile_unavailable("cuda") == "this torch has no torch.compile"


def test_a_bad_input_keeps_compilation_on():
    module = Tiny()
    forward = CompiledForward(module, "cpu", backend="eager")  # dynamo's tracing, no code generation
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        forward(torch.randn(3, 5))
    assert forward.compiled and forward.fallback_reason is None
    x = torch.randn(3, 8)
    assert torch.allclose(forward(x), module(x))


def test_masc_falls_back_when_compilation_is_unavailable(demo_weights, monkeypatch):
    """The engine scores exactly as without compilation when it cannot compile."""
    import numpy as np
    from PIL import Image

    from masc_ui.metrics import MaSC

    monkeypatch.setattr(compiling, "compile_unavailable", lambda device: "not here")
    path = str(demo_weights / "siglip2-naflex")
    rng = np.random.default_rng(0)
    image = Image.fromarray(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8))
    mask = np.zeros((60, 80), dtype=np.uint8)
    mask[15:45, 20:60] = 255
    args = (image, mask, image, mask, "a photo of a kitten", "kitten")
    fast = MaSC(path, device="cpu", naflex_max_patches=64, compile=True)
    plain = MaSC(path, device="cpu", naflex_max_patches=64)
    got, expected = fast.score(*args), plain.score(*args)
    assert not fast.backbone.vision.compiled and fast.backbone.vision.fallback_reason == "not here"
    assert (got.cp, got.pf) == (expected.cp, expected.pf)
    assert got.extras["provenance"]["params"]["compile"] is True
    assert "compile" not in expected.extras["provenance"]["params"]


@pytest.mark.slow
def test_inductor_compiles_the_tiny_siglip_tower(demo_weights):
    """The real thing (tens of seconds on a small CPU): inductor with frozen weights, bfloat16."""
    import numpy as np
    from PIL import Image

    from masc_ui.metrics import MaSC

    if compile_unavailable("cpu"):
        pytest.skip(compile_unavailable("cpu"))
    path = str(demo_weights / "siglip2-naflex")
    rng = np.random.default_rng(1)
    image = Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
    mask = np.zeros((64, 64), dtype=np.uint8)
    mask[16:48, 16:48] = 255
    args = (image, mask, image, mask, "a photo of a kitten", "kitten")
    fast = MaSC(path, device="cpu", naflex_max_patches=64, dtype="bfloat16", compile=True)
    eager = MaSC(path, device="cpu", naflex_max_patches=64, dtype="bfloat16")
    got, expected = fast.score(*args), eager.score(*args)
    assert fast.backbone.vision.compiled, fast.backbone.vision.fallback_reason
    assert abs(got.cp - expected.cp) < 2e-2 and abs(got.pf - expected.pf) < 2e-2
