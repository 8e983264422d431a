"""A loopback server that answers the Databricks REST calls the adapter makes, from a DuckDB file.

The real databricks-sdk client talks HTTP to it: ``GET /api/2.0/sql/warehouses/{id}``, Unity
Catalog ``schemas.list`` and ``tables.list`` (paged), and the Statement Execution API
(``POST /api/2.0/sql/statements`` with ``row_limit``/``wait_timeout``, ``GET`` of a statement, result
chunks, ``cancel``), with the bearer token checked. SQL is Databricks SQL, transpiled to DuckDB by
sqlglot; a DuckDB schema is a Unity Catalog schema of catalog ``catalog``. ``delay_s`` makes each
statement finish that much later (RUNNING until then), for the timeout tests.
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
import sqlglot
from sqlglot import exp

_TYPES = {"BIGINT": "LONG", "HUGEINT": "LONG", "INTEGER": "INT", "SMALLINT": "SHORT", "DOUBLE": "DOUBLE", "FLOAT": "FLOAT",
          "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN", "DATE": "DATE", "TIMESTAMP": "TIMESTAMP_NTZ",
          "TIMESTAMP WITH TIME ZONE": "TIMESTAMP"}


def db_type(duck: str) -> tuple[str, str]:
    if duck.endswith("[]"):
        return "ARRAY", f"array<{db_type(duck[:-2])[1]}>"
    if duck.startswith("DECIMAL"):
        return "DECIMAL", duck.lower()
    name = _TYPES.get(duck, "STRING")
    text = {"LONG": "bigint", "INT": "int", "SHORT": "smallint", "TIMESTAMP_NTZ": "timestamp_ntz"}.get(name, name.lower())
    return name, text


def _cell(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, dict)):
        return json.dumps(v, default=str)
    if isinstance(v, dt.datetime):
        return v.isoformat() if v.tzinfo is None else v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, (dt.date, decimal.Decimal)):
        return str(v)
    return str(v)


class FakeDatabricks:
    def __init__(self, duckdb_path: str, *, token: str = "dapi-test", warehouse_id: str = "wh1",
                 catalog: str = "main", chunk_rows: int = 7, tables_page: int = 2):
        self.token, self.warehouse_id, self.catalog = token, warehouse_id, catalog
        self.chunk_rows, self.tables_page = chunk_rows, tables_page
        self.delay_s = 0.0
        self.requests: list[tuple[str, str, dict]] = []
        self.keys: dict[tuple[str, str], list] = {}
        self.comments: dict[tuple[str, str, str | None], str] = {}
        self.stats: dict[tuple[str, str], int] = {}
        self._statements: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._db = duckdb.connect(duckdb_path, read_only=True)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _handle(self, method):
                u = urlparse(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}") if n else {}
                server.requests.append((method, u.path, body))
                q = {k: v[-1] for k, v in parse_qs(u.query).items()}
                try:
                    if self.headers.get("Authorization") != f"Bearer {server.token}":
                        raise DBError(401, "UNAUTHENTICATED", "Invalid access token.")
                    code, out = 200, server.route(method, u.path, q, body)
                except DBError as e:
                    code, out = e.code, {"error_code": e.error_code, "message": e.message}
                except Exception as e:
                    code, out = 500, {"error_code": "INTERNAL_ERROR", "message": f"{type(e).__name__}: {e}"}
                data = json.dumps(out).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *a):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._db.close()

    def _q(self, sql: str, params=None):
        with self._lock:
            cur = self._db.cursor()
            try:
                cur.execute(sql, params or [])
                desc = [(d[0], str(d[1])) for d in cur.description] if cur.description else []
                return desc, cur.fetchall()
            finally:
                cur.close()

    # ------------------------------------------------------------------ routes

    def route(self, method: str, path: str, q: dict, body: dict) -> dict:
        if method == "GET" and (m := re.fullmatch(r"/api/2\.0/sql/warehouses/([^/]+)", path)):
            if m.group(1) != self.warehouse_id:
                raise DBError(404, "RESOURCE_DOES_NOT_EXIST", f"SQL warehouse {m.group(1)} does not exist.")
            return {"id": self.warehouse_id, "name": "test", "state": "RUNNING"}
        if method == "GET" and path == "/api/2.1/unity-catalog/schemas":
            _, rows = self._q("SELECT DISTINCT schema_name FROM information_schema.schemata WHERE catalog_name = "
                              "current_database() ORDER BY 1")
            return {"schemas": [{"name": r[0], "catalog_name": self.catalog} for r in rows]}
        if method == "GET" and path == "/api/2.1/unity-catalog/tables":
            return self._tables(q)
        if method == "POST" and path == "/api/2.0/sql/statements":
            return self._submit(body)
        if method == "GET" and (m := re.fullmatch(r"/api/2\.0/sql/statements/([^/]+)", path)):
            return self._response(m.group(1))
        if method == "GET" and (m := re.fullmatch(r"/api/2\.0/sql/statements/([^/]+)/result/chunks/(\d+)", path)):
            return self._chunk(m.group(1), int(m.group(2)))
        if method == "POST" and (m := re.fullmatch(r"/api/2\.0/sql/statements/([^/]+)/cancel", path)):
            self._statements[m.group(1)]["state"] = "CANCELED"
            return {}
        raise DBError(404, "ENDPOINT_NOT_FOUND", f"No API found for '{method} {path}'")

    def _tables(self, q: dict) -> dict:
        schema = q.get("schema_name")
        if q.get("catalog_name") != self.catalog:
            raise DBError(404, "CATALOG_DOES_NOT_EXIST", f"Catalog '{q.get('catalog_name')}' does not exist.")
        _, names = self._q("SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY 1",
                           [schema])
        if not names:
            raise DBError(404, "SCHEMA_DOES_NOT_EXIST", f"Schema '{self.catalog}.{schema}' does not exist.")
        start = int(q.get("page_token") or 0)
        page = [r[0] for r in names[start:start + self.tables_page]]
        tables = []
        for t in page:
            _, cols = self._q("SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE "
                              "table_schema = ? AND table_name = ? ORDER BY ordinal_position", [schema, t])
            info = {"name": t, "catalog_name": self.catalog, "schema_name": schema,
                    "full_name": f"{self.catalog}.{schema}.{t}", "table_type": "MANAGED",
                    "columns": [{"name": c, "type_name": db_type(ty)[0], "type_text": db_type(ty)[1],
                                 "nullable": nl == "YES", "position": i,
                                 **({"comment": self.comments[(schema, t, c)]} if (schema, t, c) in self.comments
                                    else {})}
                                for i, (c, ty, nl) in enumerate(cols)]}
            if (schema, t, None) in self.comments:
                info["comment"] = self.comments[(schema, t, None)]
            if (schema, t) in self.stats:
                info["properties"] = {"spark.sql.statistics.numRows": str(self.stats[(schema, t)])}
            if (schema, t) in self.keys:
                info["table_constraints"] = self.keys[(schema, t)]
            tables.append(info)
        out = {"tables": tables}
        if start + self.tables_page < len(names):
            out["next_page_token"] = str(start + self.tables_page)
        return out

    def _submit(self, body: dict) -> dict:
        if body.get("warehouse_id") != self.warehouse_id:
            raise DBError(404, "RESOURCE_DOES_NOT_EXIST", "SQL warehouse does not exist.")
        sid = uuid.uuid4().hex
        st = {"state": "RUNNING", "ready_at": time.time() + self.delay_s, "body": body}
        self._statements[sid] = st
        try:
            tree = sqlglot.parse_one(body["statement"], read="databricks")
            for t in tree.find_all(exp.Table):
                if t.catalog and t.catalog != self.catalog:
                    raise DBError(400, "BAD_REQUEST", f"[TABLE_OR_VIEW_NOT_FOUND] {t.sql('databricks')}")
                t.set("catalog", None)
                if not t.db:
                    t.set("db", exp.to_identifier(body.get("schema") or "default"))
            desc, rows = self._q(tree.sql(dialect="duckdb"))
            limit = body.get("row_limit")
            st["truncated"] = bool(limit is not None and len(rows) > int(limit))
            st["rows"] = rows[:int(limit)] if limit is not None else rows
            st["cols"] = [{"name": n, "type_name": db_type(t)[0], "type_text": db_type(t)[1], "position": i}
                          for i, (n, t) in enumerate(desc)]
        except DBError as e:
            st.update(state="FAILED", error=e.message)
        except Exception as e:
            st.update(state="FAILED", error=str(e).splitlines()[0])
        wait = body.get("wait_timeout", "10s")
        deadline = time.time() + int(wait.rstrip("s"))
        while st["state"] == "RUNNING" and time.time() < min(deadline, st["ready_at"]):
            time.sleep(0.05)
        return self._response(sid)

    def _response(self, sid: str) -> dict:
        st = self._statements.get(sid)
        if st is None:
            raise DBError(404, "RESOURCE_DOES_NOT_EXIST", f"Statement {sid} does not exist.")
        if st["state"] == "RUNNING" and time.time() >= st["ready_at"]:
            st["state"] = "SUCCEEDED"
        out = {"statement_id": sid, "status": {"state": st["state"]}}
        if st["state"] == "FAILED":
            out["status"]["error"] = {"error_code": "BAD_REQUEST", "message": st["error"]}
        if st["state"] == "SUCCEEDED":
            n = len(st["rows"])
            chunks = max(1, -(-n // self.chunk_rows))
            out["manifest"] = {"format": "JSON_ARRAY", "schema": {"column_count": len(st["cols"]), "columns": st["cols"]},
                               "total_row_count": n, "total_chunk_count": chunks, "truncated": st["truncated"]}
            out["result"] = self._chunk(sid, 0)
        return out

    def _chunk(self, sid: str, index: int) -> dict:
        st = self._statements[sid]
        rows = st["rows"][index * self.chunk_rows:(index + 1) * self.chunk_rows]
        out = {"chunk_index": index, "row_offset": index * self.chunk_rows, "row_count": len(rows),
               "data_array": [[_cell(v) for v in r] for r in rows]}
        if (index + 1) * self.chunk_rows < len(st["rows"]):
            out["next_chunk_index"] = index + 1
        return out


class DBError(Exception):
    def __init__(self, code: int, error_code: str, message: str):
        super().__init__(message)
        self.code, self.error_code, self.message = code, error_code, message
