"""Video inputs: real MP4/WebM files encoded here, decoded back through `masc_ui.imaging`."""

import hashlib
import io
import threading

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError
from masc_ui.imaging import (
    ALL_FRAMES,
    FrameRule,
    InputImage,
    InputVideo,
    VideoLimits,
    iter_frames,
    linspace_indices,
    natural_frame_jpeg,
    open_video,
    read_frames,
    stride_indices,
    without_metadata,
)
from tests.video_files import CODECS, dreambooth_frames, encode_video, frame_number, synthetic_frames


@pytest.fixture(scope="module", params=["mp4", "webm"])
def clip(request) -> tuple[str, bytes]:
    return request.param, encode_video(synthetic_frames(30), request.param, fps=24)


def test_open_video_counts_frames_and_hashes_the_file(clip, tmp_path):
    container, data = clip
    path = tmp_path / f"clip.{container}"
    path.write_bytes(data)
    video = open_video(path, name="generated video")
    assert isinstance(video, InputVideo)
    assert video.frame_count == 30 and video.size == (96, 64) and video.fps == pytest.approx(24.0)
    assert video.duration_s == pytest.approx(30 / 24, abs=1e-3)
    assert video.sha256 == hashlib.sha256(data).hexdigest() and video.data == data
    assert video.media_type == {"mp4": "video/mp4", "webm": "video/webm"}[container]
    assert video.codec == {"mp4": "h264", "webm": "vp9"}[container]
    assert open_video(video) is video and open_video(data) == video


