"""Settings: environment over config file over defaults, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.infrastructure.config import ConfigError, Settings


def test_defaults(tmp_path: Path) -> None:
    settings = Settings.load({"FACTLEDGER_HOME": str(tmp_path)})
    assert settings.home == tmp_path
    assert settings.database_url is None
    assert (settings.fact_similarity, settings.preference_similarity) == (0.75, 0.7)
    assert settings.inline_projection is True


def test_environment_wins_over_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'database_url = "postgresql://file/db"\nfact_similarity = 0.8\ninline_projection = false\n', encoding="utf-8"
    )
    settings = Settings.load({"FACTLEDGER_HOME": str(tmp_path), "DATABASE_URL": "postgresql://env/db"})
    assert settings.database_url == "postgresql://env/db"
    assert settings.fact_similarity == 0.8
    assert settings.inline_projection is False
    assert settings.config_file == tmp_path / "config.toml"


def test_explicit_config_path(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.toml"
    path.write_text('schema = "tenant_a"\n', encoding="utf-8")
    assert Settings.load({"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_CONFIG": str(path)}).schema == "tenant_a"
    with pytest.raises(ConfigError, match="does not exist"):
        Settings.load({"FACTLEDGER_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FACTLEDGER_FACT_SIMILARITY": "1.5"}, "FACTLEDGER_FACT_SIMILARITY must be a number in"),
        ({"FACTLEDGER_PREFERENCE_SIMILARITY": "high"}, "FACTLEDGER_PREFERENCE_SIMILARITY"),
        ({"FACTLEDGER_INLINE_PROJECTION": "maybe"}, "FACTLEDGER_INLINE_PROJECTION must be true or false"),
        ({"FACTLEDGER_SNAPSHOT_INTERVAL": "0"}, "FACTLEDGER_SNAPSHOT_INTERVAL must be at least 1"),
    ],
)
def test_bad_values_name_the_setting(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path), **env})


def test_bad_config_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("database_url = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path)})
    (tmp_path / "config.toml").write_text('databse_url = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown settings: databse_url"):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path)})


def test_the_settings_table_is_the_one_the_code_reads() -> None:
    from factledger.infrastructure.config import settings_table

    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    start, end = "<!-- settings:start -->\n", "\n<!-- settings:end -->"
    assert start in page and end in page, "docs/configuration.md lacks the generated settings table"
    shown = page[page.index(start) + len(start) : page.index(end)]
    assert shown == settings_table(), (
        "docs/configuration.md's settings table is stale: paste the output of "
        "python3 -c 'from factledger.infrastructure.config import settings_table; print(settings_table())'"
    )


def test_every_setting_is_read_from_its_variable(tmp_path: Path) -> None:
    from factledger.infrastructure.config import SETTINGS

    samples = {
        "backend": "memory",
        "schema": "s1",
        "prompts": "combined",
        "secret": "a secret of sixteen or more characters",
        "encryption_key": "MDEyMzQ1Njc4OWFiY2RlZg==",
        "sensitive": "redact,email=keep",
        "memory_language": "en",
    }
    for setting in SETTINGS:
        raw = samples.get(setting.key, "0.5" if "similarity" in setting.key else "12")
        if setting.parse.__name__ == "_bool":
            raw = "false"
        elif setting.parse.__name__ == "_text":
            raw = "x"
        loaded = Settings.load({"FACTLEDGER_HOME": str(tmp_path), setting.env: raw})
        assert getattr(loaded, setting.key) == setting.parse(setting.env, raw), setting.env
