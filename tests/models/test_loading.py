import threading
import time

import pytest
import torch

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.models.loading import load_pretrained, pick_device, pick_dtype
from masc_ui.models.precision import HardwareReport, precision_policy


def test_pick_device_and_dtype():
    assert pick_device("auto") in ("cpu", "cuda", "mps")
    assert pick_device("cpu") == "cpu"
    plain_cpu = HardwareReport("cpu", cpu_capability="AVX2")
    assert pick_dtype("auto", "cpu", plain_cpu) == torch.float32
    assert pick_dtype("auto", "cuda", HardwareReport("cuda", cuda_bf16=True)) == torch.bfloat16
    assert pick_dtype("auto", "cpu") == precision_policy("auto", "cpu").dtype  # this machine's report
    assert pick_dtype("float16", "cpu") == torch.float16
    with pytest.raises(InputError, match="dtype"):
        pick_dtype("int4", "cpu")
    with pytest.raises(InputError, match="not a torch device"):
        pick_device("gpu-please")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA message")
def test_cuda_without_cuda_is_explained():
    with pytest.raises(InputError, match="CUDA is not available"):
        pick_device("cuda")


def test_missing_local_folder_is_explained(tmp_path):
    from transformers import AutoModel

    with pytest.raises(ModelUnavailableError, match=r"MaSC backbone.*does not exist.*demo-weights"):
        load_pretrained(AutoModel, str(tmp_path / "nope"), what="MaSC backbone")


def test_incomplete_local_folder_is_explained(tmp_path):
    from transformers import AutoModel

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelUnavailableError, match="complete save_pretrained"):
        load_pretrained(AutoModel, str(tmp_path), what="CLIP")


def test_offline_hub_id_is_explained(monkeypatch):
    from transformers import AutoConfig

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as err:
        load_pretrained(AutoConfig, "google/siglip2-so400m-patch16-naflex", what="MaSC backbone")
    msg = str(err.value)
    assert "google/siglip2-so400m-patch16-naflex" in msg and "--profile demo" in msg


def test_registry_loads_once_across_threads():
    calls = []

    def loader():
        calls.append(1)
        time.sleep(0.05)
        return object()

    reg = ModelRegistry()
    got = []
    threads = [threading.Thread(target=lambda: got.append(reg.get(("m", 1), loader))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(g) for g in got}) == 1
    assert reg.loaded() == [("m", 1)]
