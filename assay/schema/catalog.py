"""The Level-0 catalog: one line per table, within a token budget.

When the warehouse does not fit, archive-like tables (``_bkp``, ``_tmp``,
``_stg``, ``_log``, date-suffixed copies) go first, then the smallest tables,
and the catalog says how many were left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..limits import CATALOG_BUDGET_TOKENS, CHARS_PER_TOKEN
from ..models import TableInfo
from ..warehouse.base import clean_comment

_ARCHIVE = re.compile(
    r"(_(bkp|bak|backup|tmp|temp|stg|staging|log|logs|old|copy|archive|arch|hist)\d*$)"
    r"|(_(19|20)\d{2}(_?\d{2}){0,2}$)|(_\d{8}$)|(^(tmp|temp|bkp|bak|stg)_)",
    re.IGNORECASE,
)


_NUMBERED = re.compile(r"_\d+$")


def is_archive_like(name: str) -> bool:
    return bool(_ARCHIVE.search(name))


def family(fqn: str) -> str:
    """The table a name is a copy or a numbered sibling of: 'erp.sls_ord_hdr_bkp3' and
    'erp.sls_ord_hdr_202301' -> 'erp.sls_ord_hdr'; 'erp.hr_cfg_lkp_182' -> 'erp.hr_cfg_lkp'."""
    schema, _, name = fqn.lower().rpartition(".")
    prev = None
    while prev != name:
        prev = name
        stripped = _NUMBERED.sub("", _ARCHIVE.sub("", name))
        name = stripped or name
    return f"{schema}.{name}" if schema else name


def join_hints(tables: list[TableInfo]) -> dict[str, list[str]]:
    """Declared foreign keys, else ``*_id`` columns that name another table's key."""
    by_key: dict[str, list[str]] = {}
    names = {t.name.lower(): t for t in tables}
    for t in tables:
        for c in t.columns:
            n = c.name.lower()
            if n.endswith("_id") and n != "id":
                by_key.setdefault(n, []).append(t.fqn)
    out: dict[str, list[str]] = {}
    for t in tables:
        hints = [f"{col}->{ref}" for col, ref in sorted(t.foreign_keys.items())]
        if not hints:
            for c in t.columns:
                n = c.name.lower()
                if not n.endswith("_id"):
                    continue
                stem = n[:-3]
                for cand in (stem + "s", stem, stem + "es", stem.rstrip("y") + "ies"):
                    other = names.get(cand)
                    if other is not None and other.fqn != t.fqn:
                        hints.append(f"{n}->{other.fqn}")
                        break
        out[t.fqn] = hints[:4]
    return out


CATALOG_NOTE_CHARS = 80  # the start of a table's comment, where the warehouse has one


COLUMN_CAPS = (None, 24, 12, 6, 3)  # the column lists shrink, in these steps, before any table is left out


def catalog_line(t: TableInfo, joins: list[str], max_cols: int | None = None) -> str:
    names = [c.name for c in t.columns]
    shown = names if max_cols is None or len(names) <= max_cols else names[:max_cols]
    cols = ", ".join(shown) + (f", +{len(names) - len(shown)} more" if len(shown) < len(names) else "")
    j = f" joins:{';'.join(joins)}" if joins else ""
    note = f" \"{clean_comment(t.description, CATALOG_NOTE_CHARS)}\"" if t.description else ""
    return f"- {t.fqn} ({len(names)} cols, ~{t.row_count:,} rows){note}: {cols}{j}"


@dataclass
class Catalog:
    text: str
    tokens: int
    budget_tokens: int
    tables_total: int
    tables_left_out: int


def render_catalog(tables: list[TableInfo], budget_tokens: int = CATALOG_BUDGET_TOKENS) -> Catalog:
    joins = join_hints(tables)
    ordered = sorted(tables, key=lambda t: t.fqn)
    budget_chars = budget_tokens * CHARS_PER_TOKEN
    footer_room = 160
    for cap in COLUMN_CAPS:
        lines = {t.fqn: catalog_line(t, joins.get(t.fqn, []), cap) for t in ordered}
        total = sum(len(line) + 1 for line in lines.values())
        if total <= budget_chars - footer_room:
            break
    keep = {t.fqn for t in ordered}
    if total > budget_chars - footer_room:
        # drop order: archive-like first (smallest first among them), then smallest tables
        drop_order = sorted(ordered, key=lambda t: (not is_archive_like(t.name), t.row_count, t.fqn))
        for t in drop_order:
            if total <= budget_chars - footer_room:
                break
            keep.discard(t.fqn)
            total -= len(lines[t.fqn]) + 1
    left_out = len(tables) - len(keep)
    body = "\n".join(lines[t.fqn] for t in ordered if t.fqn in keep)
    if left_out:
        body += (
            f"\n({left_out} of {len(tables)} tables are not listed to fit the catalog budget: archive copies "
            "and the smallest tables first. Use search_tables to find them.)"
        )
    tokens = (len(body) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    return Catalog(text=body, tokens=tokens, budget_tokens=budget_tokens, tables_total=len(tables),
                   tables_left_out=left_out)
