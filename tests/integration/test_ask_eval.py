"""The `assay ask` evaluation (bench/ask_eval.py) replayed: 30 questions on the demo warehouses, half answerable
from a statistical discovery's insights, half by SQL, with the replay LLM playing a real model's recorded tool
choices (tests/fixtures/transcripts/ask-eval-30, recorded through the model bridge on the same scale-0.2
demos). The answers are the recorded model's; what the product does with them (the searches it runs, the
SQL it executes, the insights it cites) is today's code, and every expectation is re-derived from today's
discovery and warehouse before the answers are scored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import ask_eval  # noqa: E402

from assay.llm.replay import TRANSCRIPTS  # noqa: E402
from tests.seeded_vectors import seeded_vectors  # noqa: E402

NAME = "ask-eval-30"


def test_checker_reads_numbers_at_their_written_precision():
    rate = [{"number": 0.559, "rate": True}]
    assert ask_eval.check("furniture: 55.9% of add-to-carts are removed", rate) == []
    assert ask_eval.check("about 56%", rate) == [] and ask_eval.check("0.559", rate) == []
    assert ask_eval.check("about 60%", rate) and ask_eval.check("0.6", rate)  # one significant digit: too rough
    assert ask_eval.check("$739,883 in total", [{"number": 739883.36}]) == []
    assert ask_eval.check("$740k", [{"number": 739883.36}]) == []
    assert ask_eval.check("$750k", [{"number": 739883.36}])
    assert ask_eval.check("3,447 customers", [{"number": 3447}]) == []
    assert ask_eval.check("34,470 customers", [{"number": 3447}])
    assert ask_eval.check("level 42 is the wall", [{"text": ["42"]}]) == []
    assert ask_eval.check("level 421", [{"text": ["42"]}]) == ["42"]
    assert ask_eval.check("the Italian market", [{"text": ["IT", "Italy"]}]) == ["IT/Italy"]
    assert ask_eval.check("it is higher", [{"text": ["IT", "Italy"]}]) == ["IT/Italy"]  # a code only in capitals
    assert ask_eval.check("IT orders average 171.6", [{"text": ["IT", "Italy"]}, {"number": 171.6}]) == []


def test_every_question_has_a_source_and_a_checkable_expectation():
    data = ask_eval.load()
    qs = data["questions"]
    assert len(qs) == 30
    assert sum(q["kind"] == "insights" for q in qs) == 15 and sum(q["kind"] == "sql" for q in qs) == 15
    for q in qs:
        assert q["expect"] and q["warehouse"] in ("ecommerce", "gaming")
        assert ("insight" in q) if q["kind"] == "insights" else ("sql" in q)


@pytest.mark.timeout(1800)
def test_ask_eval_replays_the_real_model_run(tmp_path):
    data = ask_eval.load()
    with seeded_vectors(TRANSCRIPTS / NAME):  # the discoveries' and the questions' vectors (tests/seeded_vectors.py)
        runs = ask_eval.setup(tmp_path, data["scale"])
        assert ask_eval.check_expectations(data["questions"], runs) == []  # expectations hold on today's code
        llm = ask_eval.build(f"replay:{NAME}")
        rows = ask_eval.ask_all(data["questions"], runs, llm)
    llm.assert_consumed()  # every recorded answer asked for, in order
    s = ask_eval.summary(rows)
    wrong = [(r["id"], r["missing"], r["answer"][:200]) for r in rows if not r["correct"]]
    assert s["correct_fraction"] >= 0.9, wrong
    ins = [r for r in rows if r["kind"] == "insights"]
    assert sum("insights" in r["sources"] for r in ins) >= 12  # insight questions answered from the insights
    assert all(r["cited_insights"] for r in ins if r["sources"] == "insights")
