from .embedder import Embedder, get_embedder
from .index import VectorIndex, open_index

__all__ = ["Embedder", "VectorIndex", "get_embedder", "open_index"]
