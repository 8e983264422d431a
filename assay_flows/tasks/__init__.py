"""Thin Prefect tasks around the core phases (retries, caching, artifacts)."""

from assay import secrets


def _prefect_secret(name: str) -> str:
    from prefect.blocks.system import Secret

    return Secret.load(name).get()


secrets.register_block_resolver(_prefect_secret)
