"""The DreamBench++ judge (`dbpp_cp`, `dbpp_pf`) asking an OpenAI-compatible API: a real HTTP server on loopback
(scripted answers, malformed ones, 429s, timeouts), the exact conversation compared with the benchmark's rubric."""

import base64
import hashlib
import io
import json
import math
import re

import numpy as np
import pytest
from PIL import Image

from masc_ui.errors import InputError, ModelUnavailableError
from masc_ui.imaging import open_image
from masc_ui.metrics.judges import dreambench_prompts as prompts
from masc_ui.metrics.registry import get_scorer, metrics_for, score_metrics
from masc_ui.metrics.sample import Sample
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.settings import Settings
from tests.openai_server import FakeOpenAI

SCRIPTS_RULE = r"(score|Score):\s*[a-zA-Z]*\s*(\d+)"
"""The regex of DreamBench++'s eval scripts, written here again."""


@pytest.fixture()
def server():
    fake = FakeOpenAI()
    fake.default = lambda body: ("answer", "Score: 3")
    yield fake
    fake.close()


def _settings(server, **changes) -> Settings:
    base = dict(
        judge_base_url=server.url,
        judge_api_key="test-key",
        dbpp_api_model="judge-model",
        judge_backoff_s=0.01,
        judge_timeout_s=2.0,
        judge_max_attempts=3,
        judge_workers=2,
    )
    return Settings(profile="demo", device="cpu", **{**base, **changes})


def _image(seed: int, size=(96, 64)) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


def _sample(seed: int, prompt: str = " a cat on the beach ", refs: int = 1) -> Sample:
    return Sample(refs=tuple(_image(100 + seed + k) for k in range(refs)), out=_image(seed), prompt=prompt)


def _jpeg_url(image: Image.Image) -> str:
    """The scripts' image preparation, written again: resize to 512x512 (Pillow's default filter), JPEG, base64."""
    buffer = io.BytesIO()
    image.convert("RGB").resize((512, 512)).save(buffer, format="JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def _score(name, settings, samples, models=None, **params):
    return get_scorer(name, settings, models or ModelRegistry(), **params).score(samples)


def test_the_published_rubric_files_are_reproduced_byte_for_byte():
    expected = {  # sha256sum of yuangpeng/dreambench_plus dreambench_plus/prompts/*_full.txt
        "CP_USER_PROMPT": "01f964fa90af86ff9489f66775f642485f90c1351628b861e0f4fd26f300c00c",
        "CP_ASSISTANT_PROMPT": "6e915593038f996827da4f087f0ea30bda2fffbd233eb0d5b93bd1a952af3b62",
        "PF_USER_PROMPT": "7fca8de6285c01e337d1279b648d1c2fb46101af1327e7cf2a08053775362f32",
        "PF_ASSISTANT_PROMPT": "77622056433fcd4d91ca644d0ec1af04e4e59f0dcc86ec6169f52994b5be745a",
        "CP_STYLE_USER_PROMPT": "d55d95c08ff59af37e384246d83b70bed8a7982e3d31da1e895dad29c8790b84",
        "CP_STYLE_ASSISTANT_PROMPT": "734e58952797bc2b6aabbf0fb3e8a373ec7e9c48a473923ca23a484427ec7d4d",
    }
    for name, digest in expected.items():
        assert hashlib.sha256(getattr(prompts, name).encode()).hexdigest() == digest, name


def test_cp_sends_the_rubric_conversation_and_reads_the_score(server):
    sample = _sample(0)
    [value] = _score("dbpp_cp", _settings(server), [sample])
    assert value.value == 3.0 and value.reason is None
    assert value.extras["answer"] == "Score: 3" and value.extras["score"] == 3
    [request] = server.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer test-key"
    assert body["model"] == "judge-model" and body["temperature"] == 1.0 and "seed" not in body
    assert body["messages"] == [
        {"role": "user", "content": prompts.CP_USER_PROMPT},
        {"role": "assistant", "content": prompts.CP_ASSISTANT_PROMPT},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": _jpeg_url(sample.refs[0].pixels), "detail": "high"}},
                {"type": "image_url", "image_url": {"url": _jpeg_url(sample.out.pixels), "detail": "high"}},
            ],
        },
    ]
    sent = Image.open(io.BytesIO(base64.b64decode(body["messages"][2]["content"][1]["image_url"]["url"][23:])))
    assert sent.format == "JPEG" and sent.size == (512, 512)
    prov = value.provenance
    params = prov["params"]
    assert prov["model_id"] == "judge-model" and prov["device"] == "api" and prov["revision"] is None
    assert params["judge"] == "api" and params["base_url"] == server.url and params["temperature"] == 1.0
    assert params["template_version"] == "dreambench-plus-2024-06-24-full/cp-subject" and params["rubric"] == "subject"
    assert params["template_files"] == ["user_prompt_subject_full.txt", "gpt_prompt_subject_full.txt"]
    assert params["scale"] == "rating" and params["range"] == [0.0, 4.0] and SCRIPTS_RULE in params["parse_rule"]
    assert "test-key" not in json.dumps(prov) and "test-key" not in json.dumps(value.extras)