@pytest.mark.parametrize("count", [1, 2, 7, 16, 29, 30, 32, 100])
@pytest.mark.parametrize("frame_count", [1, 5, 30, 81, 121])
def test_sampling_rules_match_opens2v(frame_count, count):
    """linspace = numpy.linspace(0, T - 1, n, dtype=int) (OpenS2V/decord); stride = i * max(T // n, 1) < T."""
    assert linspace_indices(frame_count, count) == list(np.linspace(0, frame_count - 1, count, dtype=int))
    step = max(frame_count // count, 1)
    assert stride_indices(frame_count, count) == [i * step for i in range(count) if i * step < frame_count]
    assert FrameRule("linspace", count).indices(frame_count) == linspace_indices(frame_count, count)


def test_linspace_truncates_toward_zero_and_keeps_first_and_last():
    assert linspace_indices(30, 32)[:3] == [0, 0, 1] and linspace_indices(30, 32)[-1] == 29
    assert linspace_indices(49, 32)[1] == 1  # 48 / 31 = 1.548... -> 1, not rounded to 2
    assert linspace_indices(1, 32) == [0] * 32
    assert FrameRule("stride", 16).describe(40) == {
        "rule": "stride",
        "count": 16,
        "frame_count": 40,
        "indices": [2 * i for i in range(16)],
    }


def test_the_all_rule_reads_every_frame_once():
    assert ALL_FRAMES.indices(5) == [0, 1, 2, 3, 4]
    assert ALL_FRAMES.describe(3) == {"rule": "all", "count": 3, "frame_count": 3, "indices": [0, 1, 2]}
    with pytest.raises(InputError, match="at least one frame"):
        ALL_FRAMES.indices(0)
    with pytest.raises(InputError, match="frame rule must be one of"):
        FrameRule("every", 1)


def test_decoded_frames_are_the_sampled_ones(clip):
    _, data = clip
    video = open_video(data, name="clip")
    indices = linspace_indices(video.frame_count, 32)
    frames = read_frames(video, indices)
    assert [f.index for f in frames] == indices
    assert [frame_number(f.image.pixels) for f in frames] == indices
    assert all(isinstance(f.image, InputImage) and f.image.size == (96, 64) for f in frames)
    assert frames[0].image is frames[1].image  # a repeated index is the same decoded frame
    assert frames[5].time_s == pytest.approx(indices[5] / 24, abs=1e-3)
    assert frames[3].image.name == f"clip frame {indices[3]}"


def test_iter_frames_gives_what_read_frames_gives_and_stops_its_thread(clip):
    _, data = clip
    video = open_video(data)
    indices = stride_indices(video.frame_count, 16)
    eager = read_frames(video, indices)
    lazy = list(iter_frames(video, indices, prefetch=2))
    assert [f.image.sha256 for f in lazy] == [f.image.sha256 for f in eager]
    it = iter_frames(video, indices, prefetch=1)
    next(it)
    it.close()
    assert not [t for t in threading.enumerate() if t.name.startswith(f"decode {video.sha256[:8]}")]


def test_iter_frames_raises_decoding_errors_in_the_caller():
    video = open_video(encode_video(synthetic_frames(10), "webm"))
    lying = InputVideo(**{**video.__dict__, "frame_count": 12})
    with pytest.raises(InputError, match="ended before frame 11"):
        list(iter_frames(lying, [0, 5, 11]))
    with pytest.raises(InputError, match="non-decreasing"):
        read_frames(video, [3, 1])
    with pytest.raises(InputError, match=r"0\.\.9"):
        read_frames(video, [0, 10])
    with pytest.raises(InputError, match="prefetch"):
        iter_frames(video, [0], prefetch=0)


@pytest.mark.parametrize("container", ["mp4", "webm"])
def test_dreambooth_photos_survive_a_round_trip(shared_data, container):
    photos = dreambooth_frames(shared_data, "dog")
    video = open_video(encode_video(photos, container, fps=8), name="dog photos")
    assert video.frame_count == len(photos) and video.size == photos[0].size
    frames = read_frames(video, range(video.frame_count))
    for photo, frame in zip(photos, frames):
        diff = np.abs(np.asarray(photo, np.float32) - np.asarray(frame.image.pixels, np.float32)).mean()
        assert diff < 12, diff  # lossy, but the same photo in the same place


def test_damaged_files_are_refused_clearly(tmp_path):
    mp4 = encode_video(synthetic_frames(30), "mp4")
    webm = encode_video(synthetic_frames(30), "webm")
    with pytest.raises(InputError, match="not a video FFmpeg can read"):
        open_video(np.random.default_rng(0).bytes(5000), name="noise")
    with pytest.raises(InputError, match="(not a video FFmpeg can read|damaged or truncated|truncated)"):
        open_video(mp4[: len(mp4) // 2], name="half mp4")
    for data in (np.random.default_rng(0).bytes(5000), mp4[: len(mp4) // 2], mp4[:4000]):
        with pytest.raises(InputError) as refused:
            open_video(data, name="video")
        assert "Errno" not in str(refused.value) and "<none>" not in str(refused.value), refused.value  # words only
    with pytest.raises(InputError, match="half webm: the file looks truncated"):
        open_video(webm[: len(webm) // 2], name="half webm")
    with pytest.raises(InputError, match="truncated"):
        open_video(webm[: int(len(webm) * 0.9)], name="most of a webm")
    with pytest.raises(InputError, match="the file is empty"):
        open_video(b"", name="empty")
    with pytest.raises(InputError, match="file not found"):
        open_video(tmp_path / "missing.mp4")
    with pytest.raises(InputError, match="is a folder"):
        open_video(tmp_path)


@pytest.mark.parametrize("container", ["mp4", "webm"])
def test_a_video_without_frames_is_refused(container):
    import av

    buf = io.BytesIO()
    with av.open(buf, mode="w", format=container) as out:
        stream = out.add_stream(CODECS[container], rate=24)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        out.start_encoding()  # header only, no frame
    with pytest.raises(InputError, match="zero frames: .*(no decodable frame|not a single frame|not a video)"):
        open_video(buf.getvalue(), name="zero frames")


def test_a_file_without_a_video_stream_is_refused():
    import av

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="matroska") as out:
        stream = out.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
        frame.sample_rate = 8000
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    with pytest.raises(InputError, match="audio: the file holds no video stream"):
        open_video(buf.getvalue(), name="audio")


def test_limits_refuse_huge_videos(tmp_path):
    data = encode_video(synthetic_frames(30), "mp4", fps=10)
    path = tmp_path / "clip.mp4"
    path.write_bytes(data)
    with pytest.raises(InputError, match=r"clip\.mp4\): the file is .* KiB, over the limit of .* KiB"):
        open_video(path, limits=VideoLimits(max_bytes=len(data) - 1))
    with pytest.raises(
        InputError, match=r"video: the file is .* KiB, over the limit of 1\.0 KiB \(MASC_MAX_VIDEO_MB\)"
    ):
        open_video(data, limits=VideoLimits(max_bytes=1024))
    with pytest.raises(InputError, match=r"96x64 = 6,144 pixels are over the limit of 6,000"):
        open_video(data, limits=VideoLimits(max_pixels=6000))
    with pytest.raises(InputError, match="more than 29 frames"):
        open_video(data, limits=VideoLimits(max_frames=29))
    with pytest.raises(InputError, match=r"lasts 3\.0 s, over the limit of 2\.5 s"):
        open_video(data, limits=VideoLimits(max_seconds=2.5))
    assert open_video(data, limits=VideoLimits(max_frames=30, max_seconds=3.0, max_pixels=6144)).frame_count == 30


def test_limits_from_settings():
    from masc_ui.settings import Settings

    limits = VideoLimits.from_settings(
        Settings(max_video_mb=2, max_video_seconds=5, max_video_frames=40, max_video_pixels=1000)
    )
    assert limits == VideoLimits(max_bytes=2 * 1024 * 1024, max_seconds=5.0, max_frames=40, max_pixels=1000)
    with pytest.raises(InputError, match="max_video_mb"):
        Settings(max_video_mb=0)
    with pytest.raises(InputError, match="max_video_seconds"):
        Settings(max_video_seconds=0)
    with pytest.raises(InputError, match="max_video_pixels"):
        Settings(max_video_pixels=50_000_000)


@pytest.mark.parametrize(
    ("size", "expected"),
    [((1280, 720), (512, 288)), ((720, 1280), (288, 512)), ((100, 60), (512, 307)), ((512, 512), (512, 512))],
)
def test_natural_frames_are_512_px_jpegs(size, expected):
    frame = Image.fromarray(np.random.default_rng(1).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8))
    data = natural_frame_jpeg(frame)
    decoded = Image.open(io.BytesIO(data))
    assert decoded.format == "JPEG" and decoded.size == expected


def _tags(data: bytes) -> dict[str, str]:
    import av

    with av.open(io.BytesIO(data)) as container:
        return {**container.metadata, **container.streams.video[0].metadata}


def test_without_metadata_keeps_every_frame_and_drops_the_tags(clip):
    container, _ = clip
    data = encode_video(synthetic_frames(12), container, metadata={"title": "made by method-b", "comment": "seed 7"})
    video = open_video(data, name="generated video")
    assert _tags(data)["title"] == "made by method-b"  # the tag is there to be dropped
    clean = without_metadata(video)
    tags = _tags(clean)
    assert "title" not in tags and "comment" not in tags and "method-b" not in str(tags)
    assert b"method-b" not in clean and b"method-b" in data
    if container == "mp4":  # the encoder's name and settings inside the H.264 stream (an SEI message) go too
        assert b"x264 - core" in data and b"x264" not in clean
    rewritten = open_video(clean, name="rewritten")
    assert rewritten.media_type == video.media_type and rewritten.frame_count == 12
    every = list(range(12))
    for before, after in zip(read_frames(video, every), read_frames(rewritten, every)):  # packets copied: same pixels
        assert np.array_equal(np.asarray(before.image.pixels), np.asarray(after.image.pixels))
    if container == "mp4":  # the index first: a browser plays before the download ends
        assert clean.find(b"moov") < clean.find(b"mdat")


def test_without_metadata_refuses_containers_it_cannot_rewrite(clip):
    import dataclasses

    video = open_video(clip[1])
    with pytest.raises(InputError, match="video/x-msvideo file cannot be rewritten"):
        without_metadata(dataclasses.replace(video, media_type="video/x-msvideo"))
    with pytest.raises(InputError, match="could not be rewritten without its metadata"):
        without_metadata(dataclasses.replace(video, data=b"not a video at all" * 8))


@pytest.mark.parametrize("container", ["mp4", "webm"])
def test_times_count_from_the_first_frame_whatever_the_file_starts_at(container):
    video = open_video(encode_video(synthetic_frames(12), container, fps=8, start_s=1.0), name="a late cut")
    assert video.frame_times_s == pytest.approx([i / 8 for i in range(12)]) and video.duration_s == pytest.approx(1.5)
    frames = read_frames(video, [0, 5, 11])
    assert [f.time_s for f in frames] == pytest.approx([0.0, 5 / 8, 11 / 8])
    assert [frame_number(f.image.pixels) for f in frames] == [0, 5, 11]
    assert video.time_of(11) == pytest.approx(11 / 8)
