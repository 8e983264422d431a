"""Strict checking of user-written project config.

The stored-record models (``models.Project`` and friends) stay tolerant, so an old document
still loads. What a person writes (a project YAML, a stored project about to run) is checked
here, strictly: an unknown key is an error with a "did you mean" suggestion, each warehouse
kind has its own typed settings model, names (kinds, providers) are checked against the
registries, numbers against their bounds, the schedule against cron, and no secret may be
written into the config (it is named by env var or Prefect Secret block instead). Every
problem is one line naming the field path; all problems are reported at once.
"""

from __future__ import annotations

import difflib
import logging
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import ConfigError
from .models import Project

# --------------------------------------------------------------------------- suggestions


def did_you_mean(word: str, choices, *, listing: bool = True) -> str:
    """`` (did you mean X?)`` for a close match; otherwise the valid names (or nothing)."""
    names = sorted(str(c) for c in choices)
    close = difflib.get_close_matches(str(word), names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]}?)"
    return f" (valid: {', '.join(names)})" if listing and names else ""


# --------------------------------------------------------------------------- typed warehouse settings


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # abbreviations of the warehouse's names, read when tables are embedded ({"cust": "customer"})
    glossary: dict[str, str] = Field(default_factory=dict)
    # LLM-written table descriptions for schema search, when the run has an LLM (assay/schema/describe.py)
    llm_descriptions: bool = True


class DuckDBSettings(_Settings):
    path: str


class PostgresSettings(_Settings):
    dsn: str | None = None
    host: str | None = None
    port: int | None = Field(default=None, gt=0, lt=65536)
    dbname: str | None = None
    user: str | None = None
    password_env: str | None = None
    password_block: str | None = None
    sslmode: str | None = None
    connect_timeout: int = Field(default=10, gt=0)

    @model_validator(mode="after")
    def _where(self):
        if not self.dsn and not self.host:
            raise ValueError("postgres needs dsn, or host with dbname and user")
        return self


class SnowflakeSettings(_Settings):
    account: str | None = None
    user: str | None = None
    database: str
    schema_: str | None = Field(default=None, alias="schema")
    warehouse: str | None = None
    role: str | None = None
    authenticator: str | None = None
    password_env: str | None = None
    password_block: str | None = None
    login_timeout: int = Field(default=30, gt=0)


class MySQLSettings(_Settings):
    dsn: str | None = None  # mysql://user@host:3306/database (no password: password_env / password_block)
    host: str | None = None
    port: int | None = Field(default=None, gt=0, lt=65536)
    database: str | None = None
    user: str | None = None
    password_env: str | None = None
    password_block: str | None = None
    ssl_ca: str | None = None
    unix_socket: str | None = None
    connect_timeout: int = Field(default=10, gt=0)

    @model_validator(mode="after")
    def _where(self):
        if not self.dsn and not self.host and not self.unix_socket:
            raise ValueError("mysql needs dsn, or host with database and user")
        return self


class RedshiftSettings(PostgresSettings):
    pass


class BigQuerySettings(_Settings):
    project: str  # the project whose datasets are analysed (and billed, unless billing_project is set)
    billing_project: str | None = None
    location: str | None = None
    credentials_env: str | None = None  # env var holding a service-account JSON key (or the path to one)
    credentials_block: str | None = None  # Prefect Secret block holding that JSON
    maximum_bytes_billed: int | None = Field(default=10 * 1024 ** 3, gt=0)  # per query; None: no cap
    api_endpoint: str | None = None  # a BigQuery-compatible endpoint (tests, emulators)
    max_tables: int = Field(default=2000, gt=0)
    # schema discovery: INFORMATION_SCHEMA (a few queries per dataset) or the tables API (a call per table)
    discovery: Literal["information_schema", "api"] = "information_schema"
    metadata_maximum_bytes_billed: int | None = Field(default=1024 ** 3, gt=0)  # discovery's INFORMATION_SCHEMA reads


class DatabricksSettings(_Settings):
    host: str  # https://<workspace>.cloud.databricks.com
    warehouse_id: str  # the SQL warehouse that runs the statements
    catalog: str | None = None
    token_env: str | None = None
    token_block: str | None = None


class MSSQLSettings(_Settings):
    host: str
    port: int | None = Field(default=None, gt=0, lt=65536)
    database: str
    user: str | None = None
    password_env: str | None = None
    password_block: str | None = None
    login_timeout: int = Field(default=10, gt=0)
    encrypt: bool | None = None


