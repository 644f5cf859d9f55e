"""The exact texts VQAScore asks (METRICS.md, "The scorer catalogue"): pure strings, no model.

The two families differ in one letter case, as in t2v_metrics: CLIP-FlanT5 was trained and evaluated with
"...Please answer yes or no.", the chat VLMs are asked "...Please answer Yes or No.". The prompt is the full
generation prompt (not subject-stripped), inserted between straight double quotes as it is.

    >>> clip_flant5_question("a cat")
    'Does this figure show "a cat"? Please answer yes or no.'
    >>> llava_v1_text("Q?")[1]
    '\\nQ? ASSISTANT: '
"""

from __future__ import annotations

from PIL import Image

CLIP_FLANT5_QUESTION = 'Does this figure show "{}"? Please answer yes or no.'
CHAT_VLM_QUESTION = 'Does this figure show "{}"? Please answer Yes or No.'
ANSWER = "Yes"
"""The answer whose probability is the score."""
NEGATIVE_ANSWER = "No"
"""Its opposite, reported in extras as P(No)."""
LLAVA_V1_SYSTEM = (
    "A chat between a curious user and an artificial intelligence assistant. The assistant gives "
    "helpful, detailed, and polite answers to the user's questions."
)
IMAGE_PLACEHOLDER = "<image>"
LLAVA_V1_TEMPLATE = f"{LLAVA_V1_SYSTEM} USER: {IMAGE_PLACEHOLDER}\n{{question}} ASSISTANT: "
"""LLaVA-v1 system/USER/ASSISTANT template of CLIP-FlanT5 (t2v_metrics `t5_chat`); the image's tokens go where
`<image>` is."""


def clip_flant5_question(prompt: str) -> str:
    return CLIP_FLANT5_QUESTION.format(prompt)


def chat_vlm_question(prompt: str) -> str:
    return CHAT_VLM_QUESTION.format(prompt)


def llava_v1_text(question: str) -> tuple[str, str]:
    """(text before the image, text after it) of `LLAVA_V1_TEMPLATE` for `question`; each part is tokenized on
    its own (FlanT5's tokenizer ends each with `</s>`, as t2v_metrics' `t5_tokenizer_image_token`)."""
    before, after = LLAVA_V1_TEMPLATE.format(question=question).split(IMAGE_PLACEHOLDER)
    return before, after


def pad_to_square(image: Image.Image, fill: tuple[int, int, int]) -> Image.Image:
    """`image` centred on a square canvas of its longer side filled with `fill` (RGB 0..255); square images are
    returned as they are. The offset is (long - short) // 2, as LLaVA's `expand2square`."""
    width, height = image.size
    if width == height:
        return image
    side = max(width, height)
    canvas = Image.new(image.mode, (side, side), fill)
    canvas.paste(image, ((side - width) // 2, (side - height) // 2))
    return canvas


def mean_colour(image_mean: tuple[float, float, float] | list[float]) -> tuple[int, int, int]:
    """A processor's `image_mean` (0..1) as the 0..255 fill colour LLaVA pads with (truncated, not rounded)."""
    red, green, blue = (int(x * 255) for x in image_mean)
    return red, green, blue
