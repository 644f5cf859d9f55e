"""The texts VQAScore asks and the LLaVA padding, as pure functions."""

from __future__ import annotations

import numpy as np
from PIL import Image

from masc_ui.metrics.vqa.questions import (
    LLAVA_V1_TEMPLATE,
    chat_vlm_question,
    clip_flant5_question,
    llava_v1_text,
    mean_colour,
    pad_to_square,
)


def test_questions_of_the_two_families():
    assert clip_flant5_question('a "red" cat') == 'Does this figure show "a "red" cat"? Please answer yes or no.'
    assert chat_vlm_question("a cat") == 'Does this figure show "a cat"? Please answer Yes or No.'


def test_llava_v1_template_splits_at_the_image():
    before, after = llava_v1_text("Q?")
    assert before == (
        "A chat between a curious user and an artificial intelligence assistant. The assistant gives "
        "helpful, detailed, and polite answers to the user's questions. USER: "
    )
    assert after == "\nQ? ASSISTANT: "
    assert LLAVA_V1_TEMPLATE.format(question="Q?") == before + "<image>" + after


def test_pad_to_square_centres_on_the_clip_mean_colour():
    fill = mean_colour([0.48145466, 0.4578275, 0.40821073])
    assert fill == (122, 116, 104)
    wide = Image.fromarray(np.full((3, 8, 3), 7, np.uint8))
    square = np.asarray(pad_to_square(wide, fill))
    assert square.shape == (8, 8, 3)
    assert (square[:2] == fill).all() and (square[2:5] == 7).all() and (square[5:] == fill).all()  # offset (8-3)//2
    tall = np.asarray(pad_to_square(Image.fromarray(np.full((5, 2, 3), 9, np.uint8)), fill))
    assert (tall[:, :1] == fill).all() and (tall[:, 1:3] == 9).all() and (tall[:, 3:] == fill).all()
    one = Image.new("RGB", (4, 4))
    assert pad_to_square(one, fill) is one
