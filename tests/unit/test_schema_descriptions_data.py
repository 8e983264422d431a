"""The committed real-model descriptions of the 2,000-table ERP warehouse (bench/data/erp_descriptions_2000.json).

bench/schema_describe.py --tables 2000 --notes-in bench/data/erp_descriptions_2000.json --no-llm re-measures
the described recall without a model: that holds only while the file's keys (assay.schema.describe.content_hash)
still name the warehouse's describable tables. A change to the hash, the prompt version or the generator
shows here, not as a silently lower recall."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_committed_descriptions_cover_every_describable_table():
    sys.path.insert(0, str(ROOT / "bench"))
    from schema_describe import subset

    from assay.schema.describe import content_hash, describable

    notes = json.loads((ROOT / "bench" / "data" / "erp_descriptions_2000.json").read_text())
    tables = describable(subset(2000))
    hashes = {content_hash(t) for t in tables}
    assert len(tables) == 874
    assert hashes == set(notes)
    assert all(isinstance(v, str) and "Search words:" in v for v in notes.values())
