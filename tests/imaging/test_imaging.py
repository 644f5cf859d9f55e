import io

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import as_mask_array, load_image, load_mask_file


def _png(img: Image.Image, fmt: str = "PNG") -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


def test_load_image_converts_to_rgb_and_applies_exif(tmp_path):
    img = Image.new("RGB", (40, 20), (10, 20, 30))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise for display
    path = tmp_path / "rot.jpg"
    img.save(path, exif=exif)
    out = load_image(path, name="reference")
    assert out.mode == "RGB" and out.size == (20, 40)


@pytest.mark.parametrize("mode", ["L", "LA", "RGBA", "P", "I;16", "CMYK"])
def test_load_image_any_mode(mode):
    img = Image.new("RGB", (8, 6), (200, 100, 50)).convert(mode) if mode != "I;16" else Image.new("I;16", (8, 6), 40000)
    out = load_image(_png(img, "TIFF" if mode == "CMYK" else "PNG"))
    assert out.mode == "RGB" and out.size == (8, 6)


def test_not_an_image_is_named(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    with pytest.raises(InputError, match=r"output \(notes.txt\).*not an image"):
        load_image(p, name="output")


def test_truncated_image(tmp_path):
    data = _png(Image.new("RGB", (64, 64), (1, 2, 3)), "JPEG")
    with pytest.raises(InputError, match="damaged or truncated"):
        load_image(data[: len(data) // 2], name="output")


def test_missing_empty_and_folder(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_image(tmp_path / "nope.png", name="reference")
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        load_image(tmp_path / "empty.png")
    with pytest.raises(InputError, match="folder"):
        load_image(tmp_path)


def test_decompression_bomb_is_refused():
    big = _png(Image.new("L", (3000, 3000)))
    with pytest.raises(InputError, match="over the limit|too large"):
        load_image(big, name="output", max_pixels=1_000_000)


def test_array_input():
    arr = np.zeros((5, 7, 3), np.uint8)
    assert load_image(arr).size == (7, 5)
    assert load_image(np.ones((5, 7), np.float32)).getpixel((0, 0)) == (255, 255, 255)
    with pytest.raises(InputError, match="HxWx3"):
        load_image(np.zeros((5, 7, 2), np.uint8))


def _circle(h=32, w=48):
    yy, xx = np.mgrid[:h, :w]
    return (yy - h / 2) ** 2 + (xx - w / 2) ** 2 < 100


@pytest.mark.parametrize("mode", ["1", "L", "RGB", "P", "I;16", "F"])
def test_mask_file_grey_modes(mode):
    m = _circle()
    img = Image.fromarray((m * 255).astype(np.uint8))
    if mode == "I;16":
        img = Image.fromarray((m * 65535).astype(np.uint16))
    elif mode == "F":
        img = Image.fromarray(m.astype(np.float32))
    else:
        img = img.convert(mode)
    data = _png(img, "TIFF" if mode == "F" else "PNG")
    assert np.array_equal(load_mask_file(data), m)


@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_mask_file_alpha_is_foreground(mode):
    m = _circle()
    rgba = np.zeros(m.shape + (4,), np.uint8)
    rgba[..., :3] = 0  # black strokes: the alpha carries the mask
    rgba[..., 3] = m * 255
    img = Image.fromarray(rgba, "RGBA").convert(mode)
    assert np.array_equal(load_mask_file(_png(img)), m)


def test_opaque_rgba_falls_back_to_grey():
    m = _circle()
    rgba = np.full(m.shape + (4,), 255, np.uint8)
    rgba[..., :3] = (m * 255)[..., None]
    assert np.array_equal(load_mask_file(_png(Image.fromarray(rgba, "RGBA"))), m)


def test_as_mask_array_conventions():
    assert as_mask_array(np.array([[True, False]])).tolist() == [[1.0, 0.0]]
    assert as_mask_array(np.array([[0, 255]], np.uint8)).tolist() == [[0.0, 1.0]]
    assert as_mask_array(np.array([[0.0, 0.25]])).tolist() == [[0.0, 0.25]]
    assert as_mask_array(np.array([[0, 1]], np.uint8)).tolist() == [[0.0, 1.0]]  # max <= 1: kept as is


@pytest.mark.parametrize(
    "bad,msg",
    [
        (None, "missing"),
        (np.zeros((2, 2, 3)), "2-D"),
        (np.array([["a", "b"]]), "numbers"),
        (np.array([[np.nan, 0]]), "NaN"),
        (np.array([[-1, 0]]), "negative"),
        (np.zeros((0, 3)), "empty"),
        (Image.new("L", (2, 2)), "PIL"),
    ],
)
def test_as_mask_array_errors_name_the_argument(bad, msg):
    with pytest.raises(InputError, match=f"ref_mask.*{msg}|{msg}"):
        as_mask_array(bad, name="ref_mask")


def test_the_content_hash_of_pixels_follows_the_pixels():
    from masc_ui.imaging import as_input_image

    a = Image.new("RGB", (4, 4), (1, 2, 3))
    assert as_input_image(a).sha256 == as_input_image(a.copy()).sha256 == as_input_image(a.convert("RGBA")).sha256
    assert as_input_image(a).sha256 != as_input_image(Image.new("RGB", (4, 4), (1, 2, 4))).sha256
    assert as_input_image(Image.new("RGB", (2, 8))).sha256 != as_input_image(Image.new("RGB", (8, 2))).sha256


def test_a_sample_holds_input_images_decoded_once():
    """PIL images given to `Sample` become InputImages; an InputImage is kept as it is (same object)."""
    from masc_ui.imaging import open_image
    from masc_ui.metrics.sample import Sample

    jpeg = open_image(_file_bytes(Image.new("RGB", (8, 6), (9, 9, 9)), "JPEG"), name="reference image 1")
    sample = Sample(refs=[jpeg], out=Image.new("RGB", (5, 5)))
    assert sample.refs == (jpeg,) and sample.refs[0] is jpeg and isinstance(sample.refs, tuple)
    assert sample.out.media_type == "image/png" and sample.out.size == (5, 5)
    with pytest.raises(InputError, match=r"Sample.out: not an image"):
        Sample(refs=(jpeg,), out=b"junk")


# --- InputImage: decoded once, one content hash -----------------------------------------------------------------


def _file_bytes(img, fmt: str) -> bytes:
    import io

    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def test_open_image_keeps_uploaded_jpeg_bytes_and_hashes_them():
    import hashlib

    from masc_ui.imaging import open_image

    data = _file_bytes(Image.new("RGB", (16, 12), (200, 10, 10)), "JPEG")
    img = open_image(data, name="output image")
    assert img.data == data and img.media_type == "image/jpeg"
    assert img.sha256 == hashlib.sha256(data).hexdigest()
    assert img.size == (16, 12) and img.pixels.mode == "RGB"
    assert open_image(img) is img  # already decoded: returned as it is


def test_open_image_of_pixels_is_a_deterministic_png():
    from masc_ui.imaging import open_image

    arr = np.random.default_rng(0).integers(0, 256, (9, 7, 3), dtype=np.uint8)
    a, b = open_image(arr), open_image(Image.fromarray(arr))
    assert a.media_type == "image/png" and a == b and a.sha256 == b.sha256
    assert np.array_equal(np.asarray(load_image(a.data)), arr)  # lossless: decoding the bytes gives the pixels


def test_open_image_of_other_formats_stores_png_and_notes_transparency():
    from masc_ui.imaging import open_image

    bmp = open_image(_file_bytes(Image.new("RGB", (4, 4), (1, 2, 3)), "BMP"))
    assert bmp.media_type == "image/png"
    rgba = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    clear = open_image(_file_bytes(rgba, "PNG"), name="reference image 1")
    assert clear.media_type == "image/png" and clear.pixels.getpixel((0, 0)) == (255, 255, 255)
    assert clear.notes and "reference image 1" in clear.notes[0] and "transparency" in clear.notes[0]
    opaque = open_image(_file_bytes(Image.new("RGBA", (4, 4), (5, 5, 5, 255)), "PNG"))
    assert opaque.notes == ()
