"""Configuration: ``ASSAY_*`` environment variables and project YAML files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from .errors import ConfigError
from .models import Project


@dataclass(frozen=True)
class Settings:
    home: Path
    mongodb_uri: str | None
    qdrant_url: str | None
    qdrant_api_key: str | None
    embedding_model: str | None
    anthropic_api_key: str | None

    @property
    def store_path(self) -> Path:
        return self.home / "store"

    @property
    def qdrant_path(self) -> Path:
        return self.home / "qdrant"

    @property
    def demo_dir(self) -> Path:
        return self.home / "demo"

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"


def load_settings() -> Settings:
    home = Path(os.environ.get("ASSAY_HOME") or Path.home() / ".assay").expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return Settings(
        home=home,
        mongodb_uri=os.environ.get("MONGODB_URI") or None,
        qdrant_url=os.environ.get("QDRANT_URL") or None,
        qdrant_api_key=os.environ.get("QDRANT_API_KEY") or None,
        embedding_model=os.environ.get("ASSAY_EMBEDDING_MODEL") or None,
        anthropic_api_key=os.environ.get("ANTHROPIC_API_KEY") or None,
    )


def read_yaml_mapping(path: Path, error: type[Exception], what: str) -> dict:
    """A YAML file that must hold a mapping; any problem is one line naming the file (and line)."""
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise error(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: {what}")
    return data


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
    return f"{loc}: {err.get('msg')}"


def load_project_file(path: str | Path) -> Project:
    """Read a project YAML file; one clear line on any problem."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such project file")
    data = read_yaml_mapping(p, ConfigError, "a project file must be a mapping")
    try:
        project = Project.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{p}: {_first_error(exc)}") from None
    base = p.resolve().parent
    # relative warehouse paths and pack dirs are relative to the project file
    path_setting = project.warehouse.settings.get("path")
    if path_setting and not Path(path_setting).is_absolute() and path_setting != ":memory:":
        project.warehouse.settings["path"] = str(base / path_setting)
    if project.pack_dir and not Path(project.pack_dir).is_absolute():
        project.pack_dir = str(base / project.pack_dir)
    return project
