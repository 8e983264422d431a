from .catalog import Catalog, render_catalog
from .discovery import schema_cache_key
from .provider import SchemaProvider

__all__ = ["Catalog", "SchemaProvider", "render_catalog", "schema_cache_key"]
