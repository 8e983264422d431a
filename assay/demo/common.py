"""Shared pieces of the demo warehouses: specs, patterns, writing to DuckDB."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pandas as pd

START = pd.Timestamp("2025-11-01")


def months_between(a: pd.Timestamp, b: pd.Timestamp) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


@dataclass
class Pattern:
    id: str
    area: str
    kind: str
    segment: str
    description: str
    count_sql: str
    unit: str
    count: int | None = None
    names: list[str] = field(default_factory=list)  # phrases an insight must contain to name the segment
    entity: str = ""  # what count_sql counts (customers, order items, events, players, ...)
    metric: list[str] = field(default_factory=list)  # words of which an insight must name one to name the metric

    def as_dict(self) -> dict:
        return {
            "id": self.id, "area": self.area, "kind": self.kind, "segment": self.segment,
            "description": self.description, "affected_count": self.count, "unit": self.unit,
            "count_sql": self.count_sql, "names": self.names,
            "entity": self.entity, "metric": self.metric,
        }


@dataclass
class DemoSpec:
    name: str
    pack: str
    category: str
    tables: dict[str, pd.DataFrame]
    patterns: list[Pattern]
    foreign_keys: dict[str, dict[str, str]] = field(default_factory=dict)
    months: int = 12


def write(spec: DemoSpec, out_dir: Path) -> tuple[Path, Path]:
    """Write the warehouse file and its ground truth; returns both paths.

    The file is written under a temporary name and renamed, so a reader never
    sees a half-written warehouse and a re-run replaces it atomically.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    db_path = out_dir / f"{spec.name}.duckdb"
    tmp = out_dir / f".{spec.name}.{os.getpid()}.duckdb"
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        for name, df in spec.tables.items():
            con.register("_df", df)
            con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM _df')
            con.unregister("_df")
        for p in spec.patterns:
            p.count = int(con.execute(p.count_sql).fetchone()[0])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, db_path)
    truth_path = out_dir / f"{spec.name}_truth.json"
    truth = {
        "warehouse": spec.name,
        "pack": spec.pack,
        "category": spec.category,
        "patterns": [p.as_dict() for p in spec.patterns],
    }
    truth_path.write_text(json.dumps(truth, indent=2) + "\n")
    return db_path, truth_path
