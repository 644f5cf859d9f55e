import pytest

from masc_ui.models import demo
from masc_ui.models.profiles import DEMO_NAMES


def test_unknown_name_is_refused(tmp_path):
    with pytest.raises(KeyError, match="unknown demo checkpoint"):
        demo.write_demo_weights(tmp_path, ["no-such-model"])


CALLS: list[int] = []


def fake_build(out, seed):
    CALLS.append(seed)
    (out / "weights.bin").write_bytes(b"x")


def broken_build(out, seed):
    (out / "half.bin").write_bytes(b"x")
    raise RuntimeError("boom")


def test_idempotent_and_atomic(tmp_path, monkeypatch):
    CALLS.clear()
    calls = CALLS
    monkeypatch.setitem(demo.DEMO_BUILDERS, "fake", f"{__name__}:fake_build")
    demo.write_demo_weights(tmp_path, ["fake"])
    demo.write_demo_weights(tmp_path, ["fake"])
    assert calls == [0]
    assert (tmp_path / "fake" / "weights.bin").exists() and not (tmp_path / ".fake.tmp").exists()
    demo.write_demo_weights(tmp_path, ["fake"], force=True)
    assert calls == [0, 0]


def test_failed_build_leaves_no_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setitem(demo.DEMO_BUILDERS, "broken", f"{__name__}:broken_build")
    with pytest.raises(RuntimeError):
        demo.write_demo_weights(tmp_path, ["broken"])
    assert not (tmp_path / "broken").exists() and not (tmp_path / ".broken.tmp").exists()


def test_every_profile_folder_has_a_builder():
    """The demo profile points only at checkpoints that `masc-ui demo-weights` writes."""
    missing = set(DEMO_NAMES.values()) - set(demo.DEMO_BUILDERS)
    assert not missing, f"demo profile names without a builder: {missing}"
