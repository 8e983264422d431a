"""A loopback server that answers the BigQuery REST calls the adapter makes, from a DuckDB file.

Not a mock of the adapter: the real google-cloud-bigquery client talks HTTP to it. It serves
``datasets.get``/``datasets.list``, ``tables.list`` (paged), ``tables.get`` (schema, numRows,
descriptions, tableConstraints), ``jobs.query``/``jobs.getQueryResults`` (paged with pageToken,
values encoded as BigQuery's REST API does), ``jobs.insert`` for dry runs and ``jobs.cancel``, and a ``/token`` endpoint that refuses every
service-account key pointed at it (``token_uri``), as Google does a revoked one.
Query text is GoogleSQL, transpiled to DuckDB by sqlglot; a DuckDB schema is a dataset.
Queries may read the dataset-qualified ``INFORMATION_SCHEMA`` views the adapter's discovery reads
(``TABLES``, ``TABLE_OPTIONS``, ``COLUMNS``, ``COLUMN_FIELD_PATHS`` with nested STRUCT fields,
``TABLE_CONSTRAINTS``, ``KEY_COLUMN_USAGE``, ``CONSTRAINT_COLUMN_USAGE``), the dataset's
``__TABLES__`` and the region-qualified ``TABLE_STORAGE``, with BigQuery's columns and GoogleSQL
type names, built from the DuckDB catalog and the ``keys``/``descriptions`` given; each reference
bills BigQuery's 10 MB minimum. ``storage_denied`` makes ``TABLE_STORAGE`` answer Access Denied
(credentials with a dataset role only). ``maximumBytesBilled`` is enforced with a deterministic byte estimate (8 bytes per value of
every column a query names, over the rows of the tables it reads), and ``delay_s`` makes every
query answer late (for the timeout tests). Errors have BigQuery's JSON shape.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

_TYPES = {"BIGINT": "INTEGER", "INTEGER": "INTEGER", "SMALLINT": "INTEGER", "HUGEINT": "INTEGER",
          "DOUBLE": "FLOAT", "FLOAT": "FLOAT", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN", "DATE": "DATE",
          "TIMESTAMP": "DATETIME", "TIMESTAMP WITH TIME ZONE": "TIMESTAMP", "BLOB": "BYTES", "TIME": "TIME"}


def bq_type(duck: str) -> tuple[str, str]:
    """(BigQuery type, mode) of a DuckDB column type."""
    if duck.endswith("[]"):
        return bq_type(duck[:-2])[0], "REPEATED"
    if duck.startswith("DECIMAL"):
        return "NUMERIC", "NULLABLE"
    return _TYPES.get(duck, "STRING"), "NULLABLE"


_GSQL = {"BIGINT": "INT64", "INTEGER": "INT64", "SMALLINT": "INT64", "TINYINT": "INT64", "HUGEINT": "INT64",
         "UBIGINT": "INT64", "UINTEGER": "INT64", "DOUBLE": "FLOAT64", "FLOAT": "FLOAT64", "VARCHAR": "STRING",
         "BOOLEAN": "BOOL", "DATE": "DATE", "TIMESTAMP": "DATETIME", "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
         "BLOB": "BYTES", "TIME": "TIME"}
METADATA_MIN_BYTES = 10 * 1024 * 1024  # BigQuery bills an INFORMATION_SCHEMA query 10 MB at least
_S, _I, _B = pa.string(), pa.int64(), pa.bool_()
_VIEWS = {  # INFORMATION_SCHEMA view -> its columns as BigQuery has them (the ones served)
    "TABLES": {"table_catalog": _S, "table_schema": _S, "table_name": _S, "table_type": _S},
    "TABLE_OPTIONS": {"table_catalog": _S, "table_schema": _S, "table_name": _S, "option_name": _S,
                      "option_type": _S, "option_value": _S},
    "COLUMNS": {"table_catalog": _S, "table_schema": _S, "table_name": _S, "column_name": _S,
                "ordinal_position": _I, "is_nullable": _S, "data_type": _S, "is_hidden": _S},
    "COLUMN_FIELD_PATHS": {"table_catalog": _S, "table_schema": _S, "table_name": _S, "column_name": _S,
                           "field_path": _S, "data_type": _S, "description": _S},
    "TABLE_CONSTRAINTS": {"constraint_catalog": _S, "constraint_schema": _S, "constraint_name": _S,
                          "table_catalog": _S, "table_schema": _S, "table_name": _S, "constraint_type": _S},
    "KEY_COLUMN_USAGE": {"constraint_catalog": _S, "constraint_schema": _S, "constraint_name": _S,
                         "table_catalog": _S, "table_schema": _S, "table_name": _S, "column_name": _S,
                         "ordinal_position": _I},
    "CONSTRAINT_COLUMN_USAGE": {"table_catalog": _S, "table_schema": _S, "table_name": _S, "column_name": _S,
                                "constraint_catalog": _S, "constraint_schema": _S, "constraint_name": _S},
    "TABLE_STORAGE": {"project_id": _S, "table_schema": _S, "table_name": _S, "total_rows": _I, "deleted": _B},
    "__TABLES__": {"project_id": _S, "dataset_id": _S, "table_id": _S, "row_count": _I},
}


def googlesql(t) -> str:
    """A DuckDB type (DuckDBPyType) in GoogleSQL's spelling, as INFORMATION_SCHEMA writes it."""
    if t.id == "list":
        return f"ARRAY<{googlesql(t.children[0][1])}>"
    if t.id == "struct":
        return "STRUCT<" + ", ".join(f"{n} {googlesql(c)}" for n, c in t.children) + ">"
    if t.id == "decimal":
        return "NUMERIC"
    return _GSQL.get(str(t), "STRING")


