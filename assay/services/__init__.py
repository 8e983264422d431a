"""Services around runs, one module each: the cost estimate, pack generation and acceptance, and
maintenance (sweeping orphaned step collections, pruning old runs)."""
