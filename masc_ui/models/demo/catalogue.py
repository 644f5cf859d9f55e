"""Tiny random FaceScore and ArtScore checkpoints in their released file layouts, loaded back through the real
loaders (`masc_ui.models.nets.blip_reward`, `masc_ui.metrics.quality.artscore`). Their numbers mean nothing.

- `build_facescore`: `FS_model.pt` (ImageReward module keys: `blip.visual_encoder.*` ViT 224/16 of width 64,
  2 blocks; `blip.text_encoder.*` BERT of width 32, 2 layers with cross-attention; `blip.vision_proj/text_proj`;
  `mlp.layers.{0,2,4,6,7}` head 32-1024-128-64-16-1; the `position_ids` buffer old transformers saved),
  `med_config.json` (BLIP's BERT config, `add_cross_attention: true`, vocab = tokenizer + [DEC] + [ENC]), and a
  BERT WordPiece tokenizer (lower-casing, [PAD]/[UNK]/[CLS]/[SEP]/[MASK]) built with the `tokenizers` library.
- `build_imagereward`: the same tiny BLIP reward model saved as ImageReward's `ImageReward.pt` (+ `med_config.json`,
  tokenizer), its own seed.
- `build_artscore`: the released ArtScore state-dict layout on a narrow Bottleneck ResNet (stem 8, one block
  per stage) with ArtScore's head Linear(256, 1000) - ReLU - Dropout - Linear(1000, 1).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import torch

TEXT = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=40
)
VISION = dict(vision_width=64, vision_layers=2, vision_mlp=128, patch=16)
_WORDS = ["a", "face", "the", "of", "photo", "person"]


def build_tokenizer():
    """A lower-casing BERT WordPiece tokenizer over letters, digits, punctuation and a few words."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    symbols = list(string.ascii_lowercase + string.digits + string.punctuation)
    tokens = specials + symbols + ["##" + c for c in string.ascii_lowercase + string.digits] + _WORDS
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}
    core = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    core.normalizer = normalizers.BertNormalizer(lowercase=True)
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    core.decoder = decoders.WordPiece()
    return BertTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=True,
        model_max_length=512,
    )


def build_facescore(
    out_dir: Path, seed: int, *, text: dict | None = None, vision: dict | None = None, model_file: str | None = None
) -> None:
    """Write the tiny FaceScore checkpoint into `out_dir`; `text` / `vision` override the sizes (`TEXT`, `VISION`),
    e.g. for the benchmarks' base-size checkpoint; `model_file` the file name (default FaceScore's `FS_model.pt`)."""
    from ..nets.blip_reward import (
        CONFIG_FILE,
        ITC_PROJECTION,
        MODEL_FILE,
        POSITION_IDS,
        FaceScoreModel,
        FaceScoreSizes,
        released_name,
    )

    text_sizes, vision_sizes = {**TEXT, **(text or {})}, {**VISION, **(vision or {})}
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(out_dir)
    med_config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "attention_probs_dropout_prob": 0.1,
        "hidden_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "type_vocab_size": 2,
        "encoder_width": 768,
        "add_cross_attention": True,
        "vocab_size": len(tokenizer) + 2,
        **text_sizes,
    }
    (out_dir / CONFIG_FILE).write_text(json.dumps(med_config, indent=2))
    torch.manual_seed(seed)
    model = FaceScoreModel(FaceScoreSizes(text_config=med_config, **vision_sizes))
    with torch.no_grad():
        for p in model.parameters():  # transformers' init leaves LayerNorms at 1/0; make every tensor matter
            p.add_(0.02 * torch.randn_like(p))
    state = {released_name(k): v.clone() for k, v in model.state_dict().items()}
    state["blip.vision_proj.weight"] = 0.02 * torch.randn(ITC_PROJECTION, vision_sizes["vision_width"])
    state["blip.vision_proj.bias"] = torch.zeros(ITC_PROJECTION)
    state["blip.text_proj.weight"] = 0.02 * torch.randn(ITC_PROJECTION, text_sizes["hidden_size"])
    state["blip.text_proj.bias"] = torch.zeros(ITC_PROJECTION)
    state[POSITION_IDS] = torch.arange(text_sizes["max_position_embeddings"]).expand(1, -1).clone()
    torch.save(state, out_dir / (model_file or MODEL_FILE))


def build_imagereward(out_dir: Path, seed: int) -> None:
    """Write the tiny ImageReward checkpoint (FaceScore's architecture, ImageReward's file name) into `out_dir`."""
    from ..nets.blip_reward import IMAGEREWARD_FILE

    build_facescore(out_dir, seed + 1, model_file=IMAGEREWARD_FILE)


def build_artscore(out_dir: Path, seed: int) -> None:
    from ..nets.artscore import RELEASED_FILE, build_artscore_network
    from .faces import _randomize_batchnorm

    torch.manual_seed(seed)
    net = build_artscore_network(width=8, layers=(1, 1, 1, 1))
    _randomize_batchnorm(net)
    torch.save(net.state_dict(), out_dir / RELEASED_FILE)
