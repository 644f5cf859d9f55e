import dataclasses
from pathlib import Path

import pytest

from masc_ui.errors import InputError
from masc_ui.models.profiles import FAST, PAPER, model_ids
from masc_ui.settings import ENV, Settings


def test_defaults_match_the_paper():
    s = Settings()
    assert (s.profile, s.naflex_max_patches, s.fg_threshold, s.stripper) == ("auto", 1024, 0.5, "regex")


def test_env_then_overrides():
    env = {
        "MASC_NAFLEX_MAX_PATCHES": "256",
        "MASC_PROFILE": "fast",
        "DATABASE_URL": "sqlite:///x.db",
        "MASC_DATA_DIR": "/tmp/masc-data",
    }
    s = Settings.from_env(env, profile="demo", stripper=None)
    assert s.naflex_max_patches == 256
    assert s.profile == "demo"  # flag beats env
    assert s.database_url == "sqlite:///x.db"
    assert s.data_dir == Path("/tmp/masc-data")
    assert s.stripper == "regex"  # None = flag not given


def test_masc_database_url_beats_plain_database_url():
    s = Settings.from_env({"DATABASE_URL": "sqlite:///a.db", "MASC_DATABASE_URL": "sqlite:///b.db"})
    assert s.database_url == "sqlite:///b.db"


def test_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().profile = "demo"  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad",
    [
        {"profile": "huge"},
        {"stripper": "nltk"},
        {"fg_threshold": 1.5},
        {"naflex_max_patches": 0},
        {"dtype": "int8"},
        {"rating_overlap": 0},
    ],
)
def test_bad_values_are_named(bad):
    with pytest.raises(InputError, match=next(iter(bad))):
        Settings(**bad)


def test_bad_number_in_env_names_the_variable():
    with pytest.raises(InputError, match="MASC_NAFLEX_MAX_PATCHES"):
        Settings.from_env({"MASC_NAFLEX_MAX_PATCHES": "many"})


CHOICES = {
    "profile": "demo",
    "stripper": "spacy",
    "dtype": "bfloat16",
    "dbpp_judge": "local",
    "assignment_policy": "active",
    "trusted_proxies": "10.0.0.0/8",
}
"""A valid value other than the default for the settings that take a fixed set (or form) of values."""


def _env_value(field) -> tuple[str, object]:
    """(text of an env var, the value Settings should read from it) for `field`, different from its default and
    valid alone (near the default: numbers often have bounds that depend on each other)."""
    kind = str(field.type)
    default = getattr(Settings(), field.name)
    if field.name in CHOICES:
        return CHOICES[field.name], CHOICES[field.name]
    if kind.startswith("int"):
        value = default + 1 if isinstance(default, int) else 7
        return str(value), value
    if kind.startswith("float"):
        value = default / 2 if default else 0.25
        return repr(value), value
    if "Path" in kind:
        return "/tmp/masc-env-test", Path("/tmp/masc-env-test")
    return "env-value", "env-value"


def test_every_field_has_an_env_var():
    """Each field, set alone through its `MASC_<NAME>` variable, is read by `Settings.from_env`."""
    import dataclasses

    fields = dataclasses.fields(Settings)
    assert set(ENV) == {f.name for f in fields}
    for f in fields:
        assert ENV[f.name] == f"MASC_{f.name.upper()}"
        text, expected = _env_value(f)
        assert expected != getattr(Settings(), f.name), f.name  # the test value must differ from the default
        assert getattr(Settings.from_env({ENV[f.name]: text}), f.name) == expected, f.name


def test_profiles_and_overrides(tmp_path):
    assert model_ids(Settings(profile="paper")) == PAPER
    assert model_ids(Settings(profile="fast")).siglip == FAST.siglip == "google/siglip2-base-patch16-naflex"
    demo = model_ids(Settings(profile="demo", demo_weights_dir=tmp_path))
    assert demo.siglip == str(tmp_path / "siglip2-naflex")
    assert demo.sam_checkpoint.startswith(str(tmp_path))
    custom = model_ids(Settings(profile="paper", siglip_model="/models/mine"))
    assert custom.siglip == "/models/mine" and custom.clip == PAPER.clip


def test_spaces_listen_publicly_unless_told_otherwise():
    assert Settings.from_env({"SPACE_ID": "me/masc"}).host == "0.0.0.0"
    assert Settings.from_env({"SPACE_ID": "me/masc", "MASC_HOST": "127.0.0.1"}).host == "127.0.0.1"
    assert Settings.from_env({"SPACE_ID": "me/masc"}, host="10.0.0.1").host == "10.0.0.1"
    assert Settings.from_env({}).host == "127.0.0.1"


def test_scorer_catalogue_models_per_profile(tmp_path):
    s = Settings.from_env({"MASC_VQA_MODEL": "Qwen/Qwen2.5-VL-3B-Instruct", "MASC_ITM_MODEL": "/models/itm"})
    assert (s.vqa_model, s.itm_model) == ("Qwen/Qwen2.5-VL-3B-Instruct", "/models/itm")
    assert (PAPER.vqa, PAPER.itm) == ("zhiqiulin/clip-flant5-xxl", "Salesforce/blip2-itm-vit-g")
    assert (FAST.vqa, FAST.itm) == ("zhiqiulin/clip-flant5-xl", "Salesforce/blip2-itm-vit-g")
    demo = model_ids(Settings(profile="demo", demo_weights_dir=tmp_path))
    assert (demo.vqa, demo.itm) == (str(tmp_path / "clip-flant5"), str(tmp_path / "blip2-itm"))
    assert model_ids(Settings(profile="paper", vqa_model="/m/qwen")).vqa == "/m/qwen"


def test_trusted_proxies_are_addresses_and_a_space_trusts_its_private_networks():
    from masc_ui.errors import InputError
    from masc_ui.settings import SPACE_PROXIES

    assert Settings(trusted_proxies="127.0.0.1, 10.0.0.0/8").trusted_proxies == "127.0.0.1, 10.0.0.0/8"
    with pytest.raises(InputError, match="'proxy.example' is not an IP address or network"):
        Settings(trusted_proxies="127.0.0.1,proxy.example")
    assert Settings.from_env({}).trusted_proxies is None
    assert Settings.from_env({"SPACE_ID": "me/app"}).trusted_proxies == SPACE_PROXIES
    assert Settings.from_env({"SPACE_ID": "me/app", "MASC_TRUSTED_PROXIES": "10.1.2.3"}).trusted_proxies == "10.1.2.3"
