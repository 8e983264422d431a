"""Google BigQuery adapter (google-cloud-bigquery).

BigQuery has no read-only session: give assay a service account with ``roles/bigquery.dataViewer``
on the datasets and ``roles/bigquery.jobUser`` on the billing project, nothing more. The guard
refuses everything but one SELECT before it is sent. Every query carries
``maximum_bytes_billed`` (a query that would bill more fails before it runs, and is billed
nothing), a server-side job timeout (``job_timeout_ms``) and a client wait of the same length;
results are read page by page up to cap + 1 rows (``max_results``), and the true row count comes
with the first page (``totalRows``) without reading the rest. ``explain_cost`` is a dry run:
the bytes the query would scan, which ``assay estimate`` shows before a run.

Schema discovery reads ``INFORMATION_SCHEMA`` for the project's datasets (``schemas``; all the
project's datasets when empty): per dataset one query over ``TABLES``, ``TABLE_OPTIONS``, ``COLUMNS``
and ``COLUMN_FIELD_PATHS`` (columns with their descriptions, nested STRUCT fields as
``parent.child``, table descriptions) and one over ``TABLE_CONSTRAINTS``, ``KEY_COLUMN_USAGE`` and
``CONSTRAINT_COLUMN_USAGE`` (declared foreign keys); per region one query over ``TABLE_STORAGE``
for row counts (``__TABLES__`` per dataset when the credentials may not read the region's view).
That is a few queries per dataset however many tables it holds, where the tables API needs a
``tables.get`` per table (``discovery: api`` still selects it). INFORMATION_SCHEMA queries are billed
(10 MB minimum each, never cached); they carry their own cap, ``metadata_maximum_bytes_billed``
(1 GiB by default). Column types are given in the API's names (INTEGER, FLOAT, BOOLEAN, RECORD,
``X[]`` for a repeated X) whichever way discovery ran. Credentials: a service-account JSON key in an
environment variable (the JSON itself or a path to it) or a Prefect Secret block; otherwise
Application Default Credentials. ``api_endpoint`` points the client at another endpoint
(the tests' loopback server).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import time

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, check_result_bytes, clean_comment, fix_prompt_for, rows_bytes
from .redact import scrub_error
from .values import table_from_rows

PAGE_SIZE = 10_000
DISCOVERY_THREADS = 8
METADATA_BYTES = 1024 ** 3  # the cap of discovery's INFORMATION_SCHEMA queries (each bills 10 MB at least)
_PROJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_DATASET_ID = re.compile(r"^[A-Za-z0-9_]+$")
_LOCATION = re.compile(r"^[A-Za-z0-9-]+$")
_GOOGLESQL_TO_API = {"INT64": "INTEGER", "FLOAT64": "FLOAT", "BOOL": "BOOLEAN"}


_HTTP_PREFIX = re.compile(r"^(?:\d{3} )?(?:GET|POST|PUT|PATCH|DELETE) \S+: ")


def _first_line(exc: BaseException) -> str:
    """The API's own message, one line, without the request line the client puts before it."""
    args = getattr(exc, "args", ())
    # google-auth's RefreshError carries (message, response body): the message, not the tuple
    msg = getattr(exc, "message", None) or (args[0] if len(args) > 1 and isinstance(args[0], str) else str(exc)) \
        or type(exc).__name__
    msg = str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__
    return scrub_error(_HTTP_PREFIX.sub("", msg)[:400])


def _reason(exc: BaseException) -> str:
    errs = getattr(exc, "errors", None) or []
    return str(errs[0].get("reason", "")) if errs and isinstance(errs[0], dict) else ""


def flatten_fields(fields, prefix: str = "") -> list[ColumnInfo]:
    """Columns of a BigQuery schema; RECORD fields also as ``parent.child`` (what SQL reads)."""
    out: list[ColumnInfo] = []
    for f in fields:
        typ = f.field_type + ("[]" if f.mode == "REPEATED" else "")
        out.append(ColumnInfo(name=prefix + f.name, type=typ, nullable=f.mode != "REQUIRED",
                              description=clean_comment(f.description)))
        if f.field_type in ("RECORD", "STRUCT") and f.mode != "REPEATED":
            out += flatten_fields(f.fields, prefix + f.name + ".")
    return out