# one typed settings model per warehouse kind (``assay.warehouse.KINDS`` names the same kinds)
WAREHOUSE_SETTINGS: dict[str, type[_Settings]] = {
    "duckdb": DuckDBSettings,
    "postgres": PostgresSettings,
    "snowflake": SnowflakeSettings,
    "mysql": MySQLSettings,
    "redshift": RedshiftSettings,
    "bigquery": BigQuerySettings,
    "databricks": DatabricksSettings,
    "mssql": MSSQLSettings,
}

# --------------------------------------------------------------------------- typed LLM provider settings


class _LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class BedrockSettings(_LLMSettings):
    region: str | None = None  # else AWS_REGION / the profile's region
    profile: str | None = None  # an AWS profile (else the default credential chain)


class VertexSettings(_LLMSettings):
    project_id: str | None = None  # else the project of the Application Default Credentials
    region: str  # us-east5, europe-west1, global, ...
    service_account_file: str | None = None  # a service-account JSON key file (else ADC)
    access_token_env: str | None = None  # an env var holding an OAuth access token (else ADC)


class AzureSettings(_LLMSettings):
    endpoint: str  # https://NAME.openai.azure.com
    deployment: str | None = None  # defaults to llm.model
    api_version: str = "2024-10-21"
    ad_token_env: str | None = None  # an env var holding a Microsoft Entra ID token (instead of the key)

    @field_validator("api_version", mode="before")
    @classmethod
    def _version(cls, v):
        return v.isoformat() if hasattr(v, "isoformat") else v  # YAML reads 2024-10-21 unquoted as a date

    @field_validator("endpoint")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(f"{v!r} is not an http(s) URL (e.g. https://NAME.openai.azure.com)")
        return v


# one typed settings model per LLM provider that takes settings (the others take none)
LLM_SETTINGS: dict[str, type[_LLMSettings]] = {
    "bedrock": BedrockSettings,
    "vertex": VertexSettings,
    "azure": AzureSettings,
}


def llm_settings(provider: str, settings: dict) -> _LLMSettings | None:
    """The provider's typed settings; ConfigError (one line per problem) when they are wrong."""
    errors = llm_settings_errors(provider, settings)
    if errors:
        raise ConfigError("\n".join(errors))
    model = LLM_SETTINGS.get(provider)
    return model.model_validate(settings or {}) if model else None


def llm_settings_errors(provider: str, settings: dict) -> list[str]:
    model = LLM_SETTINGS.get(provider)
    if model is None:
        if settings:
            takes = ", ".join(LLM_SETTINGS)
            return [f"llm.settings: the {provider} provider takes no settings (only {takes} do)"]
        return []
    try:
        model.model_validate({k: v for k, v in (settings or {}).items() if not is_secret_key(k)})
    except ValidationError as exc:
        return pydantic_errors(exc, "llm.settings", model)
    return []


# numbers a project may set, with their lower bound (strict: ``>``; otherwise ``>=``)
_BOUNDS: list[tuple[str, float, bool]] = [
    ("warehouse.statement_timeout_s", 0, True),
    ("warehouse.row_cap", 1, False),
    ("warehouse.max_concurrent_queries", 1, False),
    ("warehouse.digest_bytes_cap", 1, False),
    ("llm.max_tokens", 1, False),
    ("llm.timeout_s", 0, True),
    ("llm.analysis_budget_tokens", 1, False),
    ("max_steps", 1, False),
    ("analysis.leads_probes", 0, False),
    ("min_steps", 0, False),
]

# --------------------------------------------------------------------------- secrets

_SECRET_KEY = re.compile(
    r"(^|_)(password|passwd|pwd|passphrase|secret|token|private_key|api_key|apikey|access_key|secret_key"
    r"|client_secret|credentials?|auth_token)($|_)", re.I)
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@", re.I)
_KV_PASSWORD = re.compile(r"(^|\s)password\s*=\s*('(?:[^'\\]|\\.)+'|[^\s']+)", re.I)


# the keys that name where a secret is read; a near miss of one is a typo, not a secret
_REFERENCE_KEYS = ("api_key_env", "secret_block", "password_env", "password_block", "webhook_url_env",
                   "webhook_block", "credentials_env", "credentials_block", "token_env", "token_block")


def is_secret_key(key: str) -> bool:
    k = str(key).lower()
    if not _SECRET_KEY.search(k) or k.endswith(("_env", "_block")):
        return False
    return not difflib.get_close_matches(k, _REFERENCE_KEYS, n=1, cutoff=0.85)


