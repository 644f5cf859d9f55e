"""GME-Qwen2-VL embeddings and GmeScore on the tiny demo checkpoint, against plain transformers calls."""

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import linspace_indices, open_image, open_video, read_frames
from masc_ui.metrics.registry import get_scorer, get_spec
from masc_ui.metrics.video.gme import (
    GME_DEFAULT_INSTRUCTION,
    GME_QUERY_INSTRUCTION,
    IMAGE_CONTENT,
    gme_prompt,
    load_gme,
)
from masc_ui.metrics.video.gmescore import gme_score
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.models.loaded_models import ModelRegistry
from tests.video_files import encode_video, synthetic_frames


@pytest.fixture(scope="module")
def gme_dir(demo_weights):
    return demo_weights / "gme-qwen2-vl"


@pytest.fixture(scope="module")
def embedder(gme_dir):
    from masc_ui.settings import Settings

    return load_gme(str(gme_dir), Settings(device="cpu", dtype="float32"))


@pytest.fixture(scope="module")
def reference(gme_dir):
    """The independent computation: transformers' Qwen2-VL model, processor and chat template, used as documented."""
    from transformers import AutoImageProcessor, AutoTokenizer, AutoVideoProcessor, Qwen2VLModel, Qwen2VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    model = Qwen2VLModel.from_pretrained(gme_dir).eval()
    processor = Qwen2VLProcessor(
        image_processor=AutoImageProcessor.from_pretrained(
            gme_dir, backend="pil", size={"shortest_edge": 256 * 28 * 28, "longest_edge": 1280 * 28 * 28}
        ),
        tokenizer=AutoTokenizer.from_pretrained(gme_dir),
        video_processor=AutoVideoProcessor.from_pretrained(gme_dir),
        chat_template=AutoTokenizer.from_pretrained(gme_dir).chat_template,
    )

    def fetch(img: Image.Image) -> Image.Image:
        h, w = smart_resize(img.height, img.width, factor=28, min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28)
        return img.resize((w, h), Image.Resampling.BICUBIC)

    @torch.inference_mode()
    def embed(text: str | None = None, image: Image.Image | None = None, one_d: bool = False) -> np.ndarray:
        if image is None:
            messages = [
                {"role": "system", "content": GME_QUERY_INSTRUCTION},
                {"role": "user", "content": [{"type": "text", "text": text}]},
            ]
        else:
            messages = [
                {"role": "system", "content": GME_DEFAULT_INSTRUCTION},
                {"role": "user", "content": [{"type": "image"}]},
            ]
        prompt = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) + "<|endoftext|>"
        inputs = processor(text=[prompt], images=None if image is None else [fetch(image)], return_tensors="pt")
        if one_d:  # the release's positions: 0..L-1 on every axis
            inputs["position_ids"] = torch.arange(inputs["input_ids"].shape[1])[None]
        model.rope_deltas = None
        hidden = model(**inputs).last_hidden_state[0, -1]
        return torch.nn.functional.normalize(hidden, dim=-1).numpy()

    return embed


def _photo(seed: int, size=(90, 60)) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8))


def test_prompt_is_the_checkpoints_chat_template_plus_endoftext(gme_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gme_dir)
    text = [{"role": "system", "content": GME_QUERY_INSTRUCTION}, {"role": "user", "content": "a red cup"}]
    image = [{"role": "user", "content": [{"type": "image"}]}]  # the template's default system message
    assert tok.apply_chat_template(text, tokenize=False, add_generation_prompt=True) + "<|endoftext|>" == gme_prompt(
        GME_QUERY_INSTRUCTION, "a red cup"
    )
    assert tok.apply_chat_template(image, tokenize=False, add_generation_prompt=True) + "<|endoftext|>" == gme_prompt(
        GME_DEFAULT_INSTRUCTION, IMAGE_CONTENT
    )


def test_embeddings_match_transformers_within_1e_5(embedder, reference):
    texts = ["a red cup on a table", "a dog"]
    ours = embedder.text_embeddings(texts)
    for row, text in zip(ours, texts):
        np.testing.assert_allclose(row, reference(text=text), atol=1e-5)
    images = [_photo(1), _photo(2, (40, 300)), _photo(3, (700, 500))]
    ours = embedder.image_embeddings(images)
    assert ours.shape == (3, 32) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    for row, image in zip(ours, images):
        np.testing.assert_allclose(row, reference(image=image), atol=1e-5)


