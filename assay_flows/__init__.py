"""The Prefect layer of assay: ``deployments`` -> ``flows`` -> ``tasks`` -> the core (``assay``, which never
imports Prefect). Flows orchestrate and tasks wrap the core's phases; neither computes."""
