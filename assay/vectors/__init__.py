"""Embeddings and vector indexes. Imported lazily: the embedder needs no Qdrant client (whose import
alone costs a second or more), and the index needs no torch."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .embedder import Embedder, get_embedder
    from .index import VectorIndex, open_index

__all__ = ["Embedder", "VectorIndex", "get_embedder", "open_index"]


def __getattr__(name: str):
    if name in ("Embedder", "get_embedder"):
        from . import embedder

        return getattr(embedder, name)
    if name in ("VectorIndex", "open_index"):
        from . import index

        return getattr(index, name)
    raise AttributeError(name)