def test_multimodal_positions_differ_from_the_releases_1d_positions_only_for_images(embedder, reference):
    np.testing.assert_allclose(reference(text="a dog", one_d=True), embedder.text_embeddings(["a dog"])[0], atol=1e-5)
    one_d = reference(image=_photo(4), one_d=True)
    assert np.abs(one_d - embedder.image_embeddings([_photo(4)])[0]).max() > 1e-3


def test_batched_equals_one_at_a_time_and_cache_hits(embedder, gme_dir):
    from masc_ui.settings import Settings

    images = [open_image(_photo(10 + i, (60 + 30 * i, 80))) for i in range(4)]
    together = embedder.image_embeddings(images)
    fresh = load_gme(str(gme_dir), Settings(device="cpu", dtype="float32"))
    alone = np.stack([fresh.image_embeddings([img])[0] for img in images])
    assert fresh.image_forwards == 4
    np.testing.assert_allclose(together, alone, atol=1e-5)
    before = embedder.image_forwards
    embedder.image_embeddings(images)
    assert embedder.image_forwards == before
    texts = ["one", "a much longer text about a cup on a table in the sun"]
    np.testing.assert_allclose(
        embedder.text_embeddings(texts, "x"),
        np.stack([embedder.text_embeddings([t], "x")[0] for t in texts[::-1]][::-1]),
        atol=1e-5,
    )


def test_gme_score_is_the_mean_frame_cosine(embedder, reference):
    frames = [_photo(20 + i) for i in range(3)]
    value, per_frame = gme_score(embedder, iter(frames), "a cup")
    text = reference(text="a cup")
    expected = [float(reference(image=f) @ text) for f in frames]
    np.testing.assert_allclose(per_frame, expected, atol=1e-5)
    assert value == pytest.approx(np.mean(expected), abs=1e-5)


def test_gmescore_scorer_on_a_video(demo_settings, embedder):
    video = open_video(encode_video(synthetic_frames(45), "webm"), name="clip")
    scorer = get_scorer("gmescore", demo_settings, ModelRegistry())
    [value] = scorer.score([VideoSample(video=video, prompt="  a green square  ")])
    indices = linspace_indices(45, 32)
    assert value.extras["frames"] == {"rule": "linspace", "count": 32, "frame_count": 45, "indices": indices}
    frames = [f.image for f in read_frames(video, indices)]
    expected = embedder.image_embeddings(frames) @ embedder.text_embeddings(["a green square"])[0]
    np.testing.assert_allclose(value.extras["per_frame"], expected, atol=1e-5)
    assert value.value == pytest.approx(float(np.mean(expected)), abs=1e-6) and value.reason is None
    assert get_spec("gmescore").in_range(value.value) and value.extras["prompt_text"] == "a green square"
    assert value.provenance["params"]["gme_positions"] == "mrope" and value.provenance["params"]["frames"] == 32


def test_gmescore_inputs_are_checked(demo_settings):
    from storage.record_types import Provenance

    video = open_video(encode_video(synthetic_frames(4), "mp4"))
    scorer = get_scorer("gmescore", demo_settings, ModelRegistry())
    with pytest.raises(InputError, match="gmescore needs prompt, which sample 0 lacks: give the generation prompt"):
        scorer.score([VideoSample(video=video, prompt=" ")])
    [nan] = scorer.score([VideoSample(video=video)], missing="nan")
    assert np.isnan(nan.value) and nan.reason == "gmescore needs prompt, which sample 0 lacks"
    with pytest.raises(InputError, match="gmescore scores videos: sample 0 is a str"):
        scorer.score(["clip.mp4"])
    Provenance.from_mapping(scorer.provenance())
    assert scorer.score([]) == []


def test_gme_loading_errors_name_the_setting(demo_weights):
    from masc_ui.settings import Settings

    with pytest.raises(ModelUnavailableError, match="GME embedder .*MASC_GME_MODEL.* is a clip checkpoint"):
        load_gme(str(demo_weights / "clip"), Settings(device="cpu"))
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        load_gme(str(demo_weights / "nope"), Settings(device="cpu"))
