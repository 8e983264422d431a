"""The unit tier's fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.seeded_vectors import known_vectors

VECTORS = Path(__file__).resolve().parents[1] / "fixtures" / "unit-vectors.npz"


@pytest.fixture(scope="package", autouse=True)
def _unit_vectors():
    """The embedding models' vectors of the texts the unit tier embeds (tests/seeded_vectors.py: known_vectors)."""
    with known_vectors(VECTORS):
        yield
