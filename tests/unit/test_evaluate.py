"""Scoring against planted ground truth, on hand-made examples."""

from __future__ import annotations

from assay.evaluate import matches, score_demo
from assay.models import Insight, Validation, ValidationStatus

PATTERN = {"id": "p1", "segment": "android", "names": ["android"], "affected_count": 1000}


def ins(name, count, sev="high", status=ValidationStatus.confirmed):
    return Insight(id="a-1", area="a", name=name, description="desc", affected_count=count, severity=sev,
                   validation=Validation(status=status))


def test_match_needs_segment_and_count_within_20_percent():
    assert matches(ins("platform = android: conversion fell", 1199), PATTERN)
    assert matches(ins("platform = Android: conversion fell", 800), PATTERN)
    assert not matches(ins("platform = android: conversion fell", 1201), PATTERN)
    assert not matches(ins("platform = ios: conversion fell", 1000), PATTERN)
    assert not matches(ins("platform = android", None), PATTERN)


def test_score():
    other = {"id": "p2", "segment": "furniture", "names": ["furniture"], "affected_count": 50}
    insights = [ins("android drop", 1000), ins("furniture removed", 10, sev="critical",
                                               status=ValidationStatus.rejected), ins("noise", 5)]
    s = score_demo(insights, [PATTERN, other])
    assert s.found == ["p1"] and s.missed == ["p2"]
    assert s.recall == 0.5 and abs(s.precision - 1 / 3) < 1e-9 and s.critical_wrong == 1
