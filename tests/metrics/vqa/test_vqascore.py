"""VQAScore, both families, on the tiny demo checkpoints: against independent computations written here from the
METRICS.md recipe (plain transformers/torch calls on the same weights), batching, sharing and caching (forwards
counted), the template, the answer tokens, teacher forcing, the single forward, generation settings, bad input."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.metrics.registry import get_scorer, get_spec, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.metrics.vqa import chat_vlm as vqa_chat_vlm
from masc_ui.models.loaded_models import ModelRegistry

SYSTEM = (
    "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
    "detailed, and polite answers to the user's questions."
)
PROMPTS = [
    "a cat",
    "a photo of a red dog on the beach",
    "x",
    'the "quoted" thing, with commas',
    "blue",
    "Does this figure show a cat?",
]
FAMILIES = ["clip-flant5", "qwen2.5-vl"]


def close(expected):
    """Equal to `expected` within 1e-4 relative (the tiny models' probabilities are ~1e-3), at least 1e-7."""
    return pytest.approx(expected, rel=1e-4, abs=1e-7)


def _image(seed: int, size=(90, 60)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _settings(demo_settings, demo_weights, family: str):
    return demo_settings.replace(vqa_model=str(demo_weights / family))


def _scorer(demo_settings, demo_weights, family: str, models: ModelRegistry | None = None):
    return get_scorer("vqascore", _settings(demo_settings, demo_weights, family), models or ModelRegistry())


# --- independent computations -----------------------------------------------------------------------------------


class ReferenceClipFlanT5:
    """CLIP-FlanT5 as t2v_metrics runs it, assembled here from the released state dict with plain transformers
    parts (no code of masc_ui): expand2square, CLIP processor, hidden_states[-2][:, 1:], projector, LLaVA-v1
    template tokenized per chunk with the image token -200 between, T5 with labels, CrossEntropyLoss(mean)."""

    def __init__(self, folder):
        from transformers import (
            CLIPImageProcessorPil,
            CLIPVisionConfig,
            CLIPVisionModel,
            T5Config,
            T5ForConditionalGeneration,
            T5Tokenizer,
        )

        state = {}
        for shard in set(json.loads((folder / "pytorch_model.bin.index.json").read_text())["weight_map"].values()):
            state.update(torch.load(folder / shard, weights_only=True))
        config = json.loads((folder / "config.json").read_text())
        t5_keys = (
            "vocab_size",
            "d_model",
            "d_kv",
            "d_ff",
            "num_layers",
            "num_decoder_layers",
            "num_heads",
            "feed_forward_proj",
            "tie_word_embeddings",
            "pad_token_id",
            "eos_token_id",
            "decoder_start_token_id",
        )
        self.t5 = T5ForConditionalGeneration(T5Config(**{k: config[k] for k in t5_keys})).eval()
        self.t5.lm_head = torch.nn.Linear(config["d_model"], config["vocab_size"], bias=False)  # FlanT5: untied
        self.t5.load_state_dict(
            {
                k: v
                for k, v in state.items()
                if not k.startswith(("vision_tower", "mm_projector")) and k != "embed_tokens.weight"
            }
        )
        self.vision = CLIPVisionModel(CLIPVisionConfig.from_pretrained(folder / "vision_tower")).eval()
        prefix = "vision_tower.vision_tower.vision_model."
        self.vision.load_state_dict({k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)})
        width = config["mm_hidden_size"]
        self.projector = torch.nn.Sequential(
            torch.nn.Linear(width, config["d_model"]),
            torch.nn.GELU(),
            torch.nn.Linear(config["d_model"], config["d_model"]),
        )
        self.projector.load_state_dict(
            {k[len("mm_projector.") :]: v for k, v in state.items() if k.startswith("mm_projector.")}
        )
        self.tokenizer = T5Tokenizer.from_pretrained(folder)
        self.processor = CLIPImageProcessorPil.from_pretrained(folder / "vision_tower")

    @torch.no_grad()
    def image_tokens(self, image: Image.Image) -> torch.Tensor:
        fill = tuple(int(x * 255) for x in self.processor.image_mean)
        w, h = image.size
        square = Image.new("RGB", (max(w, h),) * 2, fill)
        square.paste(image, ((max(w, h) - w) // 2, (max(w, h) - h) // 2))
        pixels = self.processor.preprocess(square, return_tensors="pt", input_data_format="channels_last")
        hidden = self.vision(pixels["pixel_values"], output_hidden_states=True).hidden_states[-2][:, 1:]
        return self.projector(hidden)[0]

    @torch.no_grad()
    def probability(self, image: Image.Image, prompt: str, answer: str = "Yes") -> float:
        question = f'Does this figure show "{prompt}"? Please answer yes or no.'
        text = f"{SYSTEM} USER: <image>\n{question} ASSISTANT: "
        chunks = [self.tokenizer(chunk).input_ids for chunk in text.split("<image>")]
        embed = self.t5.get_input_embeddings()
        embeds = torch.cat([embed(torch.tensor(chunks[0])), self.image_tokens(image), embed(torch.tensor(chunks[1]))])
        labels = self.tokenizer(answer, return_tensors="pt").input_ids
        logits = self.t5(inputs_embeds=embeds[None], labels=labels).logits[0, :, : len(self.tokenizer)]
        return math.exp(-torch.nn.CrossEntropyLoss()(logits, labels[0]).item())


class ReferenceChatVlm:
    """A chat VLM as METRICS.md says: chat template with the generation prompt, processor, one plain forward with
    the pixels, softmax of the last logits at the first token of "Yes"."""

    def __init__(self, folder):
        from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoProcessor

        self.model = AutoModelForImageTextToText.from_pretrained(folder).eval()
        self.processor = AutoProcessor.from_pretrained(folder)
        self.processor.image_processor = AutoImageProcessor.from_pretrained(folder, backend="pil")

    def inputs(self, image: Image.Image, prompt: str):
        question = f'Does this figure show "{prompt}"? Please answer Yes or No.'
        messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
        text = self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.processor(text=[text], images=[image], return_tensors="pt")

    @torch.no_grad()
    def probability(self, image: Image.Image, prompt: str, answer: str = "Yes") -> float:
        token = self.processor.tokenizer.encode(answer, add_special_tokens=False)[0]
        return self.model(**self.inputs(image, prompt)).logits[0, -1].softmax(-1)[token].item()


@pytest.fixture(scope="module")
def references(demo_weights):
    return {
        "clip-flant5": ReferenceClipFlanT5(demo_weights / "clip-flant5"),
        "qwen2.5-vl": ReferenceChatVlm(demo_weights / "qwen2.5-vl"),
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_equals_the_independent_computation(demo_settings, demo_weights, references, family):
    images = [_image(1), _image(2, (40, 100)), _image(3, (64, 64))]
    samples = [Sample(refs=(), out=images[i % 3], prompt=p) for i, p in enumerate(PROMPTS)]
    values = _scorer(demo_settings, demo_weights, family).score(samples)
    reference = references[family]
    for sample, value in zip(samples, values):
        assert value.reason is None and 0.0 < value.value < 1.0
        assert value.value == close(reference.probability(sample.out.pixels, sample.prompt))
        assert value.extras["p_yes"] == value.value
        assert value.extras["p_no"] == close(reference.probability(sample.out.pixels, sample.prompt, "No"))


@pytest.mark.parametrize("family", FAMILIES)
def test_batched_equals_one_at_a_time(demo_settings, demo_weights, family):
    samples = [Sample(refs=(), out=_image(i % 4, (50 + 13 * i, 70)), prompt=p) for i, p in enumerate(PROMPTS * 2)]
    batched = _scorer(demo_settings, demo_weights, family).score(samples)
    models = ModelRegistry()
    singles = []
    for sample in samples:
        scorer = _scorer(demo_settings, demo_weights, family, models)
        scorer.backbone().clear_caches()
        singles += scorer.score([sample])
    assert [v.value for v in batched] == close([v.value for v in singles])


@pytest.mark.parametrize("family", FAMILIES)
def test_one_image_encoding_for_n_prompts_and_no_forward_on_rerun(demo_settings, demo_weights, family):
    image, other = _image(5), _image(6, (30, 90))
    samples = [Sample(refs=(), out=image, prompt=p) for p in PROMPTS[:4]] + [Sample(refs=(), out=other, prompt="a")]
    scorer = _scorer(demo_settings, demo_weights, family)
    engine = scorer.backbone()
    calls = _count_module_calls(engine, family)
    first = scorer.score(samples)
    assert (engine.image_encodings, engine.pair_forwards, engine.batch_forwards) == (2, 5, 1)
    assert calls == {"vision": 2, "language": 1}
    again = scorer.score(samples + [Sample(refs=(), out=image.copy(), prompt=PROMPTS[0])])
    assert (engine.image_encodings, engine.pair_forwards, engine.batch_forwards) == (2, 5, 1)
    assert calls == {"vision": 2, "language": 1}
    assert [v.value for v in again[:5]] == [v.value for v in first] and again[5].value == first[0].value


def _count_module_calls(engine, family: str) -> dict[str, int]:
    """Images through the vision tower and forward calls of the language model, counted by hooks on the modules."""
    calls = {"vision": 0, "language": 0}

    def images(module, args, kwargs, output):
        calls["vision"] += len(kwargs["pixel_values"] if family == "clip-flant5" else kwargs["grid_thw"])

    def language(*_):
        calls["language"] += 1

    if family == "clip-flant5":
        engine.model.vision_tower.register_forward_hook(images, with_kwargs=True)
        engine.model.language_model.encoder.register_forward_hook(language)
    else:
        engine.model.model.visual.register_forward_hook(images, with_kwargs=True)
        engine.model.model.language_model.register_forward_hook(language)
    return calls


def test_clip_flant5_template_answer_tokens_and_teacher_forcing(demo_settings, demo_weights, references):
    """The exact question; the answer tokens are "Yes" + EOS; the score is the geometric mean of the decoder's
    probabilities of "▁Yes" after the start token and of "</s>" after "▁Yes" (teacher forcing)."""
    reference = references["clip-flant5"]
    tokenizer = reference.tokenizer
    image = _image(7)
    [value] = _scorer(demo_settings, demo_weights, "clip-flant5").score([Sample(refs=(), out=image, prompt="a cat")])
    yes = tokenizer.convert_tokens_to_ids("▁Yes")
    assert value.extras["question"] == 'Does this figure show "a cat"? Please answer yes or no.'
    assert value.extras["answer_token_ids"] == [yes, tokenizer.eos_token_id] and value.extras["answer_token_id"] == yes
    provenance = value.provenance["params"]
    assert provenance["template"] == SYSTEM + " USER: <image>\n{question} ASSISTANT: "
    assert provenance["answer_token_ids"] == [yes, 1] and provenance["family"] == "clip-flant5"
    text = f'{SYSTEM} USER: <image>\nDoes this figure show "a cat"? Please answer yes or no. ASSISTANT: '
    chunks = [tokenizer(c).input_ids for c in text.split("<image>")]
    assert chunks[0][-1] == chunks[1][-1] == tokenizer.eos_token_id  # each chunk ends with </s>, as t2v_metrics
    assert value.extras["input_tokens"] == len(chunks[0]) + 1 + len(chunks[1])
    with torch.no_grad():
        embed = reference.t5.get_input_embeddings()
        embeds = torch.cat(
            [embed(torch.tensor(chunks[0])), reference.image_tokens(image), embed(torch.tensor(chunks[1]))]
        )[None]
        vocab = len(tokenizer)
        step1 = reference.t5(inputs_embeds=embeds, decoder_input_ids=torch.tensor([[0]])).logits[0, -1, :vocab]
        step2 = reference.t5(inputs_embeds=embeds, decoder_input_ids=torch.tensor([[0, yes]])).logits[0, -1, :vocab]
    p_yes, p_eos = step1.softmax(-1)[yes].item(), step2.softmax(-1)[1].item()
    assert value.value == close(math.sqrt(p_yes * p_eos))
    assert not math.isclose(value.value, p_yes, rel_tol=0.01)  # the EOS step counts


QWEN_CHAT_TEXT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    '<|vision_start|><|image_pad|><|vision_end|>Does this figure show "a cat"? Please answer Yes or '
    "No.<|im_end|>\n<|im_start|>assistant\n"
)


def test_chat_vlm_template_answer_token_and_single_forward(demo_settings, demo_weights, references):
    scorer = _scorer(demo_settings, demo_weights, "qwen2.5-vl")
    engine = scorer.backbone()
    image = _image(8)
    [value] = scorer.score([Sample(refs=(), out=image, prompt="a cat")])
    tokenizer = references["qwen2.5-vl"].processor.tokenizer
    yes = tokenizer.encode("Yes", add_special_tokens=False)[0]
    assert yes == tokenizer.convert_tokens_to_ids("Yes")  # a single token in Qwen's vocabulary, as in the real one
    assert value.extras["answer_token_id"] == yes == value.provenance["params"]["answer_token_id"]
    assert value.extras["question"] == 'Does this figure show "a cat"? Please answer Yes or No.'
    assert engine.chat_text(value.extras["question"]) == QWEN_CHAT_TEXT
    assert value.provenance["params"]["template"] == QWEN_CHAT_TEXT.replace('"a cat"', '"{prompt}"')
    assert value.provenance["params"]["image_encoding_shared"] is True
    # one plain forward: the model's raw last-position logits, softmaxed over the full vocabulary
    inputs = references["qwen2.5-vl"].inputs(image, "a cat")
    with torch.no_grad():
        logits = engine.model(**inputs).logits[0, -1]
    assert logits.shape[0] == engine.model.config.text_config.vocab_size > len(tokenizer)
    assert value.value == pytest.approx(logits.softmax(-1)[yes].item(), rel=1e-5, abs=1e-8)
    # the first batch checked that the text inputs rebuilt from cached image layouts are the processor's own;
    # later batches use them (no second preprocessing of the images) and give the same numbers
    assert engine._layout_reuse is True
    samples = [Sample(refs=(), out=_image(20 + i, (50 + 20 * i, 40)), prompt=p) for i, p in enumerate(PROMPTS)]
    for sample, later in zip(samples, scorer.score(samples)):
        assert later.value == close(references["qwen2.5-vl"].probability(sample.out.pixels, sample.prompt))


@pytest.mark.parametrize("family", FAMILIES)
def test_generation_config_logits_processors_do_not_touch_the_score(demo_settings, demo_weights, references, family):
    scorer = _scorer(demo_settings, demo_weights, family)
    samples = [Sample(refs=(), out=_image(9), prompt=p) for p in PROMPTS[:3]]
    before = [v.value for v in scorer.score(samples)]
    engine = scorer.backbone()
    model = engine.model.language_model if family == "clip-flant5" else engine.model
    yes = engine.answer_ids[0] if family == "clip-flant5" else engine.answer_id
    model.generation_config.update(
        do_sample=True,
        temperature=0.05,
        top_k=1,
        top_p=0.5,
        repetition_penalty=5.0,
        suppress_tokens=[yes],
        bad_words_ids=[[yes]],
    )
    engine.clear_caches()
    after = [v.value for v in scorer.score(samples)]
    assert after == before and min(before) > 0
    if family == "qwen2.5-vl":  # the same settings in `generate` would have changed the probability of "Yes"
        out = engine.model.generate(
            **references[family].inputs(samples[0].out.pixels, samples[0].prompt),
            max_new_tokens=1,
            output_scores=True,
            output_logits=True,
            return_dict_in_generate=True,
        )
        assert out.logits[0][0].softmax(-1)[yes].item() == pytest.approx(before[0], rel=1e-5, abs=1e-8)
        assert out.scores[0][0].softmax(-1)[yes].item() == 0.0


def test_chat_vlm_without_precomputed_image_encodings_gives_the_same_values(demo_settings, demo_weights, monkeypatch):
    samples = [Sample(refs=(), out=_image(i % 2), prompt=p) for i, p in enumerate(PROMPTS[:4])]
    shared = _scorer(demo_settings, demo_weights, "qwen2.5-vl").score(samples)
    monkeypatch.setattr(vqa_chat_vlm, "shares_image_encodings", lambda model: False)
    scorer = _scorer(demo_settings, demo_weights, "qwen2.5-vl")
    unshared = scorer.score(samples)
    assert [v.value for v in unshared] == close([v.value for v in shared])
    assert unshared[0].provenance["params"]["image_encoding_shared"] is False
    assert scorer.backbone().image_encodings == 4  # the vision tower ran in every row's forward


# --- bad input ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_empty_prompt_is_refused_or_nan(demo_settings, demo_weights, family):
    scorer = _scorer(demo_settings, demo_weights, family)
    samples = [Sample(refs=(), out=_image(1), prompt="a cat"), Sample(refs=(), out=_image(1), prompt="  ")]
    with pytest.raises(InputError, match="vqascore needs prompt, which sample 1 lacks"):
        scorer.score(samples)
    ok, empty = scorer.score(samples, missing="nan")
    assert not ok.is_nan and empty.is_nan and "needs prompt" in empty.reason


@pytest.mark.parametrize("family", FAMILIES)
def test_tiny_transparent_and_grey_images(demo_settings, demo_weights, references, family):
    rgba = np.zeros((40, 60, 4), np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, np.tile(np.linspace(0, 255, 60).astype(np.uint8), (40, 1))
    rgba_image = Image.fromarray(rgba, "RGBA")
    flattened = Image.alpha_composite(Image.new("RGBA", rgba_image.size, (255, 255, 255, 255)), rgba_image)
    grey = _image(4).convert("L")
    samples = [
        Sample(refs=(), out=img, prompt="a cat") for img in (Image.new("RGB", (1, 1), (9, 200, 30)), rgba_image, grey)
    ]
    tiny, transparent, grey_value = _scorer(demo_settings, demo_weights, family).score(samples)
    assert tiny.reason is None and 0 < tiny.value < 1
    reference = references[family]
    assert tiny.value == close(reference.probability(Image.new("RGB", (1, 1), (9, 200, 30)), "a cat"))
    assert transparent.value == close(reference.probability(flattened.convert("RGB"), "a cat"))
    assert "flattened onto white" in transparent.extras["image_notes"][0]
    assert grey_value.value == close(reference.probability(grey.convert("RGB"), "a cat"))


@pytest.mark.parametrize(
    "family, prompt, limit",
    [("clip-flant5", "qz " * 1100, "2048-token context"), ("qwen2.5-vl", "abcdefghij " * 200, "over the model's 2048")],
)
def test_prompt_over_the_token_limit_is_nan_with_the_reason(demo_settings, demo_weights, family, prompt, limit):
    scorer = _scorer(demo_settings, demo_weights, family)
    long, short = scorer.score(
        [Sample(refs=(), out=_image(2), prompt=prompt), Sample(refs=(), out=_image(2), prompt="a")]
    )
    assert long.is_nan and limit in long.reason and "shorten the prompt" in long.reason
    assert long.extras["input_tokens"] > 2048 and long.extras["question"].startswith("Does this figure show")
    assert not short.is_nan and scorer.backbone().pair_forwards == 1


def test_chat_vlm_image_its_processor_refuses_is_nan_with_the_reason(demo_settings, demo_weights):
    scorer = _scorer(demo_settings, demo_weights, "qwen2.5-vl")
    thin, fine = scorer.score(
        [Sample(refs=(), out=Image.new("RGB", (600, 2)), prompt="a"), Sample(refs=(), out=_image(3), prompt="a")]
    )
    assert thin.is_nan and "image processor cannot take this 600x2 image" in thin.reason
    assert "aspect ratio" in thin.reason
    assert not fine.is_nan


# --- family, settings, errors ---------------------------------------------------------------------------------------


def test_family_is_read_from_the_config_not_the_name(demo_settings, demo_weights, tmp_path):
    folder = tmp_path / "Qwen2.5-VL-7B-Instruct"
    shutil.copytree(demo_weights / "clip-flant5", folder)
    [value] = get_scorer("vqascore", demo_settings.replace(vqa_model=str(folder))).score(
        [Sample(refs=(), out=_image(1), prompt="a cat")]
    )
    assert value.provenance["params"]["family"] == "clip-flant5" and value.provenance["model_id"] == str(folder)


@pytest.mark.parametrize(
    "name, message",
    [
        ("blip2-itm", "has no chat template"),
        ("clip", "is a 'clip' checkpoint, neither CLIP-FlanT5"),
        ("no-such-folder", "does not exist"),
    ],
)
def test_a_checkpoint_that_is_no_vqa_model_is_explained(demo_settings, demo_weights, name, message):
    scorer = get_scorer("vqascore", demo_settings.replace(vqa_model=str(demo_weights / name)))
    with pytest.raises(ModelUnavailableError, match=message) as caught:
        scorer.score([Sample(refs=(), out=_image(1), prompt="a cat")])
    assert "MASC_VQA_MODEL" in str(caught.value)


def test_a_released_checkpoint_with_a_missing_key_names_it_and_the_setting(demo_settings, demo_weights, tmp_path):
    folder = tmp_path / "broken"
    shutil.copytree(demo_weights / "clip-flant5", folder, ignore=shutil.ignore_patterns("pytorch_model*"))
    state = {}
    for shard in sorted((demo_weights / "clip-flant5").glob("pytorch_model-*.bin")):
        state.update(torch.load(shard, weights_only=True))
    del state["decoder.final_layer_norm.weight"]
    torch.save(state, folder / "pytorch_model.bin")
    scorer = get_scorer("vqascore", demo_settings.replace(vqa_model=str(folder)))
    with pytest.raises(ModelUnavailableError, match=r"MASC_VQA_MODEL.*lacks the key 'decoder.final_layer_norm.weight'"):
        scorer.score([Sample(refs=(), out=_image(1), prompt="a cat")])


def test_registry_declaration_and_demo_profile(demo_settings):
    spec = get_spec("vqascore")
    assert spec.range == (0.0, 1.0) and spec.higher_is_better and spec.needs_prompt and not spec.needs_reference
    assert spec.backbone_settings == ("vqa_model",) and "Lin et al., ECCV 2024" in spec.paper
    [value] = score_metrics([Sample(refs=(), out=_image(1), prompt="a cat")], "vqascore", demo_settings)["vqascore"]
    assert value.provenance["model_id"].endswith("clip-flant5") and value.provenance["dtype"] == "float32"