def _secret_forms(path: str, key: str) -> str:
    """The env-var and Secret-block form that replaces a secret written at ``path``."""
    section = path.split(".", 1)[0]
    if path.startswith("llm.settings."):
        return ("llm.settings.access_token_env / ad_token_env: VAR (an environment variable); AWS and Google "
                "credentials come from their own chains (llm.settings.profile, AWS_PROFILE; "
                "llm.settings.service_account_file, GOOGLE_APPLICATION_CREDENTIALS)")
    if section == "llm":
        return "api_key_env: ANTHROPIC_API_KEY (an environment variable) or secret_block: NAME (a Prefect Secret block)"
    if section == "notify":
        return "webhook_url_env: VAR (an environment variable) or webhook_block: NAME (a Prefect Secret block)"
    if section == "warehouse":
        key = "password" if "pass" in key or key in ("pwd", "dsn") else key
    var = re.sub(r"[^A-Z0-9]+", "_", key.upper()).strip("_") or "SECRET"
    return f"{key}_env: MY_{var} (an environment variable) or {key}_block: NAME (a Prefect Secret block)"


# where `assay demo --postgres DSN` tells runs to read the DSN's password (never stored)
DEMO_PASSWORD_ENV = "ASSAY_DEMO_PG_PASSWORD"
DEMO_MYSQL_PASSWORD_ENV = "ASSAY_DEMO_MYSQL_PASSWORD"  # the same for `assay demo --mysql DSN`


def dsn_password(value: str) -> bool:
    """A PostgreSQL-style DSN (URL or key=value) that carries a password."""
    return bool(_URL_PASSWORD.search(value.strip()) or _KV_PASSWORD.search(value))


def strip_dsn_password(dsn: str) -> tuple[str, str | None]:
    """The DSN without its password, and the password (None when it had none)."""
    from psycopg import conninfo

    try:
        parts = conninfo.conninfo_to_dict(dsn)
    except Exception as exc:
        raise ConfigError(f"not a valid PostgreSQL DSN ({type(exc).__name__})") from None
    password = parts.pop("password", None)
    if password is None:
        return dsn, None
    return conninfo.make_conninfo("", **{k: v for k, v in parts.items() if v is not None}), str(password)


def _connection_key(path: str) -> bool:
    """A key whose value is a connection string (where a password could hide)."""
    key = path.rsplit(".", 1)[-1].lower()
    return key in ("dsn", "url", "uri", "conninfo", "connection_string") or key.endswith(("_dsn", "_url", "_uri"))


# mappings whose keys are the business's words (table names, profile fields, prompt names), not settings:
# a key such as `token_price` there is not a secret
_FREE_TEXT = ("profile", "descriptions", "prompt_overrides", "glossary")


def _free_text(path: str) -> bool:
    return any(part in _FREE_TEXT for part in re.split(r"[.\[]", path))


def secret_errors(data: Any, path: str = "") -> list[str]:
    """Every place in the config that holds a secret value, one line each."""
    out: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if is_secret_key(key) and value not in (None, "", {}, []) and not _free_text(path):
                out.append(f"{where}: secrets are never stored in a project; name where to read it instead: "
                           f"{_secret_forms(where, str(key))}")
            else:
                out += secret_errors(value, where)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += secret_errors(value, f"{path}[{i}]")
    elif isinstance(data, str) and _connection_key(path) and dsn_password(data):
        key = path.rsplit(".", 1)[-1]
        out.append(f"{path}: holds a password; remove it and name where to read it instead: "
                   f"{_secret_forms(path, key)}")
    return out


# --------------------------------------------------------------------------- cron


def cron_error(expr: str) -> str | None:
    """Why a cron expression is not one Prefect's Cron schedule accepts (None when it is).

    The same rule as Prefect's ``validate_cron_string`` (croniter, no random/hashed fields), so
    a schedule refused here is one the scheduler would refuse, and an accepted one is served."""
    from croniter import croniter

    if not isinstance(expr, str) or not expr.strip():
        return "an empty schedule; give a cron expression such as '0 6 * * 1' or leave it out"
    if not croniter.is_valid(expr):
        return f"{expr!r} is not a valid cron expression (five fields: minute hour day month weekday)"
    if any(f.casefold() in ("r", "h") for f in expr.split()):
        return f"{expr!r}: random and hashed cron fields are not supported"
    return None


