"""assay: an LLM analyst for your data warehouse."""

__version__ = "0.1.0"
