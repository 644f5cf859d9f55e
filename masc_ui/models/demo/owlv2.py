"""A tiny random OWLv2 detector (model + processor), shaped like `google/owlv2-base-patch16-ensemble` (patch 16,
CLIP-style towers, box/class/objectness heads, an image processor that pads to a square and resizes) with a 64 px
input and tiny widths, saved with `save_pretrained`. NexusScore's substitute detector loads it through the same code
as the real checkpoints. Its numbers mean nothing.

The box and logit heads' last layers are drawn 100x smaller than the default initialization, so that boxes stay near
their patch (about 16 px in the 64 px input, as a trained model's do) and confidences spread around 0.5 instead of
saturating: the detection thresholds then have something to cut.
"""

from __future__ import annotations

from pathlib import Path

import torch

IMAGE_SIZE = 64
OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def build(out_dir: Path, seed: int) -> None:
    """Write the tiny OWLv2 checkpoint + processor into `out_dir`."""
    from transformers import Owlv2Config, Owlv2ForObjectDetection, Owlv2ImageProcessor, Owlv2Processor

    from .clip import build_tokenizer

    tokenizer = build_tokenizer("!")
    config = Owlv2Config(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=16,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=IMAGE_SIZE,
            patch_size=16,
        ),
        projection_dim=16,
    )
    torch.manual_seed(seed)
    model = Owlv2ForObjectDetection(config).eval()
    with torch.no_grad():
        for layer in (model.box_head.dense2, model.class_head.logit_shift, model.class_head.logit_scale):
            layer.weight.mul_(0.01)
            layer.bias.zero_()
    model.save_pretrained(out_dir)
    image_processor = Owlv2ImageProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        image_mean=list(OPENAI_CLIP_MEAN),
        image_std=list(OPENAI_CLIP_STD),
    )
    Owlv2Processor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out_dir)
