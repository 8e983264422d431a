"""What the statistical analyst finds on the gaming demo (40 steps, no LLM): the planted level-42 wall, with
its size within 20%; no recommendations, and a note that says why (shared run: ``gaming_statistical``)."""

from __future__ import annotations

import json


def test_the_statistical_analyst_finds_the_planted_wall(gaming_statistical, demo_dir):
    _, result = gaming_statistical
    assert result.analyst == "statistical" and result.run_type.value == "full"
    assert result.recommendations == [] and "Recommendations need an LLM" in result.recommendation_note
    truth = json.loads((demo_dir / "gaming_truth.json").read_text())["patterns"]
    wall = next(t for t in truth if t["id"] == "level_42_wall")
    found = [i for i in result.insights if i.segment == "level=42"]
    assert found and abs(found[0].affected_count - wall["affected_count"]) <= 0.2 * wall["affected_count"]
    assert found[0].validation.status.value == "confirmed"
