"""The DreamBench++ judge metrics `dbpp_cp` (concept preservation) and `dbpp_pf` (prompt following): an integer
0-4 per sample from a chat model asked DreamBench++'s rubric (the recipe: `masc_ui.metrics.judges.dreambench`).

Who answers (`dbpp_judge`):
- `api`: the chat model `dbpp_api_model` (default `gpt-4o-2024-05-13`, the snapshot of DreamBench++'s published
  ratings) behind the OpenAI-compatible API of the `judge_*` settings, through `masc_ui.metrics.judges.client`:
  retries with backoff, one `CallBudget` per scorer (i.e. per run) capping requests and tokens, `judge_workers`
  requests in flight, the key never recorded. Temperature: `judge_temperature`, else 1 (DreamBench++'s).
- `local`: a chat VLM loaded here (`dbpp_local_model`, the profile's `Qwen/Qwen2.5-VL-7B-Instruct`; the demo
  profile's tiny `qwen2.5-vl`), greedy, at most `dbpp_max_new_tokens` tokens (`masc_ui.metrics.judges.local_chat`).

One request per (output image, reference image or prompt, criterion). CP with several references asks once per
reference; the value is the mean of their scores (our rule, DreamBench++ has one reference per sample). A request
that fails, or whose answer holds no parsable score, makes the value NaN with the reason, quoting the answer; when
a request got no answer at all (failure, cost cap) the reason starts with `error: `, so that batch's
`--retry-failed` asks again.

Cache: the answers with a score are kept (an `LruCache` per judge identity, held by the model registry, so every
scorer of a process shares it), keyed by the template version and SHA-256, the output image's content hash and the
reference's hash (CP) or the stripped prompt (PF); the judge identity (mode, model, base URL, temperature and seed,
or local checkpoint, revision, dtype and token limit) chooses the cache. Scoring the same images again asks nothing.
Failures and answers without a score are not kept: a rerun asks again.

Extras: `answer` (the judge's full answer; with several references each answer under `reference <i>:`), `score`,
`answers` (per request: `ref`, `answer`, `score`, `cached`, `attempts`, `failures`, `served_model`, `tokens`, and
the local judge's `details`), `template_version`. Provenance params: criterion, rubric, template version, SHA-256
and file names, parse rule and range, image preparation, the judge (mode, base URL, temperature, seed; local:
generation rule and token limit), and `scale="rating"`, `range=[0, 4]` (agreement maps the values by /4).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ...caching import LruCache
from ...errors import InputError, ModelUnavailableError
from ...imaging import InputImage, InputVideo, as_input_image
from ...models.auto_profile import effective_model_ids, ensure_demo_checkpoints
from ...models.loaded_models import ModelRegistry
from ...models.loading import pick_device, pick_dtype
from ...settings import Settings
from ..base import MetricSpec, Needs, check_inputs, check_params, nan_value
from ..provenance import checkpoint_revision, make_provenance
from ..sample import MetricValue, Sample
from .client import CallBudget, ChatJudge, JudgeConfig, JudgeReply
from .dreambench import (
    IMAGE_DETAIL,
    IMAGE_SIZE,
    JPEG_QUALITY,
    RUBRICS,
    TEMPERATURE,
    Template,
    cp_messages,
    judge_jpeg,
    parse_score,
    pf_messages,
    template,
    template_params,
)
from .local_chat import LocalChatJudge, LocalJudgeInfo

ANSWER_CACHE_SIZE = 100_000
"""Answers kept per judge identity (a few hundred bytes each)."""
WHAT = "the DreamBench++ judge"
LOCAL_WHAT = "DreamBench++ local judge (MASC_DBPP_LOCAL_MODEL)"
NO_KEY_HINT = ", or set MASC_DBPP_JUDGE=local to ask a chat VLM loaded here"
FAILED_PREFIX = "error: "
"""Starts the reason of a value some request of which got no answer (failure, cost cap): `masc-ui batch
--retry-failed` asks those again (`masc_ui.workbench.batch.ERROR_PREFIX`); an answer without a score is a value."""


@dataclass(frozen=True)
class Request:
    """One question to the judge: which sample, which reference (CP; None for PF), the conversation, its cache key."""

    sample: int
    ref: int | None
    messages: list[dict[str, Any]]
    key: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    """A request's outcome: the reply and the score read from it (None with `why` when there is none)."""

    reply: JudgeReply
    score: int | None
    why: str | None
    cached: bool = False


def api_config(settings: Settings) -> JudgeConfig:
    """The API judge of `settings`: `dbpp_api_model` at the `judge_*` endpoint, temperature 1 unless
    `judge_temperature` is set. `ModelUnavailableError` for OpenAI's API without a key."""
    config = JudgeConfig.from_settings(settings, model=settings.dbpp_api_model, what=WHAT, hint=NO_KEY_HINT)
    return replace(config, temperature=TEMPERATURE if settings.judge_temperature is None else config.temperature)


