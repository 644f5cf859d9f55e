"""NaturalScore against a real HTTP server on loopback that speaks the OpenAI chat-completions protocol."""

import base64
import io
import json
import math

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import ModelUnavailableError
from masc_ui.imaging import open_video, read_frames, stride_indices
from masc_ui.metrics.registry import get_scorer
from masc_ui.metrics.video.naturalscore import RUBRIC, RUBRIC_SHA256, parse_rating
from masc_ui.metrics.video.sample import VideoSample
from masc_ui.settings import Settings
from tests.openai_server import FakeOpenAI
from tests.video_files import encode_video, frame_number, synthetic_frames


@pytest.fixture()
def server():
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def video():
    return open_video(encode_video(synthetic_frames(40), "mp4"), name="clip")


def _settings(server, **changes) -> Settings:
    base = dict(
        judge_base_url=server.url,
        judge_api_key="test-key",
        judge_model="judge-model",
        judge_backoff_s=0.01,
        judge_timeout_s=2.0,
        judge_max_attempts=3,
        judge_workers=1,
    )
    return Settings(profile="demo", device="cpu", **{**base, **changes})


def _score(settings, *videos):
    return get_scorer("naturalscore", settings).score([VideoSample(video=v) for v in videos])


def test_good_answers_and_the_request_payload(server, video):
    server.script = [("answer", "4"), ("answer", "**5**"), ("answer", "3 — likely AI")]
    [value] = _score(_settings(server), video)
    assert value.reason is None and value.value == pytest.approx(((4 + 5 + 3) / 3 - 1) / 4)
    assert value.extras["ratings"] == [4.0, 5.0, 3.0] and value.extras["mean_rating"] == pytest.approx(4.0)
    assert [a["answer"] for a in value.extras["answers"]] == ["4", "**5**", "3 — likely AI"]
    assert value.extras["answers"][0]["served_model"] == "judge-2024-11-20"
    assert value.extras["frames"]["indices"] == stride_indices(40, 16) == [2 * i for i in range(16)]
    assert len(server.requests) == 3
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer test-key"
    body = request["body"]
    assert body["model"] == "judge-model" and "temperature" not in body and "seed" not in body
    [message] = body["messages"]
    assert message["role"] == "user"
    parts = message["content"]
    assert len(parts) == 17 and parts[-1] == {"type": "text", "text": RUBRIC}
    expected = [f.index for f in read_frames(video, stride_indices(40, 16))]
    for part, index in zip(parts[:16], expected):
        assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/jpeg;base64,")
        img = Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1])))
        assert img.format == "JPEG" and img.size == (512, 341)  # 96x64 -> long side 512
        assert frame_number(img.resize((96, 64), Image.Resampling.BOX)) == index
    prov = value.provenance
    assert prov["model_id"] == "judge-model" and prov["params"]["rubric"] == RUBRIC
    assert prov["params"]["rubric_sha256"] == RUBRIC_SHA256 and prov["params"]["calls"] == 3
    assert prov["params"]["temperature"] is None and "test-key" not in json.dumps(prov)


def test_temperature_and_seed_are_sent_and_recorded(server, video):
    [value] = _score(_settings(server, judge_temperature=0.0, judge_seed=7, judge_workers=3), video)
    assert all(r["body"]["temperature"] == 0.0 and r["body"]["seed"] == 7 for r in server.requests)
    assert value.provenance["params"]["temperature"] == 0.0 and value.provenance["params"]["seed"] == 7
    assert value.value == pytest.approx(0.75)


def test_an_unparsable_answer_is_nan_with_the_reason_and_the_raw_answer(server, video):
    server.script = [("answer", "4"), ("answer", "I cannot judge this video."), ("answer", "9")]
    [value] = _score(_settings(server), video)
    assert math.isnan(value.value)
    assert "call 2 of 3: the answer holds no rating 1-5 ('I cannot judge this video.')" in value.reason
    assert "call 3 of 3: the answer's first number 9 is not a rating 1-5" in value.reason
    assert [a["answer"] for a in value.extras["answers"]] == ["4", "I cannot judge this video.", "9"]
    assert value.extras["ratings"] == [4.0, None, None]