def api_type(data_type: str) -> str:
    """A GoogleSQL type as INFORMATION_SCHEMA writes it (``ARRAY<INT64>``, ``STRUCT<a STRING>``,
    ``STRING(10)``) in the tables API's names (``INTEGER[]``, ``RECORD``, ``STRING``)."""
    t = (data_type or "").strip()
    up = t.upper()
    if up.startswith("ARRAY<") and up.endswith(">"):
        return api_type(t[6:-1]) + "[]"
    if up.startswith("STRUCT<"):
        return "RECORD"
    if up.startswith("RANGE<"):
        return "RANGE"
    base = re.sub(r"\(.*\)$", "", up).strip()
    return _GOOGLESQL_TO_API.get(base, base)


def option_text(value) -> str:
    """A table option's value as TABLE_OPTIONS gives it (a GoogleSQL string literal) as text."""
    if value is None:
        return ""
    v = str(value).strip()
    if len(v) >= 2 and v[0] == v[-1] == '"':
        try:
            return json.loads(v)
        except ValueError:
            return v[1:-1]
    return v


class BigQueryWarehouse:
    kind = "bigquery"
    dialect = "bigquery"
    concurrent_queries = True

    def __init__(self, cfg: WarehouseConfig):
        from google.api_core import exceptions as gexc
        from google.cloud import bigquery

        self._bq = bigquery
        self._gexc = gexc
        s = dict(cfg.settings)
        if not s.get("project"):
            raise ConfigError("warehouse.settings.project: required for bigquery")
        self.project = s["project"]
        self.database = self.project  # `project.dataset.table`: the guard refuses other projects
        self.schemas = list(cfg.schemas)
        self.default_schema = self.schemas[0] if self.schemas else None
        self.timeout_s = cfg.statement_timeout_s
        self.max_bytes = s.get("maximum_bytes_billed", 10 * 1024 ** 3)
        self.max_tables = int(s.get("max_tables", 2000))
        self.location = s.get("location")
        self.endpoint = s.get("api_endpoint")
        self.where = self.endpoint or "bigquery.googleapis.com"
        self.connect_timeout = float(s.get("connect_timeout", 20))
        self.discovery = s.get("discovery", "information_schema")
        if self.discovery not in ("information_schema", "api"):
            raise ConfigError(f"warehouse.settings.discovery: {self.discovery!r} is not information_schema or api")
        self.metadata_bytes = int(s.get("metadata_maximum_bytes_billed", METADATA_BYTES))
        if not _PROJECT_ID.match(str(self.project)):
            raise ConfigError(f"warehouse.settings.project: {self.project!r} is not a BigQuery project id")
        bad = [d for d in self.schemas if not _DATASET_ID.match(d)]
        if bad:
            raise ConfigError(f"warehouse.schemas: {bad[0]!r} is not a BigQuery dataset id (letters, digits, _)")
        self._locations: dict[str, str] = {}  # dataset -> location, as datasets.get reports it
        creds = self._credentials(s)
        options = {"api_endpoint": self.endpoint} if self.endpoint else None
        try:
            self.client = bigquery.Client(project=s.get("billing_project") or self.project, credentials=creds,
                                          location=self.location, client_options=options)
        except Exception as exc:  # no project and no credentials found, a bad option
            raise WarehouseUnreachable(f"bigquery: cannot create the client ({_first_line(exc)})") from None
        self.health_check()

    # ------------------------------------------------------------------ credentials

    def _credentials(self, s: dict):
        text = secrets.resolve(s.get("credentials_env"), s.get("credentials_block"), what="bigquery",
                               required=False)
        if text:
            from google.oauth2 import service_account

            try:
                info = json.loads(text) if text.lstrip().startswith("{") else json.loads(
                    open(os.path.expanduser(text)).read())
                return service_account.Credentials.from_service_account_info(
                    info, scopes=["https://www.googleapis.com/auth/bigquery"])
            except (OSError, ValueError, KeyError) as exc:
                where = s.get("credentials_env") or s.get("credentials_block")
                raise ConfigError(f"warehouse.settings: the bigquery credentials in {where} are not a service-"
                                  f"account JSON key or a path to one ({type(exc).__name__})") from None
        if s.get("credentials_env") or s.get("credentials_block"):
            secrets.resolve(s.get("credentials_env"), s.get("credentials_block"), what="bigquery")  # one clear line
        if s.get("api_endpoint"):  # an emulator or the tests' loopback server: no Google sign-in
            from google.auth.credentials import AnonymousCredentials

            return AnonymousCredentials()
        try:
            import google.auth

            creds, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/bigquery"])
            return creds
        except Exception as exc:
            raise WarehouseUnreachable(
                "bigquery: no Google credentials; set warehouse.settings.credentials_env (a service-account "
                f"JSON key) or configure Application Default Credentials ({type(exc).__name__})") from None

    # ------------------------------------------------------------------ errors

    def _retry(self, deadline_s: float):
        from google.cloud.bigquery import DEFAULT_RETRY

        return DEFAULT_RETRY.with_timeout(deadline_s) if hasattr(DEFAULT_RETRY, "with_timeout") else \
            DEFAULT_RETRY.with_deadline(deadline_s)

    def _unreachable(self, exc: BaseException, what: str = "") -> WarehouseUnreachable:
        g = self._gexc
        import requests

        if isinstance(exc, (g.Unauthorized,)) or type(exc).__name__ in ("RefreshError", "DefaultCredentialsError"):
            return WarehouseUnreachable(f"bigquery: the credentials were refused ({_first_line(exc)})")
        if isinstance(exc, g.Forbidden):
            return WarehouseUnreachable(f"bigquery: access denied{what} ({_first_line(exc)})")
        if isinstance(exc, g.NotFound):
            return WarehouseUnreachable(f"bigquery: {what.strip(' :') or 'not found'} does not exist or is not "
                                        f"visible to these credentials ({_first_line(exc)})")
        if isinstance(exc, (requests.exceptions.Timeout, concurrent.futures.TimeoutError, TimeoutError,
                            g.RetryError, g.DeadlineExceeded)):
            return WarehouseUnreachable(f"bigquery: cannot reach {self.where} (timed out after "
                                        f"{self.connect_timeout:g}s)")
        if isinstance(exc, (requests.exceptions.ConnectionError, OSError)):
            return WarehouseUnreachable(f"bigquery: cannot reach {self.where} ({type(exc).__name__})")
        return WarehouseUnreachable(f"bigquery: {_first_line(exc)}")

    # ------------------------------------------------------------------ protocol

    def health_check(self) -> None:
        retry = self._retry(self.connect_timeout)
        try:
            if self.schemas:
                for d in self.schemas:
                    ds = self.client.get_dataset(f"{self.project}.{d}", retry=retry, timeout=self.connect_timeout)
                    if getattr(ds, "location", None):
                        self._locations[d] = ds.location
            else:
                list(self.client.list_datasets(self.project, max_results=1, retry=retry,
                                               timeout=self.connect_timeout))
        except Exception as exc:
            ds = next((d for d in self.schemas if d in str(exc)), None) if self.schemas else None
            raise self._unreachable(exc, f" dataset {self.project}.{ds}" if ds else
                                    f" to project {self.project}") from None

    def quote(self, ident: str) -> str:
        return "`" + ident.replace("\\", "\\\\").replace("`", "\\`") + "`"

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("bigquery")

    def _job_config(self, **kw):
        cfg = self._bq.QueryJobConfig(use_legacy_sql=False, **kw)
        if self.default_schema:
            cfg.default_dataset = f"{self.project}.{self.default_schema}"
        return cfg

    def explain_cost(self, sql: str) -> dict | None:
        """A dry run: the bytes BigQuery would scan (and bill), without running the query."""
        try:
            job = self.client.query(sql, job_config=self._job_config(dry_run=True, use_query_cache=False),
                                    timeout=self.connect_timeout, retry=self._retry(self.connect_timeout))
            return {"unit": "bytes", "value": float(job.total_bytes_processed or 0)}
        except Exception:
            return None

    def list_tables(self) -> list[TableInfo]:
        if self.discovery == "api":
            return self._list_tables_api()
        retry = self._retry(max(self.connect_timeout, 60))
        try:
            datasets = self.schemas or [d.dataset_id for d in self.client.list_datasets(self.project, retry=retry)]
        except Exception as exc:
            raise self._unreachable(exc, " while listing datasets:") from None
        datasets = [d for d in datasets if _DATASET_ID.match(d)]
        out: list[TableInfo] = []
        for d in datasets:
            if len(out) >= self.max_tables:
                break
            out += self._dataset_tables(d, self.max_tables - len(out))
        self._row_counts(out)
        return out

    # ------------------------------------------------------------------ INFORMATION_SCHEMA

    def _view(self, dataset: str, view: str) -> str:
        return f"`{self.project}.{dataset}.INFORMATION_SCHEMA.{view}`"

    def _meta(self, sql: str, what: str) -> list[dict]:
        """One metadata query (never cached; its own bytes cap), every row; failures one line."""
        g = self._gexc
        timeout = max(self.timeout_s, 60.0)
        cfg = self._bq.QueryJobConfig(use_legacy_sql=False, use_query_cache=False,
                                      job_timeout_ms=int(timeout * 1000))
        if self.metadata_bytes:
            cfg.maximum_bytes_billed = int(self.metadata_bytes)
        try:
            rows = self.client.query_and_wait(sql, job_config=cfg, wait_timeout=timeout, api_timeout=timeout,
                                              retry=self._retry(timeout), job_retry=None, page_size=PAGE_SIZE)
            return [dict(r.items()) for r in rows]
        except g.GoogleAPICallError as exc:
            if _reason(exc) == "bytesBilledLimitExceeded":
                raise WarehouseUnreachable(
                    f"bigquery: reading {what} would bill more than metadata_maximum_bytes_billed "
                    f"({self.metadata_bytes:,} bytes; INFORMATION_SCHEMA queries bill 10 MB at least): "
                    f"{_first_line(exc)}") from None
            raise self._unreachable(exc, f" while reading {what}:") from None
        except Exception as exc:
            raise self._unreachable(exc, f" while reading {what}:") from None

    def _dataset_tables(self, dataset: str, limit: int) -> list[TableInfo]:
        """A dataset's tables, columns and descriptions in one query; its foreign keys in another."""
        v = lambda name: self._view(dataset, name)  # noqa: E731
        rows = self._meta(
            "SELECT t.table_name, o.option_value AS table_description, c.column_name, c.is_nullable, "
            "f.field_path, f.data_type, f.description "
            f"FROM {v('TABLES')} AS t "
            f"JOIN {v('COLUMNS')} AS c ON c.table_name = t.table_name "
            f"JOIN {v('COLUMN_FIELD_PATHS')} AS f ON f.table_name = c.table_name AND f.column_name = c.column_name "
            f"LEFT JOIN {v('TABLE_OPTIONS')} AS o ON o.table_name = t.table_name AND o.option_name = 'description' "
            f"WHERE c.is_hidden = 'NO' AND t.table_name IN (SELECT table_name FROM {v('TABLES')} "
            f"ORDER BY table_name LIMIT {int(limit)}) "
            "ORDER BY t.table_name, c.ordinal_position, f.field_path", f"the schema of dataset {dataset}")
        tables: dict[str, TableInfo] = {}
        in_array: dict[str, set[str]] = {}  # table -> field paths that are (or are inside) an ARRAY
        for r in rows:
            name = r["table_name"]
            t = tables.get(name)
            if t is None:
                t = tables[name] = TableInfo(schema=dataset, name=name,
                                             description=clean_comment(option_text(r["table_description"])))
                in_array[name] = set()
            path, typ = r["field_path"], str(r["data_type"] or "")
            parent = path.rsplit(".", 1)[0] if "." in path else None
            if parent is not None and (parent in in_array[name]
                                       or not any(c.name == parent for c in t.columns)):
                in_array[name].add(path)  # a field of a repeated record: not addressable as parent.child
                continue
            if typ.upper().startswith("ARRAY<"):
                in_array[name].add(path)
            nullable = r["is_nullable"] != "NO" if parent is None else True
            t.columns.append(ColumnInfo(name=path, type=api_type(typ), nullable=nullable,
                                        description=clean_comment(r["description"])))
        try:
            keys = self._meta(
                "SELECT k.table_name, k.column_name, u.table_schema AS ref_schema, u.table_name AS ref_table "
                f"FROM {v('TABLE_CONSTRAINTS')} AS tc "
                f"JOIN {v('KEY_COLUMN_USAGE')} AS k ON k.constraint_name = tc.constraint_name "
                "AND k.table_name = tc.table_name "
                f"JOIN {v('CONSTRAINT_COLUMN_USAGE')} AS u ON u.constraint_name = tc.constraint_name "
                "WHERE tc.constraint_type = 'FOREIGN KEY' AND k.ordinal_position = 1 "
                "ORDER BY k.table_name, k.column_name", f"the keys of dataset {dataset}")
        except WarehouseUnreachable:
            keys = []  # declared keys are a hint: a dataset whose key views cannot be read still has its tables
        refs: dict[tuple[str, str], set[str]] = {}
        for k in keys:
            refs.setdefault((k["table_name"], k["column_name"]), set()).add(f"{k['ref_schema']}.{k['ref_table']}")
        for (table, column), targets in refs.items():
            # a constraint's name is unique within its table only: two tables' same-named keys are ambiguous
            if table in tables and len(targets) == 1:
                tables[table].foreign_keys.setdefault(column, next(iter(targets)))
        return list(tables.values())

    def _dataset_location(self, dataset: str) -> str | None:
        if dataset not in self._locations:
            try:
                ds = self.client.get_dataset(f"{self.project}.{dataset}", retry=self._retry(self.connect_timeout),
                                             timeout=self.connect_timeout)
                self._locations[dataset] = ds.location or ""
            except Exception as exc:
                raise self._unreachable(exc, f" dataset {self.project}.{dataset}") from None
        return self._locations[dataset] or self.location

    def _row_counts(self, tables: list[TableInfo]) -> None:
        """Row counts from the region's TABLE_STORAGE (one query per region), else each dataset's
        ``__TABLES__`` (readable with the dataset's own viewer role)."""
        by_region: dict[str, set[str]] = {}
        for d in dict.fromkeys(t.schema_name for t in tables):
            loc = self._dataset_location(d)
            by_region.setdefault(loc if loc and _LOCATION.match(loc) else "", set()).add(d)
        counts: dict[tuple[str, str], int] = {}
        for loc, datasets in by_region.items():
            got = None
            if loc:
                names = ", ".join("'" + d + "'" for d in sorted(datasets))
                try:
                    got = self._meta(
                        "SELECT table_schema, table_name, total_rows FROM "
                        f"`{self.project}.region-{loc.lower()}.INFORMATION_SCHEMA.TABLE_STORAGE` "
                        f"WHERE table_schema IN ({names}) AND NOT deleted", f"the row counts in {loc}")
                except WarehouseUnreachable:
                    got = None
            if got is None:
                got = []
                for d in sorted(datasets):
                    try:
                        got += [{"table_schema": d, "table_name": r["table_id"], "total_rows": r["row_count"]}
                                for r in self._meta(f"SELECT table_id, row_count FROM `{self.project}.{d}.__TABLES__`",
                                                    f"the row counts of dataset {d}")]
                    except WarehouseUnreachable:
                        pass  # row counts are an estimate: unknown stays 0
            for r in got:
                counts[(r["table_schema"], r["table_name"])] = int(r["total_rows"] or 0)
        for t in tables:
            t.row_count = counts.get((t.schema_name, t.name), 0)

    def _list_tables_api(self) -> list[TableInfo]:
        retry = self._retry(max(self.connect_timeout, 60))
        try:
            datasets = self.schemas or [d.dataset_id for d in self.client.list_datasets(self.project, retry=retry)]
            items = []
            for d in datasets:
                for it in self.client.list_tables(f"{self.project}.{d}", retry=retry, page_size=1000):
                    items.append(it)
                    if len(items) >= self.max_tables:
                        break
            with concurrent.futures.ThreadPoolExecutor(DISCOVERY_THREADS) as pool:
                full = list(pool.map(lambda it: self.client.get_table(it.reference, retry=retry), items))
        except Exception as exc:
            raise self._unreachable(exc, " while listing tables:") from None
        out = []
        for t in full:
            info = TableInfo(schema=t.dataset_id, name=t.table_id, row_count=int(t.num_rows or 0),
                             description=clean_comment(t.description), columns=flatten_fields(t.schema))
            cons = getattr(t, "table_constraints", None)
            for fk in (getattr(cons, "foreign_keys", None) or []):
                refs = fk.column_references or []
                if refs:  # first key column only, as the other engines
                    info.foreign_keys.setdefault(refs[0].referencing_column,
                                                 f"{fk.referenced_table.dataset_id}.{fk.referenced_table.table_id}")
            out.append(info)
        return out

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        sql = f"SELECT * FROM {self.quote(table.schema_name)}.{self.quote(table.name)} LIMIT {int(n)}"
        return self.query(sql, row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        import requests

        g = self._gexc
        t0 = time.perf_counter()
        kw = {"maximum_bytes_billed": int(self.max_bytes)} if self.max_bytes else {}
        cfg = self._job_config(job_timeout_ms=int(timeout_s * 1000), **kw)
        try:
            rows = self.client.query_and_wait(
                sql, job_config=cfg, wait_timeout=timeout_s, api_timeout=timeout_s,
                max_results=row_cap + 1, page_size=min(PAGE_SIZE, row_cap + 1),
                retry=self._retry(timeout_s), job_retry=None)
            cols = [f.name for f in rows.schema]
            got = []
            size = 0
            for r in rows:
                got.append(tuple(r.values()))
                size += rows_bytes(got[-1:])
                check_result_bytes(size)  # the row cap counts rows, not bytes
                if len(got) > row_cap or time.perf_counter() - t0 > timeout_s:
                    break
            if len(got) <= row_cap and time.perf_counter() - t0 > timeout_s:
                raise concurrent.futures.TimeoutError()
            total = rows.total_rows
        except (concurrent.futures.TimeoutError, TimeoutError, requests.exceptions.Timeout, g.DeadlineExceeded,
                g.RetryError):
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except g.GoogleAPICallError as exc:
            reason = _reason(exc)
            if reason == "bytesBilledLimitExceeded":
                raise QueryError(f"the query would bill more than maximum_bytes_billed ({int(self.max_bytes):,} "
                                 f"bytes): {_first_line(exc)}; select fewer columns or filter on the partition "
                                 "column") from None
            if reason in ("jobTimeout", "timeout") or "timeout" in reason.lower():
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            raise QueryError(_first_line(exc)) from None
        except requests.exceptions.RequestException as exc:
            raise QueryError(f"the connection to BigQuery failed during the query ({type(exc).__name__})") from None
        except QueryError:  # the result grew past its byte budget
            raise
        except Exception as exc:
            raise QueryError(f"the result could not be read: {type(exc).__name__}: {scrub_error(str(exc))[:300]}"
                             ) from None
        truncated = len(got) > row_cap
        got = got[:row_cap]
        return QueryResult(table=table_from_rows(cols, got), truncated=truncated,
                           total_rows=int(total) if truncated and total is not None else None,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
