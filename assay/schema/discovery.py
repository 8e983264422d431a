"""Schema discovery with a store cache keyed by the warehouse configuration."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Callable

from ..models import Project, TableInfo, WarehouseConfig

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger("assay")

_SECRET_WORDS = ("password", "secret", "token", "key", "credential", "private")
# the embedding model reads 256 word pieces: comments are cut so that the columns still fit
COLUMN_NOTE_CHARS = 60
TABLE_NOTE_CHARS = 160


def schema_cache_key(cfg: WarehouseConfig) -> str:
    """A hash of everything that decides what the schema is (never secrets)."""
    settings = {
        k: v for k, v in sorted(cfg.settings.items())
        if not any(w in k.lower() for w in _SECRET_WORDS)
    }
    what = {"kind": cfg.kind, "settings": settings, "schemas": sorted(cfg.schemas)}
    if cfg.tenant_filter is not None:  # the row counts are the tenant's own (``warehouse.tenant_row_counts``)
        what["tenant"] = [cfg.tenant_filter.column, cfg.tenant_filter.value, sorted(cfg.tenant_filter.shared_tables)]
    blob = json.dumps(what, sort_keys=True, default=str)
    return "schema-" + hashlib.sha256(blob.encode()).hexdigest()[:24]


def table_text(t: TableInfo, samples: dict[str, list] | None = None, glossary: dict[str, str] | None = None) -> str:
    """The text embedded for a table: name, columns, types, the glossary's reading, safe values."""
    from .glossary import expand

    cols = ", ".join(f"{c.name} {c.type.lower()}" + (f" ({c.description[:COLUMN_NOTE_CHARS]})" if c.description else "")
                     for c in t.columns[:80])
    parts = [f"table {t.fqn}", f"{t.name.replace('_', ' ')}"]
    if t.description:  # the warehouse's own comment says best what the table holds: early, before truncation
        parts.append(t.description)
    parts.append(f"columns: {cols}")
    meaning = expand(t.name, glossary)
    col_meaning = expand(" ".join(c.name for c in t.columns[:80]), glossary)
    if meaning:
        parts.append(f"meaning: {meaning}")
    if col_meaning:
        parts.append(f"columns mean: {col_meaning}")
    if samples:
        vals = "; ".join(f"{k}: {', '.join(map(str, v[:3]))}" for k, v in list(samples.items())[:8])
        parts.append(f"values: {vals}")
    return "\n".join(parts)


def name_text(t: TableInfo, glossary: dict[str, str] | None = None) -> str:
    """The table's name, the glossary's reading of it and the start of the warehouse's comment on
    it, alone: 'sls quote: sales'.

    A short text that a short query ("staff list", "supplier invoices") matches as a peer; in the
    full text the name's meaning is diluted by dozens of column names.
    """
    from .glossary import expand

    words = t.name.replace("_", " ")
    meaning = expand(t.name, glossary)
    text = f"{words}: {meaning}" if meaning else words
    return f"{text}. {t.description[:TABLE_NOTE_CHARS]}" if t.description else text


def table_hash(t: TableInfo, glossary: dict[str, str] | None = None) -> str:
    """Changes when anything embedded for the table changes (columns, description, glossary)."""
    blob = f"{table_text(t, glossary=glossary)}\n{name_text(t, glossary)}"
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def apply_descriptions(tables: list[TableInfo], notes: dict[str, str]) -> tuple[list[TableInfo], list[str]]:
    """The project's descriptions added to the tables they name (``schema.table``, or a bare name
    that is unambiguous; case-insensitive), after any comment of the warehouse's own.

    Returns the tables (changed ones copied, the input untouched) and the keys that named no table.
    """
    if not notes:
        return tables, []
    by_fqn = {t.fqn.lower(): i for i, t in enumerate(tables)}
    by_name: dict[str, list[int]] = {}
    for i, t in enumerate(tables):
        by_name.setdefault(t.name.lower(), []).append(i)
    out, unknown = list(tables), []
    for key, note in notes.items():
        k = key.strip().lower()
        hit = [by_fqn[k]] if k in by_fqn else by_name.get(k, []) if "." not in k else []
        note = " ".join(str(note).split())
        if len(hit) != 1 or not note:
            unknown.append(key)
            continue
        t = out[hit[0]]
        text = f"{t.description} {note}" if t.description else note
        out[hit[0]] = t.model_copy(update={"description": text})
    return out, unknown


def discover_schema(store: Store, project: Project, warehouse: Any | Callable[[], Any], refresh: bool = False, *,
                    key: str | None = None, warn: bool = True) -> list[TableInfo]:
    """The project's tables, the one way to get them: cached by configuration (``key``, by default the
    hash of the warehouse configuration), always with the project's descriptions added.

    ``warehouse`` is an open warehouse, or a function that opens one: it is called only when the
    cache misses (a phase that reads the cached schema never opens a connection for it). ``warn``:
    log descriptions that name no table.
    """
    from ..config import check_pii_found, check_schema_found, check_tenant_found
    from ..warehouse import tenant_row_counts

    key = key or schema_cache_key(project.warehouse)
    tables = None if refresh else store.get_schema(key)
    if tables is None:
        wh = warehouse if hasattr(warehouse, "list_tables") else warehouse()
        tables = wh.list_tables()
        check_schema_found(project.warehouse, tables)  # a missing schema or an empty warehouse: one line
        tables = tenant_row_counts(wh, project.warehouse, tables)  # not every tenant's totals
        store.put_schema(key, project.id, tables)
    else:  # a cached schema: the declared PII columns and the tenant column are checked against it all the same
        check_pii_found(project.warehouse.pii_columns, tables)
        check_tenant_found(project.warehouse.tenant_filter, tables)
    tables, unknown = apply_descriptions(tables, project.warehouse.descriptions)
    if unknown and warn:
        log.warning("project %s: warehouse.descriptions name no table (or an ambiguous one): %s",
                    project.id, ", ".join(sorted(unknown)))
    return tables
