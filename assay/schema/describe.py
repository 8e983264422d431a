"""LLM-written table descriptions for the schema search (optional).

When the project has an LLM, each table that is not an archive copy gets one English sentence on
what a row holds, plus the words a user would search for it by, written in one batched call per
group of ``GROUP`` tables. They are cached in the store by the table's content hash (name, columns,
types, comment): a rerun asks only about new or changed tables. They feed the search index only;
the catalog and ``lookup_schema`` show the warehouse's own comments. Off without an LLM, or with
``warehouse.settings.llm_descriptions: false``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field

from ..models import TableInfo
from .catalog import is_archive_like

log = logging.getLogger("assay")

GROUP = 25              # tables per call: one call's answer stays well under its output budget
PURPOSE = "describe_tables"
PROMPT_VERSION = 1      # part of the cache key: a new prompt describes every table again
MAX_COLUMNS = 40
MAX_NOTE_CHARS = 400
OUTPUT_CHARS_PER_TABLE = 260  # a sentence and its search words, measured on real answers (for the estimate)

SYSTEM = """You describe the tables of a data warehouse for a search index that analysts query in \
plain words, in any language.

For each table you are given (its name, columns with types, row count and any comment), write:
one English sentence saying what one row of the table holds, then "Search words:" followed by 5 to \
10 words or short phrases an analyst would type to find it (English business terms and synonyms; \
spell out abbreviations, translate non-English names).

Answer with one JSON object and nothing else: each key is a table name exactly as given, each value \
that table's text."""


def enabled(project, llm) -> bool:
    """Descriptions are written when the project has an LLM, unless its warehouse settings say not."""
    flag = project.warehouse.settings.get("llm_descriptions", True)
    return llm is not None and str(flag).lower() not in ("false", "0", "no", "off")


def content_hash(t: TableInfo) -> str:
    """What the description is written from: another column or comment describes the table again."""
    cols = ",".join(f"{c.name}:{c.type}" for c in t.columns[:MAX_COLUMNS])
    blob = f"v{PROMPT_VERSION}\n{t.name}\n{cols}\n{t.description or ''}"
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def describable(tables: list[TableInfo]) -> list[TableInfo]:
    """Archive copies (``_bkp``, ``_tmp``, dated) fold into their live table in the search: not described."""
    return [t for t in tables if not is_archive_like(t.name)]


def table_line(t: TableInfo) -> str:
    cols = ", ".join(f"{c.name} {c.type.lower()}" for c in t.columns[:MAX_COLUMNS])
    more = f", ... ({len(t.columns)} columns)" if len(t.columns) > MAX_COLUMNS else ""
    note = f" -- comment: {t.description[:200]}" if t.description else ""
    return f"{t.fqn} ({int(t.row_count):,} rows): {cols}{more}{note}"


def request_for(group: list[TableInfo]):
    from ..llm.base import LLMRequest, Message, SystemBlock

    body = "Tables:\n" + "\n".join(table_line(t) for t in group)
    return LLMRequest(purpose=PURPOSE, system=[SystemBlock(SYSTEM, cache=True)],
                      messages=[Message(role="user", content=body)],
                      max_tokens=min(8192, 400 + 120 * len(group)), meta={"tables": [t.fqn for t in group]})


def parse_answer(text: str, group: list[TableInfo]) -> dict[str, str]:
    """The answer's text per table of the group (keys matched by full or bare name, case-insensitive)."""
    m = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not m:
        return {}
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError:
        return {}
    if not isinstance(obj, dict):
        return {}
    by_key = {t.fqn.lower(): t.fqn for t in group}
    by_name = {t.name.lower(): t.fqn for t in group}
    out: dict[str, str] = {}
    for k, v in obj.items():
        fqn = by_key.get(str(k).lower()) or by_name.get(str(k).lower().split(".")[-1])
        if fqn and isinstance(v, str) and v.strip():
            out[fqn] = " ".join(v.split())[:MAX_NOTE_CHARS]
    return out


@dataclass
class DescribeStats:
    cached: int = 0
    written: int = 0
    failed: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)


def describe_tables(llm, tables: list[TableInfo], store, *, group: int = GROUP,
                    stats: DescribeStats | None = None) -> dict[str, str]:
    """The description of every describable table, by table key: from the cache, else from the LLM
    (one call per ``group`` uncached tables; a failed call leaves its tables undescribed, to be asked
    again next time, and never fails the caller)."""
    stats = stats if stats is not None else DescribeStats()
    todo_tables = describable(tables)
    hashes = {t.fqn: content_hash(t) for t in todo_tables}
    cached = store.get_table_notes(sorted(set(hashes.values())))
    out = {fqn: cached[h] for fqn, h in hashes.items() if h in cached}
    stats.cached = len(out)
    todo = [t for t in todo_tables if t.fqn not in out]
    for i in range(0, len(todo), group):
        part = todo[i:i + group]
        try:
            resp = llm.complete(request_for(part))
        except Exception as exc:  # the search works without descriptions; next run asks again
            stats.failed += len(part)
            stats.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            log.warning("table descriptions: a call for %d tables failed (%s); they stay undescribed",
                        len(part), type(exc).__name__)
            continue
        stats.calls += 1
        stats.input_tokens += resp.usage.input_tokens
        stats.output_tokens += resp.usage.output_tokens
        got = parse_answer(resp.text, part)
        stats.written += len(got)
        stats.failed += len(part) - len(got)
        store.put_table_notes({hashes[fqn]: text for fqn, text in got.items()}, model=getattr(llm, "model", ""))
        out.update(got)
    return out


def estimate_calls(tables: list[TableInfo], store, *, group: int = GROUP) -> tuple[int, int, int, int]:
    """(tables to describe, calls, input characters, output characters) for the uncached tables."""
    todo_tables = describable(tables)
    cached = store.get_table_notes(sorted({content_hash(t) for t in todo_tables}))
    todo = [t for t in todo_tables if content_hash(t) not in cached]
    calls = (len(todo) + group - 1) // group
    in_chars = sum(len(table_line(t)) + 1 for t in todo) + calls * (len(SYSTEM) + 10)
    return len(todo), calls, in_chars, len(todo) * OUTPUT_CHARS_PER_TABLE


def run_notes(store, project, llm_fn):
    """For ``SchemaIndex.sync_in_background``: the notes of a run's tables, or None when off."""
    def notes(tables: list[TableInfo]):
        llm = llm_fn()
        if not enabled(project, llm):
            return None
        stats = DescribeStats()
        got = describe_tables(llm, tables, store, stats=stats)
        if stats.calls or stats.failed:
            log.info("table descriptions: %d cached, %d written in %d calls, %d failed",
                     stats.cached, stats.written, stats.calls, stats.failed)
        return got
    return notes


def estimate_phase(project, tables: list[TableInfo], store, analyst: str):
    """The description pass as a phase of ``assay estimate`` (no phase when it would not run)."""
    from ..estimate import PhaseEstimate, tokens

    if analyst != "llm" or str(project.warehouse.settings.get("llm_descriptions", True)).lower() in (
            "false", "0", "no", "off"):
        return None
    n, calls, in_chars, out_chars = estimate_calls(tables, store)
    return PhaseEstimate("table descriptions", calls=calls, input_tokens=tokens(in_chars),
                         cached_tokens=tokens(max(calls - 1, 0) * len(SYSTEM)), output_tokens=tokens(out_chars))
