"""SamService's background encoding (encode on upload) and its precision: runs once per image, the click uses
it, cancellable before and while it runs; the image encoder in bfloat16 under the policy."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from masc_ui.errors import InputError
from masc_ui.imaging import open_image
from masc_ui.models import precision
from masc_ui.models.precision import HardwareReport
from masc_ui.segmentation import SamService


@pytest.fixture()
def service(tiny_sam_checkpoint):
    svc = SamService("vit_tiny", tiny_sam_checkpoint, "cpu", cache_size=4, dtype="float32")
    yield svc
    svc.close()


class EncoderGate:
    """Counts image-encoder passes (its patch embedding runs once per pass, in the foreground and the background
    paths alike) and can hold a pass inside its first block until `release()`. No timeouts (no wall-clock limits
    in tests): `entered` is always set by the job the test just started."""

    def __init__(self, service: SamService, hold: bool = False) -> None:
        self.runs = 0
        self.entered = threading.Event()
        self._go = threading.Event()
        if not hold:
            self._go.set()
        encoder = service.model.image_encoder
        self._handles = [
            encoder.patch_embed.register_forward_pre_hook(self._count),
            encoder.blocks[0].register_forward_pre_hook(self._hold),
        ]

    def _count(self, *_: object) -> None:
        self.runs += 1

    def _hold(self, *_: object) -> None:
        self.entered.set()
        self._go.wait()

    def release(self) -> None:
        self._go.set()

    def close(self) -> None:
        self.release()
        for handle in self._handles:
            handle.remove()


def test_background_encoding_runs_once_and_the_click_uses_it(service, make_image):
    gate = EncoderGate(service)
    image = make_image(120, 80, seed=1)
    job = service.encode_in_background(image)
    again = service.encode_in_background(image.copy())  # same pixels: the same job, or its finished result
    embedding = job.result()
    assert embedding is not None and again.result() is embedding
    assert job.done() and not job.cancelled()
    finished = service.encode_in_background(image)  # already cached: a finished job, no new pass
    assert finished.done() and finished.result() is embedding
    misses = service.cache_info().misses
    service.predict(image, points=[(10, 10, 1)])
    assert gate.runs == 1 and service.cache_info().misses == misses  # the click found the embedding
    gate.close()


def test_background_embedding_equals_the_foreground_one(tiny_sam_checkpoint, service, make_image):
    image = make_image(90, 140, seed=2)
    background = service.encode_in_background(image).result()
    fresh = SamService("vit_tiny", tiny_sam_checkpoint, "cpu", dtype="float32")
    foreground = fresh.embed(image)
    assert torch.equal(background.features, foreground.features)
    assert background.input_size == foreground.input_size and background.original_size == (140, 90)


def test_a_click_during_the_encoding_waits_for_it(service, make_image):
    gate = EncoderGate(service, hold=True)
    image = make_image(100, 100, seed=3)
    job = service.encode_in_background(image)
    gate.entered.wait()
    clicked = []
    click = threading.Thread(target=lambda: clicked.append(service.predict(image, points=[(5, 5, 1)])))
    click.start()
    gate.release()
    click.join()
    assert job.result() is not None and len(clicked) == 1
    assert gate.runs == 1  # one encoder pass served both
    gate.close()


def test_cancel_while_running_stops_and_caches_nothing(service, make_image):
    gate = EncoderGate(service, hold=True)
    image = make_image(64, 48, seed=4)
    job = service.encode_in_background(image)
    gate.entered.wait()
    job.cancel()
    gate.release()
    assert job.result() is None and job.cancelled() and job.done()
    assert len(service._cache) == 0
    service.predict(image, points=[(3, 3, 1)])  # a later click encodes the image itself
    assert gate.runs == 2 and len(service._cache) == 1
    gate.close()


def test_cancel_before_start_never_runs(service, make_image):
    gate = EncoderGate(service, hold=True)
    first, second = make_image(64, 48, seed=5), make_image(64, 48, seed=6)
    busy = service.encode_in_background(first)
    gate.entered.wait()
    queued = service.encode_in_background(second)  # one worker: waits behind `busy`
    queued.cancel()
    assert queued.cancelled() and queued.result() is None
    gate.release()
    assert busy.result() is not None
    assert gate.runs == 1  # the queued image was never encoded
    assert service.encode_in_background(second).result() is not None  # asking again after a cancel works
    assert gate.runs == 2
    gate.close()


def test_cancel_background_and_close(service, make_image):
    gate = EncoderGate(service, hold=True)
    jobs = [service.encode_in_background(make_image(40, 40, seed=s)) for s in (7, 8)]
    gate.entered.wait()
    service.cancel_background()
    gate.release()
    assert all(job.result() is None and job.cancelled() for job in jobs)
    service.close()
    assert service.encode_in_background(make_image(40, 40, seed=9)).result() is not None  # a new worker
    gate.close()


def test_input_images_share_one_encoding(service, make_image):
    gate = EncoderGate(service)
    upload = open_image(make_image(80, 60, seed=10))
    service.encode_in_background(upload).result()
    service.predict(upload, points=[(5, 5, 1)])  # keyed by the upload's sha256
    service.predict(upload.pixels, points=[(5, 5, 1)])  # the same pixels: the same content hash
    assert gate.runs == 1
    with pytest.raises(InputError, match="image"):
        service.encode_in_background(b"not an image")
    gate.close()


def test_a_failing_load_reaches_the_caller(tmp_path, make_image):
    from masc_ui.errors import ModelUnavailableError

    broken = SamService("vit_tiny", tmp_path / "missing.pth", "cpu", dtype="float32")
    job = broken.encode_in_background(make_image(32, 32))
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        job.result()
    broken.close()


def test_bfloat16_encoder_float32_decoder(tiny_sam_checkpoint, service, make_image):
    fast = SamService("vit_tiny", tiny_sam_checkpoint, "cpu", dtype="bfloat16")
    sam = fast.model
    assert {p.dtype for p in sam.image_encoder.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in sam.mask_decoder.parameters()} == {torch.float32}
    assert {p.dtype for p in sam.prompt_encoder.parameters()} == {torch.float32}
    assert fast.provenance["dtype"] == "bfloat16" and service.provenance["dtype"] == "float32"
    image = make_image(120, 90, seed=13)
    emb = fast.embed(image)
    assert emb.features.dtype == torch.float32
    exact = service.embed(image).features
    assert fast.encode_in_background(image).result() is emb
    cos = torch.nn.functional.cosine_similarity(emb.features.flatten(), exact.flatten(), dim=0)
    assert float(cos) > 0.999  # the same embedding up to bfloat16 rounding
    pred = fast.predict(image, points=[(60, 45, 1)])
    assert pred.masks[0].shape == (90, 120) and pred.low_res_logits.dtype == np.float32


def test_auto_follows_the_capability_report(tiny_sam_checkpoint, monkeypatch):
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_avx512_bf16=True))
    assert SamService("vit_tiny", tiny_sam_checkpoint, "cpu").precision.dtype == torch.bfloat16
    monkeypatch.setattr(precision, "hardware_report", lambda device: HardwareReport("cpu", cpu_capability="AVX2"))
    assert SamService("vit_tiny", tiny_sam_checkpoint, "cpu").precision.dtype == torch.float32


def test_fused_attention_computes_the_original_encoder(service, tiny_sam_checkpoint, make_image):
    """SdpaAttention (used by the service) against segment_anything's own Attention on the same weights."""
    from segment_anything.modeling.image_encoder import Attention

    from masc_ui.segmentation import build_sam
    from masc_ui.segmentation.sam_attention import SdpaAttention, use_sdpa_attention

    original = build_sam("vit_tiny", tiny_sam_checkpoint)
    assert all(isinstance(b.attn, Attention) for b in original.image_encoder.blocks)
    assert all(isinstance(b.attn, SdpaAttention) for b in service.model.image_encoder.blocks)
    assert service.model.image_encoder.state_dict().keys() == original.image_encoder.state_dict().keys()
    x = torch.randn(1, 3, 256, 256)
    with torch.inference_mode():
        expected = original.image_encoder(x)
        got = service.model.image_encoder(x)
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    assert use_sdpa_attention(service.model.image_encoder) == 0  # already swapped
