"""The table-description pass replayed from a real model's answers (tests/fixtures/transcripts/schema-describe-150,
recorded through the model bridge by bench/schema_describe.py --tables 150 --group 25; figures in bench/README.md,
"Schema search with LLM table descriptions from a real model"). The same 150 tables give the same 5 requests of up
to 25 describable tables; every answer parses into a description, and a second pass is answered by the cache."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import schema_describe  # noqa: E402

from assay.llm import replay  # noqa: E402
from assay.models import LLMConfig  # noqa: E402
from assay.schema.describe import DescribeStats, describe_tables  # noqa: E402
from assay.settings import load_settings  # noqa: E402
from assay.store import open_store  # noqa: E402

NAME = "schema-describe-150"


def test_the_recorded_description_pass_replays_and_is_cached():
    replay.reset(NAME)
    llm = replay.replay_llm(LLMConfig(provider="replay", model=NAME))
    store = open_store(load_settings())
    store.db.table_notes.delete_many({})
    tables = schema_describe.subset(150)
    stats = DescribeStats()
    notes = describe_tables(llm, tables, store, group=25, stats=stats)
    llm.assert_consumed()  # the product asked exactly what the model was asked, in order
    assert (stats.calls, stats.written, stats.failed) == (5, 101, 0)
    assert all(len(text) > 20 for text in notes.values())
    again = DescribeStats()
    assert describe_tables(llm, tables, store, group=25, stats=again) == notes
    assert (again.calls, again.cached) == (0, 101)
