"""What the statistical analyst finds on the gaming demo (40 steps, no LLM): the planted level-42 wall, with
its size within 20%; no recommendations, and a note that says why (shared run: ``gaming_statistical``)."""

from __future__ import annotations

import json

import pytest


def test_the_statistical_analyst_finds_the_planted_wall(gaming_statistical, demo_dir):
    _, result = gaming_statistical
    assert result.analyst == "statistical" and result.run_type.value == "full"
    assert result.recommendations == [] and "Recommendations need an LLM" in result.recommendation_note
    truth = json.loads((demo_dir / "gaming_truth.json").read_text())["patterns"]
    wall = next(t for t in truth if t["id"] == "level_42_wall")
    found = [i for i in result.insights if i.segment == "level=42"]
    assert found and abs(found[0].affected_count - wall["affected_count"]) <= 0.2 * wall["affected_count"]
    assert found[0].validation.status.value == "confirmed"
    # its rate is a claim with generated SQL, re-run in the warehouse, as well as its count
    rate = next(c for c in found[0].claims if c.metric.value == "rate")
    assert rate.segment_sql == '"level" = 42' and rate.verdict.value == "confirmed"
    assert rate.value < 0.1 < rate.baseline_value and rate.verified_value == pytest.approx(rate.value)
    count = next(c for c in found[0].claims if c.measure == "affected count")
    assert "42" in count.segment_sql and count.period_sql == ""  # the count's own population


def test_the_statistical_analysts_comparisons_are_refuted(gaming_statistical):
    """Its claims are SQL over a probe's result; the refuter re-runs the probe within each level of other
    columns (and by halves of the period), so they carry a refutation like an LLM's claims."""
    _, result = gaming_statistical
    comparisons = [c for i in result.insights for c in i.claims
                   if c.metric.value in ("rate", "average", "change") and c.baseline_value is not None]
    refuted = [c for c in comparisons if c.refutation]
    assert len(refuted) >= max(1, len(comparisons) // 2), [(c.segment, c.refutation) for c in comparisons]
    assert all(c.refutation == "survives refutation" or c.refutation.startswith("but ") for c in refuted)
    wall = next(c for i in result.insights if i.segment == "level=42" for c in i.claims if c.metric.value == "rate")
    assert wall.refutation == "survives refutation"  # the planted wall is no mix
