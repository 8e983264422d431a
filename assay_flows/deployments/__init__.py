"""Deployment definitions: serve them in one process, or `prefect deploy --all` with work pools."""
