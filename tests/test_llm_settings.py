"""LLM settings: environment, config file, defaults and clear errors."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from factledger.infrastructure.config import ConfigError, Settings


def test_defaults(tmp_path: Path) -> None:
    s = Settings.load({"FACTLEDGER_HOME": str(tmp_path)})
    assert (s.llm_model, s.embedding_model, s.embedding_dimension) == ("gpt-4o-mini", "text-embedding-3-small", None)
    assert (s.prompts, s.signal_gating, s.response_cache) == ("combined", True, True)
    assert s.openai_base_url is None and s.llm_max_retries == 3


def test_environment_and_config_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'openai_base_url = "http://file/v1"\nllm_model = "qwen-plus"\nembedding_model = "text-embedding-v3"\n'
        'embedding_dimension = 1024\nprompts = "prompts/mine.toml"\nsignal_gating = false\nllm_timeout = 12.5\n'
        "llm_max_retries = 0\nresponse_cache = false\n",
        encoding="utf-8",
    )
    s = Settings.load(
        {"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_LLM_MODEL": "deepseek-chat", "OPENAI_API_KEY": "k"}
    )
    assert (s.openai_base_url, s.llm_model, s.openai_api_key) == ("http://file/v1", "deepseek-chat", "k")
    assert (s.embedding_model, s.embedding_dimension) == ("text-embedding-v3", 1024)
    assert s.prompts == str(tmp_path / "prompts/mine.toml")  # relative to the config file
    assert (s.signal_gating, s.llm_timeout, s.llm_max_retries, s.response_cache) == (False, 12.5, 0, False)
    # explicit (the CLI's --prompts) wins, and is taken as given
    assert Settings.load({"FACTLEDGER_HOME": str(tmp_path)}, prompts="combined").prompts == "combined"
    env = {"FACTLEDGER_HOME": str(tmp_path), "OPENAI_BASE_URL": "http://env/v1", "FACTLEDGER_PROMPTS": "x.toml"}
    assert (Settings.load(env).openai_base_url, Settings.load(env).prompts) == ("http://env/v1", "x.toml")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FACTLEDGER_SIGNAL_GATING": "sometimes"}, "FACTLEDGER_SIGNAL_GATING must be true or false"),
        ({"FACTLEDGER_LLM_TIMEOUT": "soon"}, "FACTLEDGER_LLM_TIMEOUT must be a number"),
        ({"FACTLEDGER_LLM_MAX_RETRIES": "-1"}, "FACTLEDGER_LLM_MAX_RETRIES must be at least 0"),
        ({"FACTLEDGER_EMBEDDING_DIMENSION": "big"}, "FACTLEDGER_EMBEDDING_DIMENSION must be an integer"),
    ],
)
def test_bad_values_name_the_setting(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path), **env})


@pytest.mark.slow
def test_the_offline_default_never_loads_the_openai_sdk(tmp_path: Path) -> None:
    # The SDK takes about a second to import: every offline command would pay it for nothing.
    code = (
        "import sys, factledger, factledger.entrypoints.cli\n"
        "with factledger.open_ledger(backend='memory', warn_if_offline=False) as ledger:\n"
        "    assert ledger.ingest('u', '我住在杭州').status == 'recorded'\n"
        "print('openai' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    done = subprocess.run(
        [sys.executable, "-c", code], env={**env, "FACTLEDGER_HOME": str(tmp_path)}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_llm_clients_share_one_tls_context_per_ca_location(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a verified context reads every CA certificate (~50 ms): once per process and CA
    location, not once per client; another SSL_CERT_FILE gets a context of its own."""
    import certifi

    from factledger.infrastructure.llm.client import verified_tls

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    first = verified_tls()
    assert verified_tls() is first and first.verify_mode == ssl.CERT_REQUIRED
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert verified_tls() is not first
