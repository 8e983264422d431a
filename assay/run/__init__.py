"""The discovery run, phase by phase, without Prefect.

- ``session``: everything one phase needs, rebuilt lazily from the run id;
- ``phases``: init, context, schema, exploration, one area, recommendations, save;
- ``writer``: where the exploration's steps go (written once, indexed in batches);
- ``lifecycle``: create / rerun / fail a run, or run it whole inline;
- ``analyst``: which analyst a run uses, and why.

Prefect tasks (``assay_flows/tasks/``) wrap the phases; the CLI and tests can call them directly.
"""