def test_pf_sends_the_prompt_then_the_output(server):
    sample = _sample(1, prompt="  a cat wearing a hat\n")
    server.script = [("answer", "Analysis: the hat is there.\nScore: 4")]
    [value] = _score("dbpp_pf", _settings(server, judge_temperature=0.2, judge_seed=7), [sample])
    assert value.value == 4.0 and value.extras["answer"] == "Analysis: the hat is there.\nScore: 4"
    body = server.requests[0]["body"]
    assert body["temperature"] == 0.2 and body["seed"] == 7
    assert body["messages"] == [
        {"role": "user", "content": prompts.PF_USER_PROMPT},
        {"role": "assistant", "content": prompts.PF_ASSISTANT_PROMPT},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a cat wearing a hat"},
                {"type": "image_url", "image_url": {"url": _jpeg_url(sample.out.pixels), "detail": "high"}},
            ],
        },
    ]
    assert value.provenance["params"]["template_version"] == "dreambench-plus-2024-06-24-full/pf-text"


def test_the_style_rubric_is_a_parameter_of_cp(server):
    [value] = _score("dbpp_cp", _settings(server), [_sample(2)], rubric="style")
    messages = server.requests[0]["body"]["messages"]
    assert messages[0]["content"] == prompts.CP_STYLE_USER_PROMPT
    assert messages[1]["content"] == prompts.CP_STYLE_ASSISTANT_PROMPT
    assert value.provenance["params"]["template_version"].endswith("/cp-style")


@pytest.mark.parametrize(
    "answer",
    [
        "Score: 3",
        "score: 0",
        "Score: Good 3",
        "The image is fine.",
        "Score: 2\nScore: 3",
        "**Score:** 3",
        "Score: [3]",
        "Score: 7",
        "Score:4 - excellent",
        "",
    ],
)
def test_the_score_is_parsed_as_the_scripts_do(server, answer):
    server.script = [("answer", answer)]
    [value] = _score("dbpp_cp", _settings(server), [_sample(3)])
    found = [int(n) for _, n in re.findall(SCRIPTS_RULE, answer)]
    if len(found) == 1 and 0 <= found[0] <= 4:
        assert value.value == found[0] and value.reason is None
    else:
        assert math.isnan(value.value) and value.extras["answer"] == answer
        assert repr(" ".join(answer.split())) in value.reason  # the answer quoted as the reason
        if len(found) != 1:
            assert f"holds {'no score' if not found else f'{len(found)} scores'}" in value.reason
        else:
            assert f"score {found[0]} is outside 0..4" in value.reason


def test_429_and_timeouts_are_retried_then_answered(server):
    server.script = [("status", 429, "0"), ("sleep", 1.0, "Score: 1"), ("answer", "Score: 2")]
    [value] = _score("dbpp_cp", _settings(server, judge_timeout_s=0.3), [_sample(4)])
    assert value.value == 2.0
    [entry] = value.extras["answers"]
    assert entry["attempts"] == 3 and entry["failures"] == ["HTTP 429", "timeout after 0.3 s"]
    assert entry["served_model"] == "judge-2024-11-20" and entry["cached"] is False


