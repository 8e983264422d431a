"""Configuration: ``ASSAY_*`` environment variables and project YAML files."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
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
    result_storage: str | None = None  # ASSAY_RESULT_STORAGE (see result_storage_target)
    vector_index: str | None = None  # ASSAY_VECTOR_INDEX (see vector_index_kind)

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

    @property
    def results_path(self) -> Path:
        return self.home / "results"


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
        result_storage=os.environ.get("ASSAY_RESULT_STORAGE", "").strip() or None,
        vector_index=os.environ.get("ASSAY_VECTOR_INDEX", "").strip().lower() or None,
    )


VECTOR_INDEX_KINDS = ("server", "store", "local")


def vector_index_kind(settings: Settings) -> str:
    """Where the step and schema vectors live:

    - ``server``: the Qdrant server at ``QDRANT_URL`` (any number of processes and hosts);
    - ``store``: documents of the result store, searched in memory by each process
      (``assay.vectors.store_index``): every process that reaches the store shares them, so a work pool
      with MongoDB needs no Qdrant server. The default when ``MONGODB_URI`` is set;
    - ``local``: Qdrant local mode under ``$ASSAY_HOME/qdrant``: one process at a time. The embedded default.

    ``ASSAY_VECTOR_INDEX=store|local`` chooses without a server; ``QDRANT_URL`` wins over both."""
    if settings.qdrant_url:
        return "server"
    kind = settings.vector_index
    if kind is None:
        return "store" if settings.mongodb_uri else "local"
    if kind not in ("store", "local"):
        raise ConfigError(f"ASSAY_VECTOR_INDEX={kind!r}: use 'store' (vectors in the result store, shared by "
                          "every process) or 'local' (Qdrant local mode, one process); or set QDRANT_URL")
    return kind


_BLOCK_SLUG = re.compile(r"[a-z0-9][a-z0-9-]*/[A-Za-z0-9][\w.-]*")


def result_storage_target(settings: Settings) -> tuple[str, str]:
    """Where the orchestrator persists finished phases (what a Retry re-uses), as ``(kind, where)``:

    - ``("path", folder)``: a folder every worker can read. The default is ``$ASSAY_HOME/results``,
      shared wherever the embedded store is (the store lives in ``$ASSAY_HOME`` too);
    - ``("block", slug)``: a storage block saved on the Prefect server (``s3-bucket/assay-results``,
      ``gcs-bucket/...``, ``azure-blob-storage/...``, ``local-file-system/...``): for clusters;
    - ``("prefect", "")``: whatever Prefect's own default is (``prefect result-storage set``,
      ``PREFECT_RESULTS_DEFAULT_STORAGE_BLOCK``, else ``$PREFECT_HOME/storage``: one host only).
    """
    raw = settings.result_storage
    if not raw:
        return "path", str(settings.results_path)
    if raw == "prefect":
        return "prefect", ""
    if raw.startswith(("/", "~")):
        return "path", str(Path(raw).expanduser())
    if _BLOCK_SLUG.fullmatch(raw):
        return "block", raw
    raise ConfigError(f"ASSAY_RESULT_STORAGE={raw!r}: give an absolute folder every worker can read, a Prefect "
                      "storage block as <block-type>/<name> (e.g. s3-bucket/assay-results), or 'prefect'")


# a config file is small: refuse what would expand past these (a YAML alias bomb, "billion laughs")
MAX_YAML_BYTES = 1_000_000
MAX_YAML_NODES = 100_000


def _expanded_nodes(root: yaml.Node, limit: int) -> int:
    """How many nodes the document has once every alias is expanded (counted without expanding;
    stops counting past ``limit``). A recursive alias counts as over the limit."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            sizes[key] = min(limit + 1, 1 + sum(sizes[id(c)] for c in children))
            continue
        if key in sizes:
            continue
        if key in on_path:
            return limit + 1
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def safe_load_yaml(text: str, where: str, error: type[Exception]):
    """``yaml.safe_load`` that refuses a document too large once its aliases are expanded."""
    if len(text) > MAX_YAML_BYTES:
        raise error(f"{where}: larger than {MAX_YAML_BYTES:,} bytes; a config file is small")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node, MAX_YAML_NODES) > MAX_YAML_NODES:
            raise error(f"{where}: its aliases expand past {MAX_YAML_NODES:,} values (or refer to themselves); "
                        "refused")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_yaml_mapping(path: Path, error: type[Exception], what: str) -> dict:
    """A YAML file that must hold a mapping; any problem is one line naming the file (and line)."""
    try:
        data = safe_load_yaml(path.read_text(), str(path), error)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise error(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: {what}")
    return data


def load_project_file(path: str | Path) -> Project:
    """Read a project YAML file; one clear line on any problem."""
    project, errors = read_project_file(path)
    if errors:
        raise ConfigError("\n".join(errors))
    assert project is not None
    return project


def read_project_file(path: str | Path) -> tuple[Project | None, list[str]]:
    """A project YAML file read and checked strictly (unknown keys, kinds, secrets, bounds, cron): the project (with
    any field that failed left at its default, so the caller may check the rest) and every problem, one line each
    naming the file."""
    from .config import project_errors

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such project file")
    data = read_yaml_mapping(p, ConfigError, "a project file must be a mapping")
    project, errors = project_errors(data)
    errors = [f"{p}: {e}" for e in errors]
    if project is None:
        return None, errors
    base = p.resolve().parent
    # relative warehouse paths and pack dirs are relative to the project file
    path_setting = project.warehouse.settings.get("path")
    if path_setting and not Path(path_setting).is_absolute() and path_setting != ":memory:":
        project.warehouse.settings["path"] = str(base / path_setting)
    if project.pack_dir and not Path(project.pack_dir).is_absolute():
        project.pack_dir = str(base / project.pack_dir)
    return project, errors