def test_429_and_500_are_retried_with_backoff(server, video):
    server.script = [("status", 429, "0"), ("status", 500), ("answer", "5"), ("answer", "5"), ("answer", "5")]
    [value] = _score(_settings(server), video)
    assert value.value == pytest.approx(1.0) and len(server.requests) == 5
    first = value.extras["answers"][0]
    assert first["attempts"] == 3 and first["failures"] == ["HTTP 429", "HTTP 500"]


def test_persistent_failures_give_nan_after_the_attempts(server, video):
    server.script = [("status", 503)] * 3
    [value] = _score(_settings(server), video)
    assert math.isnan(value.value) and len(server.requests) == 5  # 3 for call 1, then calls 2 and 3 answer
    assert "call 1 of 3: no answer after 3 attempts (HTTP 503, HTTP 503, HTTP 503)" in value.reason


def test_other_http_errors_are_not_retried(server, video):
    server.script = [("status", 401)]
    [value] = _score(_settings(server), video)
    assert "call 1 of 3: the judge answered HTTP 401 (scripted 401); not retried" in value.reason
    assert value.extras["answers"][0]["attempts"] == 1


def test_timeouts_are_retried_then_reported(server, video):
    server.script = [("sleep", 1.0, "4"), ("sleep", 1.0, "4")]
    [value] = _score(_settings(server, judge_timeout_s=0.3, judge_max_attempts=2), video)
    assert math.isnan(value.value)
    assert "call 1 of 3: no answer after 2 attempts (timeout after 0.3 s, timeout after 0.3 s)" in value.reason


def test_a_body_that_is_not_a_chat_completion_is_reported(server, video):
    server.script = [("garbage",)]
    [value] = _score(_settings(server), video)
    assert math.isnan(value.value) and "call 1 of 3: " in value.reason


def test_the_call_cap_stops_sending(server, video):
    other = open_video(encode_video(synthetic_frames(20), "webm"), name="other")
    scorer = get_scorer("naturalscore", _settings(server, judge_max_calls=4))
    first, second = scorer.score([VideoSample(video=video), VideoSample(video=other)])
    assert first.value == pytest.approx(0.75) and math.isnan(second.value)
    assert "the judge call cap of 4 requests for this run is reached (MASC_JUDGE_MAX_CALLS)" in second.reason
    assert len(server.requests) == 4 and scorer.budget.calls == 4
    assert [a["attempts"] for a in second.extras["answers"]] == [1, 0, 0]
    tokens = get_scorer("naturalscore", _settings(server, judge_max_tokens=150))
    [capped] = tokens.score([VideoSample(video=video)])
    assert "token cap of 150 tokens" in capped.reason and tokens.budget.tokens == 202


def test_openai_without_a_key_is_refused_clearly(video):
    scorer = get_scorer("naturalscore", Settings(profile="demo"))
    with pytest.raises(ModelUnavailableError, match="needs an API key: set MASC_JUDGE_API_KEY"):
        scorer.score([VideoSample(video=video)])


@pytest.mark.parametrize(
    ("answer", "rating"),
    [
        ("4", 4.0),
        ("**2**", 2.0),
        ("Score: 3/5", 3.0),
        ("4.5", 4.5),
        ("1", 1.0),
        ("5.", 5.0),
        ("0", None),
        ("six", None),
        ("", None),
    ],
)
def test_parse_rating(answer, rating):
    assert parse_rating(answer)[0] == rating


def test_short_clips_send_every_frame_once(server):
    short = open_video(encode_video(synthetic_frames(6), "webm"))
    [value] = _score(_settings(server), short)
    assert value.extras["frames"]["indices"] == [0, 1, 2, 3, 4, 5] and value.extras["n_frames"] == 6
    assert len(server.requests[0]["body"]["messages"][0]["content"]) == 7
    assert np.isfinite(value.value)