def test_persistent_failures_and_refusals_are_nan_with_the_reason(server):
    server.script = [("status", 503)] * 3 + [("status", 401), ("garbage",)]
    a, b, c = _score("dbpp_pf", _settings(server, judge_workers=1), [_sample(5), _sample(6), _sample(7)])
    assert math.isnan(a.value) and "no answer after 3 attempts (HTTP 503, HTTP 503, HTTP 503)" in a.reason
    assert math.isnan(b.value) and "the judge answered HTTP 401 (scripted 401); not retried" in b.reason
    assert math.isnan(c.value) and "could not be read" in c.reason
    assert all(v.reason.startswith("error: no answer from the judge: ") for v in (a, b, c))  # batch --retry-failed


def test_answers_are_cached_by_content_prompt_model_and_template(server):
    models = ModelRegistry()
    settings = _settings(server)
    first = _score("dbpp_cp", settings, [_sample(8)], models)
    again = _score("dbpp_cp", settings, [_sample(8)], models)  # a new scorer, same process
    assert len(server.requests) == 1 and again[0].value == first[0].value == 3.0
    assert again[0].extras["answers"][0]["cached"] is True
    _score("dbpp_pf", settings, [_sample(8)], models)  # another criterion
    _score("dbpp_pf", settings, [_sample(8, prompt="a dog")], models)  # another prompt
    _score("dbpp_cp", settings, [_sample(8)], models, rubric="style")  # another template
    _score("dbpp_cp", settings.replace(dbpp_api_model="other-model"), [_sample(8)], models)  # another model
    assert len(server.requests) == 5
    _score("dbpp_cp", settings.replace(dbpp_api_model="other-model"), [_sample(8)], models)
    assert len(server.requests) == 5


def test_failures_and_answers_without_a_score_are_asked_again(server):
    models = ModelRegistry()
    server.script = [("answer", "no idea"), ("status", 400)]
    assert math.isnan(_score("dbpp_cp", _settings(server), [_sample(9)], models)[0].value)
    assert math.isnan(_score("dbpp_cp", _settings(server), [_sample(9)], models)[0].value)
    assert _score("dbpp_cp", _settings(server), [_sample(9)], models)[0].value == 3.0
    assert len(server.requests) == 3


def test_a_batch_equals_one_at_a_time(server):
    def by_content(body):
        digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
        return ("answer", f"Score: {digest[0] % 5}")

    server.default = by_content
    samples = [_sample(10 + k, prompt=f"a cat number {k}") for k in range(4)]
    for name in ("dbpp_cp", "dbpp_pf"):
        together = _score(name, _settings(server, judge_workers=3), samples)
        alone = [_score(name, _settings(server), [s])[0] for s in samples]
        assert [v.value for v in together] == [v.value for v in alone]
        assert len({v.value for v in together}) > 1


def test_the_same_image_twice_in_a_batch_is_asked_once(server):
    [a, b] = _score("dbpp_cp", _settings(server), [_sample(11), _sample(11)])
    assert len(server.requests) == 1 and a.value == b.value == 3.0


def test_several_references_are_asked_one_by_one_and_averaged(server):
    server.script = [("answer", "Score: 1"), ("answer", "Score: 4")]
    [value] = _score("dbpp_cp", _settings(server, judge_workers=1), [_sample(12, refs=2)])
    assert value.value == 2.5 and value.extras["scores"] == [1, 4]
    assert value.extras["answer"] == "reference 1: Score: 1\n\nreference 2: Score: 4"
    assert [e["ref"] for e in value.extras["answers"]] == [0, 1]
    server.script = [("answer", "Score: 1"), ("answer", "unsure")]
    [broken] = _score("dbpp_cp", _settings(server, judge_workers=1), [_sample(13, refs=2)])
    assert math.isnan(broken.value) and broken.reason.startswith("reference 2: the judge's answer holds no score")
    server.script = [("answer", "Score: 1"), ("status", 400)]
    [failed] = _score("dbpp_cp", _settings(server, judge_workers=1), [_sample(14, refs=2)])
    assert failed.reason.startswith("error: reference 2: no answer from the judge: the judge answered HTTP 400")


