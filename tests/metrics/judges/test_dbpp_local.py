"""The DreamBench++ judge answered by a local chat VLM (the tiny demo Qwen2.5-VL): the conversation the model reads
is the rubric's, its greedy answer is the value's answer, and the score is read from it by the scripts' rule."""

import io
import math
import re

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.metrics.judges import dreambench_prompts as prompts
from masc_ui.metrics.judges.dreambench import judge_jpeg
from masc_ui.metrics.registry import get_scorer, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry

TOKENS = 12
SCRIPTS_RULE = r"(score|Score):\s*[a-zA-Z]*\s*(\d+)"


@pytest.fixture()
def settings(demo_settings):
    return demo_settings.replace(dbpp_judge="local", dbpp_max_new_tokens=TOKENS)


def _image(seed: int, size=(96, 64)) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _sample(seed: int, prompt: str = "a cat on the beach") -> Sample:
    return Sample(refs=(_image(100 + seed),), out=_image(seed), prompt=prompt)


def _jpeg_image(image) -> Image.Image:
    """The pixels the judge is shown, prepared here again: 512x512 bicubic, JPEG at Pillow's default quality."""
    buffer = io.BytesIO()
    image.pixels.resize((512, 512), Image.Resampling.BICUBIC).save(buffer, format="JPEG")
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def _expected_inputs(judge, sample: Sample, criterion: str) -> dict:
    """The processor's inputs for the rubric conversation, built here from the prompt files and the images."""
    if criterion == "cp":
        user, assistant = prompts.CP_USER_PROMPT, prompts.CP_ASSISTANT_PROMPT
        last = [{"type": "image"}, {"type": "image"}]
        images = [_jpeg_image(sample.refs[0]), _jpeg_image(sample.out)]
    else:
        user, assistant = prompts.PF_USER_PROMPT, prompts.PF_ASSISTANT_PROMPT
        last = [{"type": "text", "text": sample.prompt.strip()}, {"type": "image"}]
        images = [_jpeg_image(sample.out)]
    messages = [
        {"role": "user", "content": user},
        {"role": "assistant", "content": assistant},
        {"role": "user", "content": last},
    ]
    text = judge.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return judge.processor(text=[text], images=images, return_tensors="pt")


@pytest.mark.parametrize("criterion", ["cp", "pf"])
def test_the_model_reads_the_rubric_and_its_greedy_answer_is_the_value(settings, criterion, monkeypatch):
    models = ModelRegistry()
    scorer = get_scorer(f"dbpp_{criterion}", settings, models)
    judge = scorer.local_judge()
    seen = []
    generate = judge.model.generate

    def spy(**inputs):
        seen.append(inputs)
        return generate(**inputs)

    monkeypatch.setattr(judge.model, "generate", spy)
    sample = _sample(0)
    [value] = scorer.score([sample])
    expected = _expected_inputs(judge, sample, criterion)
    [inputs] = seen
    assert torch.equal(inputs["input_ids"], expected["input_ids"])
    assert torch.equal(inputs["pixel_values"], expected["pixel_values"])
    assert inputs["do_sample"] is False and inputs["max_new_tokens"] == TOKENS
    with torch.inference_mode():
        out = generate(**expected, max_new_tokens=TOKENS, do_sample=False)
    answer = judge.processor.batch_decode(out[:, expected["input_ids"].shape[1] :], skip_special_tokens=True)[0]
    assert value.extras["answer"] == answer
    found = [int(n) for _, n in re.findall(SCRIPTS_RULE, answer)]
    if len(found) == 1 and 0 <= found[0] <= 4:
        assert value.value == found[0]
    else:  # the random demo weights write no score: NaN, the answer quoted
        assert math.isnan(value.value) and repr(" ".join(answer.split()))[:50] in value.reason
    details = value.extras["answers"][0]["details"]
    assert details["input_tokens"] == expected["input_ids"].shape[1] and details["new_tokens"] <= TOKENS
    prov = value.provenance
    assert prov["model_id"] == str(settings.resolved_demo_weights_dir / "qwen2.5-vl") and prov["revision"] == "local"
    assert prov["device"] == "cpu" and prov["dtype"] == "float32"
    assert prov["params"]["judge"] == "local" and prov["params"]["generation"] == "greedy"
    assert prov["params"]["max_new_tokens"] == TOKENS and prov["params"]["scale"] == "rating"


def test_a_batch_equals_one_at_a_time(settings):
    samples = [_sample(1), _sample(2, prompt="a dog in the snow")]
    models = ModelRegistry()
    together = score_metrics(samples, "dbpp_cp,dbpp_pf", settings, models)
    for k, sample in enumerate(samples):
        alone = score_metrics([sample], "dbpp_cp,dbpp_pf", settings, ModelRegistry())
        for name in ("dbpp_cp", "dbpp_pf"):
            a, b = together[name][k], alone[name][0]
            assert a.extras["answer"] == b.extras["answer"] and a.reason == b.reason
            assert (math.isnan(a.value) and math.isnan(b.value)) or a.value == b.value
    assert len([k for k in models.loaded() if k[0] == "dbpp-local-judge"]) == 1  # one model for both criteria


def test_the_judge_is_shown_the_pixels_the_api_judge_is_sent():
    sample = _sample(3)
    sent = Image.open(io.BytesIO(judge_jpeg(sample.out)))
    assert np.array_equal(np.asarray(_jpeg_image(sample.out)), np.asarray(sent))