def timezone_error(name: str) -> str | None:
    """Why a name is not an IANA time zone the scheduler knows (None when it is)."""
    import zoneinfo

    if not isinstance(name, str) or not name.strip():
        return "an empty time zone; give an IANA name such as 'Europe/Berlin' or leave it out (UTC)"
    try:
        zoneinfo.ZoneInfo(name)
        return None
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zones = sorted(zoneinfo.available_timezones())
        return f"{name!r} is not an IANA time zone{did_you_mean(name, zones, listing=False)}"


# --------------------------------------------------------------------------- unknown keys


def _nested(annotation) -> tuple[str, type[BaseModel]] | None:
    """('one'|'list', Model) when a field holds a model or a list of models."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            found = _nested(arg)
            if found:
                return found
        return None
    if origin is list:
        inner = _nested(get_args(annotation)[0]) if get_args(annotation) else None
        return ("list", inner[1]) if inner else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("one", annotation)
    return None


def unknown_keys(model: type[BaseModel], data: Any, path: str = "", *, skip=lambda key: False) -> list[str]:
    """One line per key the model does not have, recursively, with a suggestion."""
    if not isinstance(data, dict):
        return []
    fields = model.model_fields
    names = set(fields) | {f.alias for f in fields.values() if f.alias}
    by_alias = {f.alias: n for n, f in fields.items() if f.alias}
    out: list[str] = []
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in names:
            if not skip(key):
                out.append(f"{where}: unknown key{did_you_mean(key, names)}")
            continue
        nested = _nested(fields[by_alias.get(key, key)].annotation)
        if nested and nested[0] == "one":
            out += unknown_keys(nested[1], value, where, skip=skip)
        elif nested and isinstance(value, list):
            for i, item in enumerate(value):
                out += unknown_keys(nested[1], item, f"{where}[{i}]", skip=skip)
    return out


def pydantic_errors(exc: ValidationError, prefix: str = "", model: type[BaseModel] | None = None) -> list[str]:
    """One line per pydantic error, with the field path (and a suggestion for unknown keys)."""
    out = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e.get("loc", ()))
        where = ".".join(x for x in (prefix, loc) if x) or "(root)"
        if e.get("type") == "extra_forbidden" and model is not None:
            names = set(model.model_fields) | {f.alias for f in model.model_fields.values() if f.alias}
            out.append(f"{where}: unknown key{did_you_mean(str(e['loc'][-1]), names)}")
        else:
            msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
            msg = "required" if e.get("type") == "missing" else msg
            out.append(f"{where}: {msg}")
    return out


# --------------------------------------------------------------------------- the project


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


def project_errors(data: dict) -> tuple[Project | None, list[str]]:
    """All problems of a project mapping, one line each (field path first)."""
    from .llm import PROVIDERS

    errors = secret_errors(data)
    errors += unknown_keys(Project, data, skip=is_secret_key)
    try:
        project = Project.model_validate(data)
    except ValidationError as exc:
        errors += pydantic_errors(exc)
        # the rest of the file is checked too, on the project without the fields that failed (a new user fixed six
        # mistakes in five `project apply` runs, session 26): one report, every line
        project = _without_failed_fields(data, exc)
        if project is None:
            return None, _one_per_typo(errors)
    wh = project.warehouse
    settings_model = WAREHOUSE_SETTINGS.get(wh.kind)
    if settings_model is None:
        errors.append(f"warehouse.kind: unknown warehouse {wh.kind!r}"
                      f"{did_you_mean(wh.kind, WAREHOUSE_SETTINGS, listing=False)}; valid: {', '.join(WAREHOUSE_SETTINGS)}")
    else:
        clean = {k: v for k, v in wh.settings.items() if not is_secret_key(k)}
        try:
            settings_model.model_validate(clean)
        except ValidationError as exc:
            errors += pydantic_errors(exc, "warehouse.settings", settings_model)
    errors += _pack_errors(project)
    if project.llm.provider not in PROVIDERS:
        errors.append(f"llm.provider: unknown provider {project.llm.provider!r}"
                      f"{did_you_mean(project.llm.provider, PROVIDERS, listing=False)}; valid: {', '.join(PROVIDERS)}")
    elif project.llm.provider in ("openai", "openai-json", "scripted", "bedrock", "vertex", "azure") \
            and not project.llm.model:
        errors.append(f"llm.model: required for the {project.llm.provider} provider")
    if project.llm.provider in PROVIDERS:
        errors += llm_settings_errors(project.llm.provider, project.llm.settings)
    if project.llm.base_url is not None and not re.match(r"^https?://[^\s/]+", project.llm.base_url):
        errors.append(f"llm.base_url: {project.llm.base_url!r} is not an http(s) URL")
    for path, low, strict in _BOUNDS:
        value = _get(project, path)
        if value is not None and (value <= low if strict else value < low):
            errors.append(f"{path}: {value} must be {'greater than' if strict else 'at least'} {low:g}")
    for name, price in (project.llm.prices or {}).items():
        if price < 0:
            errors.append(f"llm.prices.{name}: {price} must not be negative")
    if project.min_steps > project.max_steps >= 1:
        errors.append(f"min_steps: {project.min_steps} is more than max_steps ({project.max_steps})")
    if project.schedule is not None:
        why = cron_error(project.schedule)
        if why:
            errors.append(f"schedule: {why}")
    if project.timezone is not None:
        why = timezone_error(project.timezone)
        if why:
            errors.append(f"timezone: {why}")
    return project, _one_per_typo(errors)


def _without_failed_fields(data: dict, exc: ValidationError) -> Project | None:
    """The project ``data`` describes with each field pydantic refused left out (its default then), or None."""
    import copy

    data = copy.deepcopy(data)
    for _ in range(5):
        for e in exc.errors():
            loc = [p for p in e.get("loc", ()) if not isinstance(p, int)]
            obj = data
            for part in loc[:-1]:
                obj = obj.get(part) if isinstance(obj, dict) else None
            if isinstance(obj, dict) and loc:
                obj.pop(loc[-1], None)
        try:
            return Project.model_validate(data)
        except ValidationError as again:
            exc = again
        except Exception:  # noqa: BLE001 - a shape no default repairs: the errors found so far stand
            return None
    return None


def _pack_errors(project: Project) -> list[str]:
    """A built-in pack's name and category, checked with the rest of the file (a ``pack_dir`` pack is read once its
    path is resolved: ``packs.pack_for_project``)."""
    from .packs import PackError, list_packs, load_pack

    if project.pack_dir or (project.goal and project.pack == "goal"):
        return []
    known = list_packs()
    if project.pack not in known:
        return [f"pack: unknown pack {project.pack!r}{did_you_mean(project.pack, known, listing=False)}; "
                f"valid: {', '.join(known)}"]
    if project.category is None:
        return []
    try:
        cats = load_pack(project.pack).categories
    except PackError as e:  # a broken built-in pack: its own error
        return [f"pack: {e}"]
    if project.category in cats:
        return []
    valid = ", ".join(cats) if cats else "none (leave category out)"
    return [f"category: {project.category!r} is not a category of the {project.pack} pack"
            f"{did_you_mean(project.category, cats, listing=False)}; valid: {valid}"]


def _one_per_typo(errors: list[str]) -> list[str]:
    """A misspelt required key is one error (the unknown key and its suggestion), not two."""
    suggested = set()
    for e in errors:
        m = re.match(r"^(.*?)([^.\[\]]+): unknown key \(did you mean ([^?]+)\?\)$", e)
        if m:
            suggested.add(f"{m.group(1)}{m.group(3)}")
    return [e for e in errors if not (e.endswith(": required") and e.removesuffix(": required") in suggested)]


def validate_project_data(data: dict, source: str) -> Project:
    """The project a user wrote, checked strictly; every problem as ``source: field: why``."""
    project, errors = project_errors(data)
    if errors:
        raise ConfigError("\n".join(f"{source}: {e}" for e in errors))
    assert project is not None
    return project


def check_project(project: Project) -> None:
    """At run start: the stored project passes the same strict checks as ``project apply``."""
    validate_project_data(project.model_dump(mode="json"), f"project {project.id}")


def check_warehouse_file(project: Project, source: str) -> None:
    """Before a project is saved: its DuckDB warehouse is a DuckDB file that is there. A missing path (a typo, a
    file not made yet) passed ``project apply`` and was only caught at ``doctor`` or ``discover``. Not part of
    ``validate_project_data``: that runs before a project file's relative paths are resolved, and at run start,
    where the warehouse itself says the file is gone."""
    if project.warehouse.kind != "duckdb":
        return
    path = str(project.warehouse.settings.get("path") or "")
    if not path or path == ":memory:":
        return
    from .warehouse.duckdb import is_duckdb_file

    if not Path(path).is_file():
        raise ConfigError(f"{source}: warehouse.settings.path: no such file {path}")
    if not is_duckdb_file(path):
        raise ConfigError(f"{source}: warehouse.settings.path: {path} is not a DuckDB database file")


def check_warehouse_contents(project: Project, source: str) -> None:
    """Before a project is saved, where the warehouse is a local DuckDB file (no server, nothing to wait for): its
    schemas and PII columns name what the file holds. A ``customers.emial`` typo passed ``project apply`` and was
    caught only by ``doctor`` or the run. Other warehouses are checked there, when they are reachable."""
    if project.warehouse.kind != "duckdb" or not project.warehouse.settings.get("path") \
            or project.warehouse.settings.get("path") == ":memory:":
        return
    from .warehouse import open_warehouse, tenant_row_counts

    wh = open_warehouse(project.warehouse.model_copy(update={"schemas": []}))  # every schema: a typo's neighbours
    try:
        tables = wh.list_tables()
        if not tables:  # data not loaded yet: the run says so when it starts
            return
        try:
            check_schema_found(project.warehouse, tables)
            mine = {s.lower() for s in project.warehouse.schemas}
            tenant_row_counts(wh, project.warehouse, [t for t in tables if not mine or t.schema_name.lower() in mine])
        except ConfigError as exc:
            raise ConfigError("\n".join(f"{source}: {line}" for line in str(exc).splitlines())) from None
    finally:
        wh.close()


def check_schema_found(cfg, tables) -> None:
    """What the warehouse listed can be analysed: it has tables, and every schema the project names
    has some (a typo in ``schemas`` would otherwise quietly analyse less, or nothing)."""
    found = {t.schema_name.lower() for t in tables}
    missing = [s for s in cfg.schemas if s.lower() not in found]
    errors = [f"warehouse.schemas: schema {m!r} has no tables or does not exist"
              + (f" (tables were found in: {', '.join(sorted(found))})" if found else "") for m in missing]
    if not tables:
        raise ConfigError("\n".join(errors) if errors else f"warehouse: the {cfg.kind} warehouse has no tables to "
                          "analyse" + (f" ({cfg.settings['path']})" if cfg.settings.get("path") else ""))
    for check in (lambda: check_pii_found(cfg.pii_columns, tables), lambda: check_tenant_found(cfg.tenant_filter,
                                                                                                 tables)):
        try:
            check()
        except ConfigError as exc:
            errors += str(exc).splitlines()
    if errors:  # every one of them, one line each
        raise ConfigError("\n".join(errors))


def check_tenant_found(tenant, tables) -> None:
    """The tenant column is a column of some table: a misspelt one (``tenant_id`` where the tables say
    ``tenantid``) had the guard refuse every query, and the run ended "completed" with no insight and no word why
    (a new user, session 26)."""
    if tenant is None:
        return
    names = sorted({c.name.lower() for t in tables for c in t.columns})
    if tenant.column.lower() in names:
        return
    near = difflib.get_close_matches(tenant.column.lower(), names, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise ConfigError(f"warehouse.tenant_filter.column: no table of the warehouse has a column {tenant.column!r}, "
                      f"so every query would be refused{hint}")


def check_pii_found(declared, tables) -> None:
    """Every declared PII column given with its table (``table.col``, ``schema.table.col``, any case) names a column
    of the warehouse: a typo there would leave the column it meant unmasked, without a word, so it stops the run as
    a misnamed schema does. A bare name (``email``) may be a list kept for many warehouses (the demos declare
    ``email`` and ``full_name`` for both): one that matches no column is logged, not refused."""

    names: set[str] = set()
    errors: list[str] = []
    for t in tables:
        for c in t.columns:
            names |= {c.name.lower(), f"{t.name}.{c.name}".lower(), f"{t.schema_name}.{t.name}.{c.name}".lower(),
                      f"{t.fqn}.{c.name}".lower()}
    for d in declared or []:
        if d.lower() in names:
            continue
        near = difflib.get_close_matches(d.lower(), sorted(n for n in names if n.count(".") == d.count(".")),
                                         n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        if "." not in d:
            logging.getLogger("assay").warning("warehouse.pii_columns: %r names no column of this warehouse%s", d,
                                               hint)
            continue
        errors.append(f"warehouse.pii_columns: {d!r} is no column of the warehouse, so nothing would be "
                      f"masked for it{hint}")
    if errors:
        raise ConfigError("\n".join(errors))
