"""One frozen Settings object, built at the edge (CLI, app.py) from env vars and flags, passed down.

Nothing else in the package reads environment variables.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .space_storage import space_data_dir

PROFILES = ("auto", "paper", "fast", "demo")
STRIPPERS = ("regex", "spacy", "none")
DTYPES = ("auto", "float32", "bfloat16", "float16")
DBPP_JUDGES = ("api", "local")
MAX_NAFLEX_PATCHES = 16_384
"""Largest MaSC NaFlex patch budget (16x the paper's 1024): larger ones only exhaust memory."""


def _default_data_dir() -> Path:
    return Path(os.path.expanduser("~")) / ".cache" / "masc-ui" / "data"


@dataclass(frozen=True)
class Settings:
    """Everything configurable. Env var names are `MASC_<FIELD NAME IN UPPER CASE>` (see `ENV`)."""

    profile: str = "auto"
    """Model profile: `paper`, `fast`, `demo` (tiny random weights), or `auto` (paper if loadable, else demo)."""
    siglip_model: str | None = None
    """SigLIP2 checkpoint (HF id or local dir) for MaSC; None = the profile's."""
    clip_model: str | None = None
    """CLIP checkpoint for CLIP-I / CLIP-I-Seg / CLIP-T / CLIPScore; None = the profile's."""
    pickscore_model: str | None = None
    """PickScore model; None = the profile's (`yuvalkirstain/PickScore_v1`)."""
    pickscore_processor: str | None = None
    """PickScore processor; None = the profile's (`laion/CLIP-ViT-H-14-laion2B-s32B-b79K`)."""
    dino_model: str | None = None
    """DINO checkpoint for DINO-I and DINO-I-Seg; None = the profile's (`facebook/dino-vits16`)."""
    dinov2_model: str | None = None
    """DINOv2 checkpoint (`Dinov2Model`, HF id or local dir) for DINOv2-I and DINOv2-I-Seg; None = the profile's
    (`facebook/dinov2-base`, `facebook/dinov2-small` in `fast`)."""
    dreamsim_weights: str | None = None
    """DreamSim ensemble weights: the folder of the release `dreamsim_ensemble_checkpoint.zip` extracted, with the
    DINO ViT-B/16 backbone `checkpoints/dino_vitbase16_pretrain.pth` (the folder the `dreamsim` package's
    `cache_dir` becomes after its first use), or the release zip's URL (downloaded with that backbone into
    `cache_dir` once); None = the profile's (the v0.2.0 release URL)."""
    sam_variant: str | None = None
    """Segment Anything variant `vit_b` / `vit_l` / `vit_h`; None = the profile's."""
    sam_checkpoint: str | None = None
    """Local path of the SAM checkpoint; None = download the official one into `cache_dir` on first use."""
    sam3_model: str | None = None
    """SAM 3 checkpoint (HF id or local dir) for segmentation by the subject's name; None = the profile's."""
    facescore_model: str | None = None
    """FaceScore: folder (or HF repo) holding the released `FS_model.pt` + `med_config.json`; None = the profile's."""
    face_detector_dir: str | None = None
    """FaceSim's SCRFD detector: an unzipped insightface `buffalo_l` model-pack folder; None = the profile's
    (unavailable -> the packaged MTCNN, not the reference detector). FaceSim-Arc reads its ArcFace recognizer
    `w600k_r50.onnx` from the same folder."""
    face_recognizer: str | None = None
    """FaceSim's IR-101 CurricularFace weights (`glint360k_curricular_face_r101_backbone.bin`: file, folder or HF
    repo); None = the profile's."""
    retinaface_weights: str | None = None
    """FaceScore's RetinaFace-MobileNet0.25 weights (`mobilenet0.25_Final.pth`: file, URL or HF repo); None = the
    profile's (unavailable -> the packaged MTCNN)."""
    artscore_checkpoint: str | None = None
    """ArtScore's ResNet-50 state dict (file, folder, URL or HF repo); None = the profile's."""
    imagereward_model: str | None = None
    """ImageReward: folder (or HF repo) holding the released `ImageReward.pt` + `med_config.json`, or the `.pt` file
    itself; None = the profile's (`THUDM/ImageReward`)."""
    hps_model: str | None = None
    """HPSv2.1: the OpenCLIP checkpoint `HPS_v2.1_compressed.pt` (file, folder or HF repo; an `open_clip_config.json`
    beside it names another OpenCLIP architecture than ViT-H-14); None = the profile's (`xswu/HPSv2`)."""
    aesthetic_head: str | None = None
    """LAION aesthetic predictor v2 MLP (`sac+logos+ava1-l14-linearMSE.pth`: file, folder, URL or HF repo); None = the
    profile's (the file of LAION's improved-aesthetic-predictor repository)."""
    aesthetic_clip_model: str | None = None
    """CLIP whose image embedding the aesthetic head reads (HF id or local dir); None = the profile's
    (`openai/clip-vit-large-patch14`)."""
    vqa_model: str | None = None
    """VQAScore model (HF id or local dir): a CLIP-FlanT5 checkpoint or any chat VLM (e.g.
    `Qwen/Qwen2.5-VL-7B-Instruct`), told apart by its config; None = the profile's (`zhiqiulin/clip-flant5-xxl`)."""
    itm_model: str | None = None
    """ITMScore model (`Blip2ForImageTextRetrieval`, HF id or local dir); None = the profile's
    (`Salesforce/blip2-itm-vit-g`)."""
    device: str = "auto"
    """`auto` (cuda > mps > cpu), or a torch device string."""
    dtype: str = "auto"
    """`auto` (the precision policy of `models.precision`: bfloat16 where the hardware computes it fast -- CUDA
    with native bf16, CPUs with AMX or AVX-512-BF16 -- float32 elsewhere), `float32` (the exact mode),
    `bfloat16`, `float16`."""
    naflex_max_patches: int = 1024
    """MaSC NaFlex patch budget."""
    fg_threshold: float = 0.5
    """MaSC patch-weight threshold (CP keeps ref weight > t, PF hides output weight >= t)."""
    stripper: str = "regex"
    """Subject stripper for the PF prompt: `regex`, `spacy`, `none`."""
    text_seg_threshold: float = 0.5
    """Minimum SAM 3 instance score kept by segmentation from the subject's name."""
    text_seg_min_fraction: float = 0.05
    """A text-prompted mask covering less of the image than this is flagged as doubtful."""
    data_dir: Path = field(default_factory=_default_data_dir)
    """Where the SQLite database and the content-addressed blob store live."""
    database_url: str | None = None
    """SQLAlchemy URL (e.g. PostgreSQL for teams); None = SQLite under `data_dir`."""
    cache_dir: Path | None = None
    """Where downloaded SAM checkpoints go; None = `~/.cache/masc-ui/checkpoints`."""
    demo_weights_dir: Path | None = None
    """Where the tiny demo checkpoints are written/read; None = `data_dir/demo-weights`."""
    users_file: Path | None = None
    """Rater logins, one `username:password` per line; see also `users`."""
    users: str | None = None
    """Rater logins inline: `alice:pw1,bob:pw2` (env `MASC_USERS`)."""
    trusted_proxies: str | None = None
    """Addresses or networks (CIDR) of the reverse proxies in front of the app, comma-separated, e.g.
    `127.0.0.1,10.0.0.0/8`. Only a request whose connection comes from one of them has its `X-Forwarded-For`
    read, and then the entry the proxies appended: the last one that is not itself a trusted proxy. None:
    `X-Forwarded-For` is ignored and the connection's address is the client's. On a Space: the private and loopback
    networks (Hugging Face's proxy), unless set. Used for login throttling and the per-address limits."""
    max_connections_per_address: int = 64
    """Most requests and event streams one client address may hold open at once without a login (an anonymous
    visitor; everyone, in an app without logins); the next is refused with HTTP 429 until one ends. Logged-in
    users are not counted (4 .. 100,000)."""
    session_idle_minutes: float = 120.0
    """A login session unused this long (no request but the page's heartbeat) ends on the server: the next request
    asks for the login again (1 .. 10,080 minutes)."""
    session_max_hours: float = 24.0
    """A login session ends this long after the login, used or not (0.1 .. 720 hours)."""
    rating_overlap: int = 2
    """How many raters should rate each sample (task assignment's K)."""
    assignment_policy: str = "overlap"
    """How the next rating task is chosen among those still open: `overlap` (finish started samples and pairs
    first, each rater in their own shuffled order) or `active` (where an answer narrows the result most: the sample
    of the method whose mean rating has the widest estimated 95% interval, and the pair of the two methods whose
    Bradley-Terry outcome is most uncertain). Both hand each sample or pair to at most `rating_overlap` raters."""
    gold_rate: float = 0.1
    """Share of gold tasks (samples with an accepted answer, attention checks included) mixed into each rater's
    queue: one in every round(1 / rate) tasks, at a drawn place in each block (0 .. 0.5; 0 = gold tasks are not
    handed out)."""
    min_seconds: float = 2.0
    """The time floor of the rater report: an answer given in less than this many seconds is counted as too fast
    (0 .. 600)."""
    max_upload_mb: int = 25
    """Largest accepted upload, in MiB."""
    upload_quota_mb: int = 1000
    """Most MiB one login may upload per hour (every file and editor blob counted as it is sent; raters upload
    nothing); 1 .. 1,048,576."""
    max_event_kb: int = 1024
    """Largest body of one event request (the JSON an admin's page sends with a click: prompts, settings, file
    references, not the files), in KiB; a rater's events are limited to 64 KiB (16 .. 1,048,576)."""
    max_image_pixels: int = 40_000_000
    """Images with more pixels than this are refused (decompression-bomb guard)."""
    max_session_pixels: int = 160_000_000
    """Most pixels of the images one Score-tab page session holds decoded at once (its references and output; an
    image that would pass it is refused with a message until others are removed); released when images leave the
    screen and when the page closes (max_image_pixels .. 10,000,000,000)."""
    max_references: int = 16
    """Most reference images of one sample (the reference and its extra references), 1 .. 1,000."""
    anonymous_dataset_mb: int = 500
    """Without logins (anyone reaching the app acts as admin): most MiB of images and masks the app's Save stores
    per dataset (1 .. 1,048,576)."""
    max_video_mb: int = 256
    """Largest accepted video file, in MiB (1 .. 4096)."""
    max_video_seconds: float = 120.0
    """Longest accepted video, in seconds (0 < s <= 3600)."""
    max_video_frames: int = 10_000
    """Most frames an accepted video may hold (1 .. 1,000,000)."""
    max_video_pixels: int = 3840 * 2160
    """Largest accepted video frame, width x height (1 .. max_image_pixels)."""
    video_frames: int = 32
    """Frames (numpy.linspace, first and last included) of a video output that the image metrics score, one by one,
    before averaging (1 .. 1000); part of every such value's provenance."""
    gme_model: str | None = None
    """GME-Qwen2-VL checkpoint for GmeScore and NexusScore; None = the profile's
    (`Alibaba-NLP/gme-Qwen2-VL-7B-Instruct`, 2B in `fast`)."""
    nexus_detector: str | None = None
    """Image-prompted detector of NexusScore (an OWLv2 checkpoint); None = the profile's
    (`google/owlv2-large-patch14-ensemble`, base in `fast`)."""
    judge_base_url: str | None = None
    """Base URL of the OpenAI-compatible chat API that NaturalScore asks; None = OpenAI's."""
    judge_model: str = "gpt-4o-2024-11-20"
    """Chat model NaturalScore asks (OpenS2V's judge by default)."""
    judge_api_key: str | None = field(default=None, repr=False)
    """API key of the judge (env `MASC_JUDGE_API_KEY`); needed for OpenAI's API, optional for a local server.
    Never recorded or printed."""
    judge_temperature: float | None = None
    """Sampling temperature sent to the judge; None = not sent (the API's default, as OpenS2V)."""
    judge_seed: int | None = None
    """Seed sent to the judge; None = not sent (as OpenS2V)."""
    judge_max_calls: int = 1000
    """Most HTTP requests (retries included) one NaturalScore scorer may send: the per-run cost cap (1 .. 1,000,000)."""
    judge_max_tokens: int | None = None
    """Most tokens (prompt + completion, as the API reports them) one NaturalScore scorer may spend; None = no cap."""
    judge_timeout_s: float = 60.0
    """Seconds to wait for one judge answer (0 < s <= 600)."""
    judge_max_attempts: int = 5
    """Attempts per judge call on HTTP 429/5xx, timeouts and connection errors (1 .. 10; OpenS2V: 5)."""
    judge_backoff_s: float = 2.0
    """First wait between attempts, doubled each time up to 5x (OpenS2V: 2 s .. 10 s); 0 .. 60."""
    judge_workers: int = 4
    """Judge calls in flight at once (1 .. 64)."""
    dbpp_judge: str = "api"
    """Who answers the DreamBench++ judge metrics (`dbpp_cp`, `dbpp_pf`): `api` (a chat model behind the
    OpenAI-compatible API of the `judge_*` settings, `dbpp_api_model`) or `local` (a chat VLM loaded here,
    `dbpp_local_model`)."""
    dbpp_api_model: str = "gpt-4o-2024-05-13"
    """Chat model the DreamBench++ judge asks in `api` mode (the GPT-4o snapshot DreamBench++'s published ratings
    come from), at `judge_base_url` with `judge_api_key`."""
    dbpp_local_model: str | None = None
    """Chat VLM (HF id or local dir, `AutoModelForImageTextToText` with a chat template) of the DreamBench++ judge in
    `local` mode; None = the profile's (`Qwen/Qwen2.5-VL-7B-Instruct`)."""
    dbpp_max_new_tokens: int = 512
    """Most tokens the local DreamBench++ judge writes per answer (1 .. 8192)."""
    host: str = "127.0.0.1"
    """Address the web app binds to (default `0.0.0.0` when `SPACE_ID` is set, i.e. on Hugging Face Spaces)."""
    port: int = 7860
    """Port of the web app."""
    space_id: str | None = None
    """The Hugging Face Space the app runs in (`SPACE_ID`, which Spaces sets, or `MASC_SPACE_ID`); None elsewhere.
    On a Space the app listens on 0.0.0.0 and keeps its data on the persistent storage when there is one."""
    space_storage_dir: Path = Path("/data")
    """Where a Space's persistent storage is mounted (Spaces: `/data`). On a Space, unless `MASC_DATA_DIR` (or
    `--data-dir`) says otherwise, the data dir is `<this>/masc` when this is a writable directory."""

    def __post_init__(self) -> None:
        _check_choice("profile", self.profile, PROFILES)
        _check_choice("stripper", self.stripper, STRIPPERS)
        _check_choice("dtype", self.dtype, DTYPES)
        if not 0.0 <= self.fg_threshold <= 1.0:
            raise InputError(f"fg_threshold must be within [0, 1], got {self.fg_threshold}")
        _check_bounds("naflex_max_patches", self.naflex_max_patches, 1, MAX_NAFLEX_PATCHES)
        _check_bounds("rating_overlap", self.rating_overlap, 1, 1000)
        _check_choice("assignment_policy", self.assignment_policy, ASSIGNMENT_POLICIES)
        _check_bounds("gold_rate", self.gold_rate, 0.0, 0.5)
        _check_bounds("min_seconds", self.min_seconds, 0.0, 600.0)
        if self.trusted_proxies is not None:
            for item in self.trusted_proxies.split(","):
                try:
                    ipaddress.ip_network(item.strip(), strict=False)
                except ValueError:
                    raise InputError(
                        f"trusted_proxies: {item.strip()[:60]!r} is not an IP address or network (CIDR, e.g. "
                        "10.0.0.0/8); list the proxies' addresses, comma-separated"
                    ) from None
        _check_bounds("max_connections_per_address", self.max_connections_per_address, 4, 100_000)
        _check_bounds("session_idle_minutes", self.session_idle_minutes, 1.0, 10_080.0)
        _check_bounds("session_max_hours", self.session_max_hours, 0.1, 720.0)
        _check_bounds("max_upload_mb", self.max_upload_mb, 1, 4096)
        _check_bounds("max_image_pixels", self.max_image_pixels, 1, 1_000_000_000)
        _check_bounds("max_session_pixels", self.max_session_pixels, self.max_image_pixels, 10_000_000_000)
        _check_bounds("max_references", self.max_references, 1, 1_000)
        _check_bounds("upload_quota_mb", self.upload_quota_mb, 1, 1_048_576)
        _check_bounds("max_event_kb", self.max_event_kb, 16, 1_048_576)
        _check_bounds("anonymous_dataset_mb", self.anonymous_dataset_mb, 1, 1_048_576)
        _check_bounds("text_seg_threshold", self.text_seg_threshold, 0.0, 1.0)
        _check_bounds("text_seg_min_fraction", self.text_seg_min_fraction, 0.0, 1.0)
        _check_bounds("port", self.port, 1, 65_535)
        _check_bounds("max_video_mb", self.max_video_mb, 1, 4096)
        _check_bounds("max_video_frames", self.max_video_frames, 1, 1_000_000)
        _check_bounds("max_video_pixels", self.max_video_pixels, 1, self.max_image_pixels)
        _check_bounds("video_frames", self.video_frames, 1, 1000)
        _check_bounds("judge_max_calls", self.judge_max_calls, 1, 1_000_000)
        _check_bounds("judge_max_attempts", self.judge_max_attempts, 1, 10)
        _check_bounds("judge_workers", self.judge_workers, 1, 64)
        _check_bounds("judge_backoff_s", self.judge_backoff_s, 0.0, 60.0)
        if self.judge_max_tokens is not None:
            _check_bounds("judge_max_tokens", self.judge_max_tokens, 1, 10**12)
        if self.judge_temperature is not None:
            _check_bounds("judge_temperature", self.judge_temperature, 0.0, 2.0)
        if not 0.0 < self.max_video_seconds <= 3600.0:
            raise InputError(f"max_video_seconds must be within (0, 3600], got {self.max_video_seconds}")
        if not 0.0 < self.judge_timeout_s <= 600.0:
            raise InputError(f"judge_timeout_s must be within (0, 600], got {self.judge_timeout_s}")
        if not (self.judge_model or "").strip():
            raise InputError("judge_model must name a chat model, e.g. gpt-4o-2024-11-20")
        _check_choice("dbpp_judge", self.dbpp_judge, DBPP_JUDGES)
        if not (self.dbpp_api_model or "").strip():
            raise InputError("dbpp_api_model must name a chat model, e.g. gpt-4o-2024-05-13")
        _check_bounds("dbpp_max_new_tokens", self.dbpp_max_new_tokens, 1, 8192)
        for name in ("data_dir", "cache_dir", "demo_weights_dir", "users_file", "space_storage_dir"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                object.__setattr__(self, name, Path(value).expanduser())

    @property
    def resolved_demo_weights_dir(self) -> Path:
        return self.demo_weights_dir or (self.data_dir / "demo-weights")

    @property
    def resolved_cache_dir(self) -> Path:
        return self.cache_dir or Path(os.path.expanduser("~")) / ".cache" / "masc-ui" / "checkpoints"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from `MASC_*` env vars (and `DATABASE_URL`, `SPACE_ID`), then `overrides` (CLI flags; None = not
        given). On a Space, the data dir defaults to the persistent storage (`space_data_dir`) when usable."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(f"MASC_{f.name.upper()}")
            if raw is None and f.name in _PLAIN_ENV:
                raw = env.get(_PLAIN_ENV[f.name])
            if raw is not None and raw != "":
                values[f.name] = _parse(f.name, raw, f.type)
        if values.get("space_id") and "host" not in values:
            values["host"] = "0.0.0.0"  # Hugging Face Spaces routes to the container's public interface
        if values.get("space_id") and "trusted_proxies" not in values:
            values["trusted_proxies"] = SPACE_PROXIES  # Spaces' proxy reaches the container from a private network
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise InputError(f"unknown setting(s): {sorted(unknown)}")
        if values.get("space_id") and "data_dir" not in values:
            persistent = space_data_dir(Path(values.get("space_storage_dir", cls.space_storage_dir)))
            if persistent is not None:
                values["data_dir"] = persistent
        return cls(**values)


ASSIGNMENT_POLICIES = ("overlap", "active")
"""The values of `Settings.assignment_policy`."""
SPACE_PROXIES = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,127.0.0.0/8,::1/128"
"""The trusted proxies on a Space (`trusted_proxies` unset): the private and loopback networks."""
ENV = {f.name: f"MASC_{f.name.upper()}" for f in dataclasses.fields(Settings)}
_PLAIN_ENV = {"database_url": "DATABASE_URL", "space_id": "SPACE_ID"}
"""Settings also read from a variable set by someone else (a hosting platform), when `MASC_<NAME>` is not set."""


def _check_bounds(name: str, value: float, lo: float, hi: float) -> None:
    if not lo <= value <= hi:
        raise InputError(f"{name} must be within [{lo:g}, {hi:g}], got {value}")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _parse(name: str, raw: str, annotation: Any) -> Any:
    text = str(annotation)
    try:
        if text.startswith("int"):
            return int(raw)
        if text.startswith("float"):
            return float(raw)
    except ValueError:
        raise InputError(f"environment variable MASC_{name.upper()}={raw!r} is not a number") from None
    if "Path" in text:
        return Path(raw).expanduser()
    return raw
