"""Run -> Explain -> Save on one pair: each distinct image goes through each backbone exactly once, and Explain
uses the Run's MaSC engine (no second engine, no second encoding)."""

from __future__ import annotations

from masc_ui.workbench import build_workbench
from masc_ui.workbench.examples import load_example

METRICS = ["cp", "pf", "clip_i", "clip_i_seg", "clip_t", "clipscore", "pickscore", "dino_i"]


def test_run_explain_save_encode_each_image_once_per_backbone(demo_settings):
    wb = build_workbench(demo_settings)
    engine = wb.scoring.masc_engine()
    siglip_images: list[int] = []
    engine.backbone.model.vision_model.register_forward_hook(
        lambda module, args, kwargs, out: siglip_images.append(int(kwargs["pixel_values"].shape[0])), with_kwargs=True
    )
    siglip_texts: list[int] = []
    engine.backbone.model.text_model.register_forward_hook(
        lambda module, args, kwargs, out: siglip_texts.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    ex = load_example("cat-on-grass")
    ref, out = wb.scoring.load_image(ex.ref, "reference image 1"), wb.scoring.load_image(ex.out, "output image")
    sample = wb.scoring.make_sample([ref], out, ex.prompt, ex.subject, [ex.ref_mask], ex.out_mask)

    run = wb.scoring.score(sample, METRICS, user="alice")
    explained = wb.scoring.explain(sample, user="alice")
    saved = wb.saving.save(sample, user="alice", dataset="counts", names=METRICS)

    assert all(row.value is not None for row in run.rows)
    assert explained.cp == run.values["cp"].value and explained.pf == run.values["pf"].value
    assert "new metric value" in saved.message
    backbones = {
        key[0] + ":" + key[1].rsplit("/", 1)[-1]: wb.models.get(key, None)
        for key in wb.models.loaded()
        if key[0] in ("clip-backbone", "dino-backbone")
    }
    forwards = {name: b.image_forwards for name, b in backbones.items()}
    forwards["siglip"] = sum(siglip_images)
    # SigLIP2: reference + output; CLIP: reference, output and CLIP-I-Seg's segmented output; PickScore (clip-h):
    # the output; DINO: reference + output.
    assert forwards == {"siglip": 2, "clip-backbone:clip": 3, "clip-backbone:clip-h": 1, "dino-backbone:dino": 2}
    assert sum(siglip_texts) == 1  # PF's stripped prompt, once
    assert {name: b.text_forwards for name, b in backbones.items() if hasattr(b, "text_forwards")} == {
        "clip-backbone:clip": 1,
        "clip-backbone:clip-h": 1,
    }
    kinds = [k[0] for k in wb.models.loaded()]
    assert kinds.count("masc-engine") == 1 and kinds.count("siglip") == 1  # one engine, one loaded backbone
    wb.close()
