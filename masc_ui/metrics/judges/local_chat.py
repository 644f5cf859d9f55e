"""A judge that is a local chat VLM (the chat-VLM family of VQAScore, e.g. `Qwen/Qwen2.5-VL-7B-Instruct`), asked the
same chat-completions `messages` as the API judge and answering with generated text.

- Messages: the OpenAI form (`content` a string or a list of `text` / `image_url` parts); each `image_url` part's
  base64 data URL is decoded back to the image sent (the same JPEG pixels the API judge gets) and becomes an image
  of the model's chat template (`{"type": "image"}`), in order; `detail` has no meaning here.
- Rendering: the model's own chat template with the generation prompt (its default system message, if it has one,
  is the template's: Qwen2.5-VL adds "You are a helpful assistant."; the API judge sends no system message).
- Generation: greedy (`do_sample=False`, so the answer is a function of the inputs), at most `max_new_tokens` new
  tokens, special tokens (and NUL characters, which databases cannot store) dropped from the decoded answer. One
  conversation at a time (the model is shared).
- A conversation longer than the model's trained length is still answered; the number of input tokens and that
  length are in the reply (`input_tokens`, `max_positions`), so a value says when it happened.
"""

from __future__ import annotations

import base64
import io
import threading
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

from .client import JudgeReply

_DATA_URL_PREFIX = "data:image/"


@dataclass(frozen=True)
class LocalJudgeInfo:
    """What identifies the local judge's answers (for provenance and cache keys)."""

    model_id: str
    revision: str
    device: str
    dtype: torch.dtype


def chat_template_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Image.Image]]:
    """(`messages` with each `image_url` part replaced by `{"type": "image"}`, the images those parts carried, in
    order). Raises `ValueError` for an `image_url` that is not a base64 data URL of an image."""
    converted, images = [], []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            converted.append({"role": message["role"], "content": content})
            continue
        parts = []
        for part in content:
            if part.get("type") == "image_url":
                images.append(decode_data_url(part["image_url"]["url"]))
                parts.append({"type": "image"})
            else:
                parts.append({"type": "text", "text": part["text"]})
        converted.append({"role": message["role"], "content": parts})
    return converted, images


def decode_data_url(url: str) -> Image.Image:
    """The RGB image of a `data:image/...;base64,...` URL."""
    if not url.startswith(_DATA_URL_PREFIX) or ";base64," not in url:
        raise ValueError(f"the local judge reads images from base64 data URLs only, got {url[:40]!r}...")
    data = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as img:
        return img.convert("RGB")


class LocalChatJudge:
    """Answers chat-completions `messages` with a loaded chat VLM (see the module docstring)."""

    def __init__(self, model: Any, processor: Any, info: LocalJudgeInfo) -> None:
        self.model = model
        self.processor = processor
        self.info = info
        text_config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.max_positions = getattr(text_config, "max_position_embeddings", None)
        self._lock = threading.Lock()

    def prompt_text(self, messages: list[dict[str, Any]]) -> str:
        """The templated text the model reads for `messages` (image placeholders where the images go)."""
        converted, _ = chat_template_messages(messages)
        return str(self.processor.apply_chat_template(converted, tokenize=False, add_generation_prompt=True))

    @torch.inference_mode()
    def chat(self, messages: list[dict[str, Any]], *, max_new_tokens: int) -> JudgeReply:
        """The model's greedy answer to `messages`, at most `max_new_tokens` tokens."""
        converted, images = chat_template_messages(messages)
        text = self.processor.apply_chat_template(converted, tokenize=False, add_generation_prompt=True)
        inputs = self.processor(text=[text], images=images or None, return_tensors="pt")
        device = next(self.model.parameters()).device
        inputs = {
            k: v.to(device, self.model.dtype) if v.is_floating_point() else v.to(device)
            for k, v in inputs.items()
            if isinstance(v, torch.Tensor)
        }
        n_input = int(inputs["input_ids"].shape[1])
        with self._lock:
            out = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        new_tokens = out[:, n_input:]
        answer = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0].replace("\x00", "")
        n_new = int(new_tokens.shape[1])
        return JudgeReply(
            text=answer,
            error=None,
            attempts=1,
            served_model=self.info.model_id,
            tokens=n_input + n_new,
            details={"input_tokens": n_input, "new_tokens": n_new, "max_positions": self.max_positions},
        )