def test_the_call_cap_stops_sending(server):
    scorer = get_scorer("dbpp_pf", _settings(server, judge_max_calls=2, judge_workers=1), ModelRegistry())
    values = scorer.score([_sample(20), _sample(21), _sample(22)])
    assert [v.value for v in values[:2]] == [3.0, 3.0] and math.isnan(values[2].value)
    assert "the judge call cap of 2 requests for this run is reached (MASC_JUDGE_MAX_CALLS)" in values[2].reason
    assert values[2].reason.startswith("error: ")
    assert len(server.requests) == 2 and scorer.budget.calls == 2


def test_openai_without_a_key_is_refused_and_left_out_of_all():
    settings = Settings(profile="demo")
    with pytest.raises(ModelUnavailableError, match="needs an API key: set MASC_JUDGE_API_KEY.*MASC_DBPP_JUDGE=local"):
        get_scorer("dbpp_cp", settings).score([_sample(0)])
    image = [_sample(0)]
    assert not {"dbpp_cp", "dbpp_pf"} & {s.name for s in metrics_for(image, settings)}
    assert {"dbpp_cp", "dbpp_pf"} <= {s.name for s in metrics_for(image, settings.replace(judge_api_key="k"))}
    assert {"dbpp_cp", "dbpp_pf"} <= {s.name for s in metrics_for(image, settings.replace(dbpp_judge="local"))}
    local = settings.replace(dbpp_judge="local")
    assert not {"dbpp_cp", "dbpp_pf"} & {s.name for s in metrics_for(image, local, video=True)}  # not per frame


def test_score_metrics_runs_the_judge_with_the_other_metrics(server, demo_settings):
    settings = demo_settings.replace(
        judge_base_url=server.url, judge_api_key="k", dbpp_api_model="judge-model", judge_backoff_s=0.01
    )
    got = score_metrics([_sample(30)], "clip_i,dbpp_cp,dbpp_pf", settings)
    assert got["dbpp_cp"][0].value == got["dbpp_pf"][0].value == 3.0 and math.isfinite(got["clip_i"][0].value)
    assert len(server.requests) == 2


def test_bad_input_gets_a_clear_error(server):
    settings = _settings(server)
    no_ref = Sample(refs=(), out=_image(0), prompt="a cat")
    with pytest.raises(InputError, match="dbpp_cp needs reference, which sample 0 lacks"):
        _score("dbpp_cp", settings, [no_ref])
    assert "needs reference" in get_scorer("dbpp_cp", settings).score([no_ref], missing="nan")[0].reason
    with pytest.raises(InputError, match="dbpp_pf needs prompt, which sample 0 lacks"):
        _score("dbpp_pf", settings, [Sample(refs=(), out=_image(0), prompt="  ")])
    with pytest.raises(InputError, match="expected masc_ui.metrics.Sample"):
        _score("dbpp_pf", settings, ["not a sample"])
    with pytest.raises(InputError, match="rubric must be one of subject, style"):
        get_scorer("dbpp_cp", settings, rubric="painting")
    with pytest.raises(InputError, match="metric dbpp_pf has no parameter"):
        get_scorer("dbpp_pf", settings, rubric="style")
    with pytest.raises(InputError, match="dbpp_judge must be one of api, local"):
        settings.replace(dbpp_judge="remote")
    with pytest.raises(InputError, match="dbpp_max_new_tokens must be within"):
        settings.replace(dbpp_max_new_tokens=0)
    with pytest.raises(InputError, match="dbpp_api_model must name a chat model"):
        settings.replace(dbpp_api_model=" ")
    assert server.requests == []


def test_an_image_with_transparency_is_sent_on_white(server):
    rgba = Image.new("RGBA", (40, 30), (255, 0, 0, 0))
    sample = Sample(refs=(rgba,), out=_image(0), prompt="x")
    _score("dbpp_cp", _settings(server), [sample])
    url = server.requests[0]["body"]["messages"][2]["content"][0]["image_url"]["url"]
    assert url == _jpeg_url(open_image(rgba).pixels)
    sent = np.asarray(Image.open(io.BytesIO(base64.b64decode(url[23:]))))
    assert sent.min() >= 250  # white, not black or red