def judge_available(settings: Settings) -> bool:
    """Whether the DreamBench++ judge can be asked without failing at once: always in `local` mode; in `api` mode,
    unless OpenAI's API would be asked without a key."""
    if settings.dbpp_judge == "local":
        return True
    try:
        api_config(settings)
    except ModelUnavailableError:
        return False
    return True


def load_local_judge(model_id: str, settings: Settings) -> LocalChatJudge:
    from ..vqa.chat_vlm import load_chat_vlm

    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    model, processor = load_chat_vlm(model_id, device=device, dtype=dtype, what=LOCAL_WHAT, user="the judge")
    return LocalChatJudge(model, processor, LocalJudgeInfo(model_id, checkpoint_revision(model_id), device, dtype))


class DreamBenchJudgeScorer:
    """`dbpp_cp` or `dbpp_pf` (the spec's name says which); see the module docstring. Params: `rubric` (CP only:
    `subject`, the default, or `style` for style references, as DreamBench++ rates its style collections)."""

    def __init__(
        self, spec: MetricSpec, settings: Settings, models: ModelRegistry | None = None, **params: Any
    ) -> None:
        self.criterion = spec.name.removeprefix("dbpp_")
        check_params(spec.name, params, ["rubric"] if self.criterion == "cp" else [])
        rubric = params.get("rubric", "subject")
        if rubric not in RUBRICS:
            raise InputError(f"{spec.name} parameter rubric must be one of {', '.join(RUBRICS)}, got {rubric!r}")
        self.spec = spec
        self.settings = settings
        self.models = models if models is not None else ModelRegistry()
        self.params = {"rubric": rubric} if self.criterion == "cp" else {}
        self.template: Template = template(self.criterion, rubric)
        self.budget = CallBudget(settings.judge_max_calls, settings.judge_max_tokens)
        self._api: ChatJudge | None = None

    @property
    def needs(self) -> Needs:
        return self.spec.needs

    def api_judge(self) -> ChatJudge:
        """The API client with this scorer's budget (created on first use)."""
        if self._api is None:
            self._api = ChatJudge(api_config(self.settings), self.budget)
        return self._api

    def local_judge(self) -> LocalChatJudge:
        """The loaded local chat VLM (loaded on first use, shared through the model registry)."""
        ensure_demo_checkpoints(self.settings, ("dbpp_judge",), self.models)
        model_id = effective_model_ids(self.settings, self.models).dbpp_judge
        if not model_id:
            raise ModelUnavailableError(f"{LOCAL_WHAT}: no chat VLM is set; set MASC_DBPP_LOCAL_MODEL")
        key = ("dbpp-local-judge", model_id, self.settings.device, self.settings.dtype)
        judge: LocalChatJudge = self.models.get(key, lambda: load_local_judge(model_id, self.settings))
        return judge

    def _judge_fields(self) -> dict[str, Any]:
        """model_id, revision, device, dtype and the judge's own params (they also choose the answer cache)."""
        if self.settings.dbpp_judge == "api":
            config = self.api_judge().config
            return {
                "model_id": config.model,
                "revision": None,
                "device": "api",
                "dtype": None,
                "judge": "api",
                "base_url": config.base_url,
                "temperature": config.temperature,
                "seed": config.seed,
            }
        info = self.local_judge().info
        return {
            "model_id": info.model_id,
            "revision": info.revision,
            "device": info.device,
            "dtype": info.dtype,
            "judge": "local",
            "generation": "greedy",
            "max_new_tokens": self.settings.dbpp_max_new_tokens,
        }

    def provenance(self) -> dict[str, Any]:
        fields = self._judge_fields()
        return make_provenance(
            params={
                **self.params,
                **template_params(self.template),
                "image_size": list(IMAGE_SIZE),
                "jpeg_quality": JPEG_QUALITY,
                "image_detail": IMAGE_DETAIL,
                "references": "mean of the per-reference scores" if self.criterion == "cp" else None,
            },
            **fields,
        )

    def answers(self) -> LruCache[Answer]:
        """The answer cache of this scorer's judge identity (shared by the scorers of a process)."""
        fields = self._judge_fields()
        identity = json.dumps({k: str(v) for k, v in fields.items()}, sort_keys=True)
        cache: LruCache[Answer] = self.models.get(("dbpp-answers", identity), lambda: LruCache(ANSWER_CACHE_SIZE))
        return cache

    def score(self, samples: Sequence[Sample], *, missing: str = "raise") -> list[MetricValue]:
        """One `MetricValue` per sample, in order; see `masc_ui.metrics.base.Scorer.score` for `missing`."""
        samples = list(samples)
        check = check_inputs(self.spec.name, self.needs, samples, missing)
        if not samples:
            return []
        provenance = self.provenance()
        values = [nan_value(self.spec.name, check.reasons.get(i, ""), provenance) for i in range(len(samples))]
        requests = [r for i in check.ok for r in self._requests(i, samples[i])]
        answers = self._ask(requests)
        for i in check.ok:
            mine = [(r, a) for r, a in zip(requests, answers) if r.sample == i]
            values[i] = self._value(mine, provenance)
        return values

    def _requests(self, index: int, sample: Sample) -> list[Request]:
        if isinstance(sample.out, InputVideo):
            raise InputError(
                f"{self.spec.name} judges images: sample {index}'s output is a video; score it with score_metrics, "
                "which asks the judge about its sampled frames"
            )
        out = as_input_image(sample.out, name=f"sample {index}'s output image")
        out_jpeg = judge_jpeg(out)
        head = (self.template.version, self.template.sha256, out.sha256)
        if self.criterion == "pf":
            prompt = (sample.prompt or "").strip()
            return [Request(index, None, pf_messages(prompt, out_jpeg), (*head, "prompt", prompt))]
        refs: list[InputImage] = [
            as_input_image(r, name=f"sample {index}'s reference image {k + 1}") for k, r in enumerate(sample.refs)
        ]
        return [
            Request(index, k, cp_messages(judge_jpeg(ref), out_jpeg, self.template.rubric), (*head, "ref", ref.sha256))
            for k, ref in enumerate(refs)
        ]

    def _ask(self, requests: list[Request]) -> list[Answer]:
        """The answers to `requests`, in order: cached ones as they are, each other distinct one asked once."""
        if not requests:
            return []
        cache = self.answers()
        distinct = {r.key: r for r in requests}
        found: dict[tuple[str, ...], Answer] = {}
        todo = []
        for key, request in distinct.items():
            hit = cache.get(key)
            if hit is None:
                todo.append(request)
            else:
                found[key] = replace(hit, cached=True)
        ask = self._asker()
        workers = self.settings.judge_workers if self.settings.dbpp_judge == "api" else 1
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo) or 1))) as pool:
            for request, reply in zip(todo, pool.map(lambda r: ask(r.messages), todo)):
                answer = read_answer(reply)
                if answer.score is not None:
                    cache.put(request.key, answer)
                found[request.key] = answer
        return [found[r.key] for r in requests]

    def _asker(self) -> Callable[[list[dict[str, Any]]], JudgeReply]:
        return self.api_judge().chat if self.settings.dbpp_judge == "api" else self._local_chat

    def _local_chat(self, messages: list[dict[str, Any]]) -> JudgeReply:
        return self.local_judge().chat(messages, max_new_tokens=self.settings.dbpp_max_new_tokens)

    def _value(self, asked: list[tuple[Request, Answer]], provenance: dict[str, Any]) -> MetricValue:
        entries = [answer_entry(request, answer) for request, answer in asked]
        several = len(asked) > 1
        extras: dict[str, Any] = {
            "answer": "\n\n".join(
                f"reference {r.ref + 1}: {a.reply.text or ''}" if several and r.ref is not None else a.reply.text or ""
                for r, a in asked
            ),
            "answers": entries,
            "template_version": self.template.version,
        }
        problems = [
            (f"reference {r.ref + 1}: " if several and r.ref is not None else "") + (a.why or "")
            for r, a in asked
            if a.score is None
        ]
        if problems:
            extras["score"] = None
            failed = any(a.reply.error is not None for _, a in asked)
            reason = (FAILED_PREFIX if failed else "") + "; ".join(problems)
            return MetricValue(self.spec.name, math.nan, reason, extras, provenance)
        scores = [a.score for _, a in asked if a.score is not None]
        extras["score"] = scores[0] if not several else None
        if several:
            extras["scores"] = scores
        return MetricValue(self.spec.name, float(sum(scores)) / len(scores), None, extras, provenance)


def read_answer(reply: JudgeReply) -> Answer:
    """The score of a reply (the DreamBench++ parse rule), or why there is none."""
    if reply.error is not None:
        return Answer(reply, None, f"no answer from the judge: {reply.error}")
    score, why = parse_score(reply.text)
    return Answer(reply, score, why)


def answer_entry(request: Request, answer: Answer) -> dict[str, Any]:
    """The extras entry of one request."""
    return {"ref": request.ref, **answer.reply.as_dict(), "score": answer.score, "cached": answer.cached}
