"""Keeping transformers' console output to what a user needs.

- `quiet_progress()`: no tqdm bars ("Writing model shards") while the tiny demo checkpoints are written at
  start-up; the previous state is restored afterwards (downloads of real weights keep their bars).
- `drop_default_config_warnings()`: transformers 5.24 builds a *default* config of the same class to diff
  against whenever a config is printed or saved (`configuration_utils.recursive_diff_dict`, reached from the
  `logger.info(f"Model config {config}")` of every `from_pretrained`, even when info is off). For SigLIP that
  default is `SiglipTextConfig()` (vocab 32000, bos 49406, eos 49407), which its own validator flags with
  "bos_token_id must be `None` or an integer within the vocabulary". The warning is about transformers' default,
  not about the checkpoint being loaded (the demo and the Google checkpoints have valid ids), so a filter drops
  warnings raised inside that diff and nothing else; a checkpoint whose own ids are invalid still warns.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

_CONFIG_LOGGER = "transformers.configuration_utils"
_DIFF_FUNCTION = "recursive_diff_dict"


class DefaultConfigDiffFilter(logging.Filter):
    """Drops transformers warnings emitted while it builds a default config to diff against (see module doc)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_name == _DIFF_FUNCTION and frame.f_globals.get("__name__") == _CONFIG_LOGGER:
                return False
            frame = frame.f_back
        return True


def drop_default_config_warnings() -> None:
    """Install `DefaultConfigDiffFilter` on transformers' config logger (once; later calls do nothing)."""
    logger = logging.getLogger(_CONFIG_LOGGER)
    if not any(isinstance(f, DefaultConfigDiffFilter) for f in logger.filters):
        logger.addFilter(DefaultConfigDiffFilter())


@contextlib.contextmanager
def quiet_progress() -> Iterator[None]:
    """transformers' (and huggingface_hub's) progress bars off inside the block, as they were afterwards."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
