"""SAM variant table and builder: same parts as segment_anything's official builders, state-dict loading."""

from __future__ import annotations

import pytest
import torch
from segment_anything import sam_model_registry

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.models.nets.sam_variants import SAM_BUILDERS, build_sam, list_sam_variants, sam_architecture


@pytest.fixture(scope="module")
def tiny_sam_checkpoint(demo_weights):
    return demo_weights / "sam-vit-tiny" / "sam_vit_tiny.pth"


def _shapes(model: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


@pytest.mark.parametrize("variant", ["vit_b", "vit_l", "vit_h"])
def test_official_variants_match_segment_anything_builders(variant):
    """Every weight name and shape equals the official builder's, so official checkpoints load as they are."""
    with torch.device("meta"):
        ours = build_sam(variant)
        official = sam_model_registry[variant]()
    assert _shapes(ours) == _shapes(official)


def test_registry_lists_official_and_tiny_variants():
    assert set(list_sam_variants()) == {"vit_b", "vit_l", "vit_h", "vit_tiny"}
    assert set(SAM_BUILDERS) == set(list_sam_variants())
    tiny = sam_architecture("vit_tiny")
    assert (tiny.embedding_size, tiny.low_res_size) == (16, 64)
    assert (sam_architecture("vit_h").embedding_size, sam_architecture("vit_h").low_res_size) == (64, 256)


def test_demo_checkpoint_loads_through_the_builder(tiny_sam_checkpoint):
    sam = SAM_BUILDERS["vit_tiny"](tiny_sam_checkpoint)
    saved = torch.load(tiny_sam_checkpoint, map_location="cpu", weights_only=True)
    assert not sam.training
    for name, value in sam.state_dict().items():
        assert torch.equal(value, saved[name]), name
    assert tiny_sam_checkpoint.stat().st_size < 5_000_000


def test_unknown_variant_is_an_input_error():
    with pytest.raises(InputError, match="vit_huge.*vit_b"):
        build_sam("vit_huge")


def test_checkpoint_of_another_variant_is_refused(tiny_sam_checkpoint):
    with pytest.raises(ModelUnavailableError, match="does not fit the vit_b architecture"):
        build_sam("vit_b", tiny_sam_checkpoint)


def test_missing_and_damaged_checkpoints_are_refused(tmp_path):
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        build_sam("vit_tiny", tmp_path / "nope.pth")
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelUnavailableError, match="cannot be read"):
        build_sam("vit_tiny", bad)
    not_dict = tmp_path / "list.pth"
    torch.save([1, 2], not_dict)
    with pytest.raises(ModelUnavailableError, match="not a state dict"):
        build_sam("vit_tiny", not_dict)