def field_paths(name: str, t) -> list[tuple[str, str]]:
    """(field_path, data_type) of a column and every field nested in it (through arrays too)."""
    out = [(name, googlesql(t))]
    inner = t.children[0][1] if t.id == "list" else t
    if inner.id == "struct":
        for n, c in inner.children:
            out += field_paths(f"{name}.{n}", c)
    return out


def _cell(v, typ: str):
    if v is None:
        return None
    if isinstance(v, list):
        return [{"v": _cell(x, typ)} for x in v]
    if isinstance(v, bool):
        return "true" if v else "false"
    if typ == "TIMESTAMP" and isinstance(v, dt.datetime):
        return str(int(v.timestamp() * 1_000_000))  # int64 microseconds (formatOptions.useInt64Timestamp)
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, bytes):
        import base64

        return base64.b64encode(v).decode()
    if isinstance(v, (float, int, decimal.Decimal)):
        return str(v)
    return str(v)


class FakeBigQuery:
    def __init__(self, duckdb_path: str, project: str = "test-project", port: int = 0, page_rows: int = 7,
                 tables_page: int = 2):
        self.path = duckdb_path
        self.project = project
        self.page_rows = page_rows
        self.tables_page = tables_page
        self.delay_s = 0.0
        self.requests: list[tuple[str, str, dict]] = []  # (method, path, body) as received
        self.keys: dict[tuple[str, str], dict] = {}  # (dataset, table) -> tableConstraints
        self.descriptions: dict[tuple[str, str, str | None], str] = {}  # (dataset, table, field path or None)
        self.hidden: dict[tuple[str, str], list[str]] = {}  # pseudo columns (_PARTITIONTIME) of a table
        self.storage_denied = False
        self._jobs: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._db = duckdb.connect(duckdb_path, read_only=True)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code: int, body: dict):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str):
                u = urlparse(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"form": raw.decode("utf-8", "replace")}  # the OAuth token request is a form
                server.requests.append((method, u.path, body))
                q = {k: v[-1] for k, v in parse_qs(u.query).items()}
                try:
                    code, out = server.route(method, u.path, q, body)
                except OAuthRefusal:
                    code, out = 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
                except Exception as e:
                    if not isinstance(e, BQError):
                        e = BQError(500, f"{type(e).__name__}: {e}", "backendError")
                    code, out = e.code, {"error": {"code": e.code, "message": e.message, "status": e.status,
                                                   "errors": [{"reason": e.reason, "message": e.message}]}}
                try:
                    self._send(code, out)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *a):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._db.close()

    # ------------------------------------------------------------------ duckdb side

    def _sql(self, q: str, params=None):
        with self._lock:
            cur = self._db.cursor()
            try:
                return cur.execute(q, params or []).fetchall()
            finally:
                cur.close()

    def datasets(self) -> list[str]:
        return [r[0] for r in self._sql("SELECT DISTINCT table_schema FROM information_schema.tables ORDER BY 1")]

    def tables(self, dataset: str) -> list[str]:
        return [r[0] for r in self._sql("SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
                                        "ORDER BY 1", [dataset])]

    def columns(self, dataset: str, table: str) -> list[tuple[str, str]]:
        return self._sql("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ? "
                         "AND table_name = ? ORDER BY ordinal_position", [dataset, table])

    # ------------------------------------------------------------------ routes

    def route(self, method: str, path: str, q: dict, body: dict):
        if path == "/token" and method == "POST":  # a service-account key's token_uri: this key is refused
            raise OAuthRefusal()
        p = path.removeprefix("/bigquery/v2")
        m = re.fullmatch(r"/projects/([^/]+)(/.*)?", p)
        if not m:
            raise BQError(404, f"Not found: {path}", "notFound")
        project, rest = m.group(1), m.group(2) or ""
        if method == "GET" and rest == "/datasets":
            return 200, {"datasets": [{"datasetReference": {"projectId": project, "datasetId": d}, "id": f"{project}:{d}"}
                                      for d in self.datasets()]}
        if (m := re.fullmatch(r"/datasets/([^/]+)", rest)) and method == "GET":
            self._dataset(project, m.group(1))
            return 200, {"datasetReference": {"projectId": project, "datasetId": m.group(1)},
                         "id": f"{project}:{m.group(1)}", "location": "US"}
        if (m := re.fullmatch(r"/datasets/([^/]+)/tables", rest)) and method == "GET":
            return 200, self._tables_list(project, m.group(1), q)
        if (m := re.fullmatch(r"/datasets/([^/]+)/tables/([^/]+)", rest)) and method == "GET":
            return 200, self._table(project, m.group(1), m.group(2))
        if rest == "/queries" and method == "POST":
            return 200, self._query(project, body)
        if (m := re.fullmatch(r"/queries/([^/]+)", rest)) and method == "GET":
            return 200, self._results(project, m.group(1), q)
        if rest == "/jobs" and method == "POST":
            return 200, self._insert(project, body)
        if (m := re.fullmatch(r"/jobs/([^/]+)", rest)) and method == "GET":
            return 200, self._job_resource(project, m.group(1))
        if (m := re.fullmatch(r"/jobs/([^/]+)/cancel", rest)) and method == "POST":
            return 200, {"job": self._job_resource(project, m.group(1))}
        raise BQError(404, f"Not found: {method} {path}", "notFound")

    def _dataset(self, project: str, dataset: str) -> None:
        if project != self.project or dataset not in self.datasets():
            raise BQError(404, f"Not found: Dataset {project}:{dataset}", "notFound")

    def _tables_list(self, project: str, dataset: str, q: dict) -> dict:
        self._dataset(project, dataset)
        names = self.tables(dataset)
        start = int(q.get("pageToken") or 0)
        size = min(int(q.get("maxResults") or self.tables_page), self.tables_page)
        page = names[start:start + size]
        out = {"kind": "bigquery#tableList", "totalItems": len(names),
               "tables": [{"kind": "bigquery#table", "id": f"{project}:{dataset}.{t}", "type": "TABLE",
                           "tableReference": {"projectId": project, "datasetId": dataset, "tableId": t}}
                          for t in page]}
        if start + size < len(names):
            out["nextPageToken"] = str(start + size)
        return out

    def _table(self, project: str, dataset: str, table: str) -> dict:
        self._dataset(project, dataset)
        if table not in self.tables(dataset):
            raise BQError(404, f"Not found: Table {project}:{dataset}.{table}", "notFound")
        fields = []
        for name, typ in self.columns(dataset, table):
            t, mode = bq_type(typ)
            f = {"name": name, "type": t, "mode": mode}
            if (d := self.descriptions.get((dataset, table, name))):
                f["description"] = d
            fields.append(f)
        n = self._sql(f'SELECT count(*) FROM "{dataset}"."{table}"')[0][0]
        out = {"kind": "bigquery#table", "id": f"{project}:{dataset}.{table}", "type": "TABLE",
               "tableReference": {"projectId": project, "datasetId": dataset, "tableId": table},
               "schema": {"fields": fields}, "numRows": str(n), "numBytes": str(n * 8 * len(fields)),
               "location": "US"}
        if (d := self.descriptions.get((dataset, table, None))):
            out["description"] = d
        if (k := self.keys.get((dataset, table))):
            out["tableConstraints"] = k
        return out

    def _bytes(self, tree: exp.Expression, dataset: str | None) -> int:
        """8 bytes per value of each named column of each table read (deterministic, not BigQuery's)."""
        total = 0
        names = {c.name.lower() for c in tree.find_all(exp.Column)}
        star = any(isinstance(s, exp.Star) for s in tree.find_all(exp.Star))
        for t in tree.find_all(exp.Table):
            ds = t.db or dataset
            if not ds or t.name not in self.tables(ds):
                continue
            cols = [c for c, _ in self.columns(ds, t.name)]
            used = len(cols) if star else sum(1 for c in cols if c.lower() in names) or 1
            total += self._sql(f'SELECT count(*) FROM "{ds}"."{t.name}"')[0][0] * used * 8
        return total

    def _translate(self, sql: str, body: dict) -> tuple[str, int, dict[str, pa.Table]]:
        """(DuckDB SQL, bytes billed, metadata relations the SQL reads by name)."""
        dataset = (body.get("defaultDataset") or {}).get("datasetId")
        try:
            tree = sqlglot.parse_one(sql, read="bigquery")
        except sqlglot.errors.ParseError as e:
            raise BQError(400, f"Syntax error: {str(e).splitlines()[0]}", "invalidQuery") from None
        relations: dict[str, pa.Table] = {}
        for t in list(tree.find_all(exp.Table)):
            if t.catalog and t.catalog != self.project:
                raise BQError(403, f"Access Denied: Project {t.catalog}", "accessDenied")
            view = t.name.upper().removeprefix("INFORMATION_SCHEMA.") if (
                t.name.upper().startswith("INFORMATION_SCHEMA.") or t.name == "__TABLES__") else None
            if view is not None:
                name = f"_meta_{len(relations)}_{uuid.uuid4().hex[:6]}"
                relations[name] = self._metadata(view, t.db or dataset or "")
                t.replace(exp.Table(this=exp.to_identifier(name), alias=t.args.get("alias")))
                continue
            t.set("catalog", None)
            if not t.db and dataset:
                t.set("db", exp.to_identifier(dataset))
        return tree.sql(dialect="duckdb"), self._bytes(tree, dataset) + METADATA_MIN_BYTES * len(relations), relations

    def _metadata(self, view: str, scope: str) -> pa.Table:
        """An INFORMATION_SCHEMA view (or ``__TABLES__``) of a dataset, or of a region (TABLE_STORAGE)."""
        if view not in _VIEWS:
            raise BQError(400, f"Invalid INFORMATION_SCHEMA view: {view}", "invalidQuery")
        rows: list[dict] = []
        if view == "TABLE_STORAGE":
            if not scope.startswith("region-"):
                raise BQError(400, "TABLE_STORAGE needs a region qualifier", "invalidQuery")
            if self.storage_denied:
                raise BQError(403, f"Access Denied: Table {self.project}:{scope}.INFORMATION_SCHEMA.TABLE_STORAGE: "
                              "User does not have permission to query table", "accessDenied")
            if scope == "region-us":
                for d in self.datasets():
                    for t in self.tables(d):
                        n = self._sql(f'SELECT count(*) FROM "{d}"."{t}"')[0][0]
                        rows.append({"project_id": self.project, "table_schema": d, "table_name": t,
                                     "total_rows": n, "deleted": False})
            return pa.Table.from_pylist(rows, schema=pa.schema(_VIEWS[view]))
        self._dataset(self.project, scope)
        d, base = scope, {"table_catalog": self.project, "table_schema": scope}
        cbase = {"constraint_catalog": self.project, "constraint_schema": scope}
        for t in self.tables(d):
            if view == "TABLES":
                rows.append({**base, "table_name": t, "table_type": "BASE TABLE"})
            elif view == "TABLE_OPTIONS" and (desc := self.descriptions.get((d, t, None))):
                rows.append({**base, "table_name": t, "option_name": "description", "option_type": "STRING",
                             "option_value": json.dumps(desc)})
            elif view == "__TABLES__":
                rows.append({"project_id": self.project, "dataset_id": d, "table_id": t,
                             "row_count": self._sql(f'SELECT count(*) FROM "{d}"."{t}"')[0][0]})
            elif view in ("COLUMNS", "COLUMN_FIELD_PATHS"):
                with self._lock:
                    cur = self._db.cursor()
                    try:
                        rel = cur.sql(f'SELECT * FROM "{d}"."{t}" LIMIT 0')
                        cols = list(zip(rel.columns, rel.types))
                    finally:
                        cur.close()
                for pos, (name, typ) in enumerate(cols, 1):
                    if view == "COLUMNS":
                        rows.append({**base, "table_name": t, "column_name": name, "ordinal_position": pos,
                                     "is_nullable": "YES", "data_type": googlesql(typ), "is_hidden": "NO"})
                    else:
                        rows += [{**base, "table_name": t, "column_name": name, "field_path": path, "data_type": gt,
                                  "description": self.descriptions.get((d, t, path))} for path, gt in field_paths(name, typ)]
                for name in self.hidden.get((d, t), []):
                    extra = {**base, "table_name": t, "column_name": name, "data_type": "TIMESTAMP"}
                    rows.append({**extra, "ordinal_position": len(cols) + 1, "is_nullable": "YES", "is_hidden": "YES"}
                                if view == "COLUMNS" else {**extra, "field_path": name, "description": None})
            elif view in ("TABLE_CONSTRAINTS", "KEY_COLUMN_USAGE", "CONSTRAINT_COLUMN_USAGE"):
                k = self.keys.get((d, t)) or {}
                cons = []
                if k.get("primaryKey"):
                    cons.append((f"{t}.pk$", "PRIMARY KEY", k["primaryKey"]["columns"], (d, t, k["primaryKey"]["columns"])))
                for fk in k.get("foreignKeys") or []:
                    ref = fk["referencedTable"]
                    refs = fk["columnReferences"]
                    cons.append((fk["name"], "FOREIGN KEY", [r["referencingColumn"] for r in refs],
                                 (ref["datasetId"], ref["tableId"], [r["referencedColumn"] for r in refs])))
                for cname, ctype, cols, (rd, rt, rcols) in cons:
                    if view == "TABLE_CONSTRAINTS":
                        rows.append({**cbase, "constraint_name": cname, **base, "table_name": t,
                                     "constraint_type": ctype})
                    elif view == "KEY_COLUMN_USAGE":
                        rows += [{**cbase, "constraint_name": cname, **base, "table_name": t, "column_name": c,
                                  "ordinal_position": i} for i, c in enumerate(cols, 1)]
                    else:  # the referenced table's columns for a foreign key, the key's own for a primary key
                        rows += [{"table_catalog": self.project, "table_schema": rd, "table_name": rt, "column_name": c,
                                  **cbase, "constraint_name": cname} for c in rcols]
        return pa.Table.from_pylist(rows, schema=pa.schema(_VIEWS[view]))

    def _run(self, project: str, body: dict) -> dict:
        sql = body.get("query", "")
        duck, nbytes, relations = self._translate(sql, body)
        limit = body.get("maximumBytesBilled")
        if limit is not None and nbytes > int(limit):
            raise BQError(400, f"Query exceeded limit for bytes billed: {limit}. {nbytes} or higher required.",
                          "bytesBilledLimitExceeded")
        if self.delay_s:
            time.sleep(self.delay_s)
        with self._lock:
            cur = self._db.cursor()
            try:
                for name, rel in relations.items():
                    cur.register(name, rel)
                cur.execute(duck)
                desc = [(d[0], str(d[1])) for d in cur.description]
                rows = cur.fetchall()
            except duckdb.Error as e:
                msg = str(e).splitlines()[0]
                if "does not exist" in msg and "Table" in msg:
                    raise BQError(404, f"Not found: {msg}", "notFound") from None
                raise BQError(400, msg, "invalidQuery") from None
            finally:
                cur.close()
        fields = []
        for name, typ in desc:
            t, mode = bq_type(typ)
            fields.append({"name": name, "type": t, "mode": mode})
        job = uuid.uuid4().hex
        self._jobs[job] = {"fields": fields, "rows": rows, "bytes": nbytes, "sql": sql}
        return {"id": job, "bytes": nbytes}

    def _page(self, project: str, job: str, start: int, size: int) -> dict:
        j = self._jobs[job]
        rows = j["rows"][start:start + size]
        out = {"jobReference": {"projectId": project, "jobId": job, "location": "US"}, "jobComplete": True,
               "schema": {"fields": j["fields"]}, "totalRows": str(len(j["rows"])),
               "rows": [{"f": [{"v": _cell(v, f["type"])} for v, f in zip(r, j["fields"])]} for r in rows],
               "totalBytesProcessed": str(j["bytes"]), "cacheHit": False}
        if start + size < len(j["rows"]):
            out["pageToken"] = str(start + size)
        return out

    def _query(self, project: str, body: dict) -> dict:
        if body.get("dryRun"):
            _, nbytes, _ = self._translate(body.get("query", ""), body)
            return {"jobComplete": True, "totalBytesProcessed": str(nbytes), "schema": {"fields": []}}
        job = self._run(project, body)
        size = min(int(body.get("maxResults") or self.page_rows), self.page_rows)
        return {"kind": "bigquery#queryResponse", **self._page(project, job["id"], 0, size)}

    def _results(self, project: str, job: str, q: dict) -> dict:
        if job not in self._jobs:
            raise BQError(404, f"Not found: Job {project}:{job}", "notFound")
        start = int(q.get("pageToken") or q.get("startIndex") or 0)
        size = min(int(q.get("maxResults") or self.page_rows), self.page_rows)
        return {"kind": "bigquery#getQueryResultsResponse", **self._page(project, job, start, size)}

    def _job_resource(self, project: str, job: str) -> dict:
        j = self._jobs.get(job)
        if j is None:
            raise BQError(404, f"Not found: Job {project}:{job}", "notFound")
        return {"kind": "bigquery#job", "id": f"{project}:US.{job}",
                "jobReference": {"projectId": project, "jobId": job, "location": "US"},
                "configuration": {"query": {"query": j["sql"]}}, "status": {"state": "DONE"},
                "statistics": {"totalBytesProcessed": str(j["bytes"]),
                               "query": {"totalBytesProcessed": str(j["bytes"])}}}

    def _insert(self, project: str, body: dict) -> dict:
        conf = body.get("configuration", {})
        query = conf.get("query", {})
        ref = body.get("jobReference") or {"projectId": project, "jobId": uuid.uuid4().hex}
        if conf.get("dryRun"):
            _, nbytes, _ = self._translate(query.get("query", ""), query)
            return {"kind": "bigquery#job", "jobReference": ref, "configuration": conf,
                    "status": {"state": "DONE"},
                    "statistics": {"totalBytesProcessed": str(nbytes),
                                   "query": {"totalBytesProcessed": str(nbytes), "statementType": "SELECT"}}}
        job = self._run(project, dict(query, maximumBytesBilled=query.get("maximumBytesBilled")))
        self._jobs[ref["jobId"]] = self._jobs.pop(job["id"])
        return self._job_resource(project, ref["jobId"])


class OAuthRefusal(Exception):
    """Google's token endpoint refusing a service-account key (a revoked or rotated key)."""


class BQError(Exception):
    _STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}

    def __init__(self, code: int, message: str, reason: str):
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason
        self.status = self._STATUS.get(code, "UNKNOWN")
