"""Prefect flows: orchestration only, no computation."""
