"""Merging a peft LoRA adapter without peft: the merged module computes what peft's `PeftModel` computes (peft saves
the adapter, our merge reads it), for list and regex targets and rsLoRA scaling; options it does not implement are
refused."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from torch import nn

from masc_ui.errors import ModelUnavailableError
from masc_ui.models.lora import is_target, merge_lora


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(nn.ModuleDict({"qkv": nn.Linear(6, 18), "fc1": nn.Linear(6, 6)}) for _ in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block["fc1"](x) + block["qkv"](x)[:, :6]
        return x


def _saved_adapter(tmp_path, **config):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    base = Tiny().eval()
    original = copy.deepcopy(base)
    peft_model = get_peft_model(base, LoraConfig(r=2, lora_alpha=3, lora_dropout=0.3, **config))
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_()  # peft starts B at zero: the merge must matter
    peft_model.save_pretrained(tmp_path)
    return original, peft_model.eval()


@pytest.mark.parametrize(
    "config",
    [
        {"target_modules": ["qkv"]},
        {"target_modules": r"blocks\.1\.(qkv|fc1)"},
        {"target_modules": ["fc1"], "use_rslora": True},
    ],
)
def test_the_merge_computes_what_peft_computes(tmp_path, config):
    original, peft_model = _saved_adapter(tmp_path, **config)
    linear = {name: m for name, m in original.named_modules() if isinstance(m, nn.Linear)}
    settings = merge_lora(linear, tmp_path, what="test")
    x = torch.randn(4, 6)
    with torch.no_grad():
        torch.testing.assert_close(original(x), peft_model(x))
    assert settings["layers"] == sum(is_target(name, config["target_modules"]) for name in linear) > 0


def test_what_it_does_not_implement_is_refused(tmp_path):
    original, _ = _saved_adapter(tmp_path, target_modules=["qkv"])
    linear = {name: m for name, m in original.named_modules() if isinstance(m, nn.Linear)}
    config = json.loads((tmp_path / "adapter_config.json").read_text())
    for option, value, message in (
        ("use_dora", True, "use_dora=True, not supported"),
        ("fan_in_fan_out", True, "fan_in_fan_out=True, not supported"),
        ("layers_to_transform", [0], "layers_to_transform=\\[0\\], not supported"),
        ("bias", "lora_only", "trains biases"),
    ):
        (tmp_path / "adapter_config.json").write_text(json.dumps({**config, option: value}))
        with pytest.raises(ModelUnavailableError, match=message):
            merge_lora(linear, tmp_path, what="test")
    (tmp_path / "adapter_config.json").write_text("{")
    with pytest.raises(ModelUnavailableError, match="not readable JSON"):
        merge_lora(linear, tmp_path, what="test")
    (tmp_path / "adapter_config.json").write_text(json.dumps(config))
    (tmp_path / "adapter_model.safetensors").unlink()
    with pytest.raises(ModelUnavailableError, match="holds neither of adapter_model.safetensors"):
        merge_lora(linear, tmp_path, what="test")


def test_peft_target_matching():
    assert is_target("extractor_list.0.model.blocks.3.attn.qkv", ["qkv"])
    assert not is_target("extractor_list.0.model.blocks.3.attn.qkv_extra", ["qkv"])
    assert is_target("blocks.1.fc1", r"blocks\.1\.fc1") and not is_target("x.blocks.1.fc1", r"blocks\.1\.fc1")
