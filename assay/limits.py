"""Every algorithm limit, in one place.

Prompts render these values (``{{ limits.* }}``), so a prompt and the code that
enforces it can never disagree. They are algorithm parameters, not user knobs;
per-project settings (row cap, timeout, budgets per model) live in the project.
"""

from __future__ import annotations

# --- exploration actions (on-demand schema retrieval)
MAX_LOOKUP_TABLES_PER_CALL = 10
MAX_LOOKUPS_PER_RUN = 30
MAX_SEARCHES_PER_RUN = 30
DEFAULT_SEARCH_TOP_K = 10
MAX_SEARCH_TOP_K = 30
SAMPLE_ROWS = 3
MAX_REFORMAT_NUDGES = 3
LOOKUP_TABLE_BUDGET_CHARS = 1500   # a lookup result's budget grows with the tables asked for: columns are never cut
LOOKUP_RESULT_MAX_CHARS = 24_000   # beyond this, later tables are deferred (not marked fetched; ask again)
MAX_FREE_REFUSALS_PER_RUN = 10     # guard refusals that do not cost an exploration step
MAX_SQL_FIXES = 3

# --- bounded conversation: append-only between compactions, so every request extends the last
COMPACT_EVERY_TURNS = 10       # older raw turns are folded into summaries this many at a time
MIN_RAW_TURNS = 2              # the latest turns always stay in full
TOOL_RESULT_BUDGET_CHARS = 4000  # projected size of one tool result
SUMMARY_LINE_CHARS = 700        # summary of an older step: its key figures and the model's own note
SUMMARY_FIGURE_ROWS = 4         # rows of figures a folded step keeps (the signal rows it showed)
SUMMARY_NOTE_CHARS = 300        # the model's own note kept per folded turn

# --- catalog
CATALOG_BUDGET_TOKENS = 30_000
CHARS_PER_TOKEN = 4

# --- compaction (digests)
COMPACT_INLINE_THRESHOLD = 20
TOP_VALUE_CARDINALITY = 20
HEAD_TAIL_ROW_COUNT = 5
# a result over COMPACT_INLINE_THRESHOLD rows, up to CHART_ROWS rows, CHART_COLUMNS columns and CHART_CELLS values in
# all, keeps every row (masked as its digest) beside the digest, for the HTML report's chart only: never in a prompt (a
# monthly series by platform, 36-450 rows of 3-4 columns, is the chart a change is read from, and a per-level
# breakdown 60 rows of 10; their digests keep 12 rows)
CHART_ROWS = 500
CHART_COLUMNS = 16
CHART_CELLS = 4_000
CHART_BYTES = 64_000  # ... and at most this much JSON (long text values)
DIGEST_KEPT_ROWS = 12           # rows kept from a result over COMPACT_INLINE_THRESHOLD (signal rows, see rows.py)
TOP_VALUES = 3
DIGEST_CELL_CHARS = 200

# --- analysis step picker
ANALYSIS_AREA_TOP_K = 24
MAX_INSIGHTS_PER_AREA = 3      # the analysis prompt asks for the most important findings of an area, at most this many
MAX_INSIGHTS_PER_GOAL_AREA = 10 # with a goal (a question): every distinct, supported, material finding, at most this many
ANALYSIS_AREA_MIN_SCORE = 0.30
EXACT_MATCH_FLOOR = 0.55
ANALYSIS_QUERY_RESULTS_BUDGET_TOKENS = 200_000

# --- verification
MAX_LOOKUPS_PER_VERIFICATION = 6
CONFIRM_TOLERANCE = 0.20
DUPLICATE_COSINE = 0.95

# --- ask
ASK_MAX_TURNS = 5
ASK_MAX_TURNS_ENUMERATION = 15

# --- maintenance (the one place for its defaults: the flow, its deployments and prune_runs read these)
ORPHAN_COLLECTION_AGE_S = 24 * 3600
KEEP_RUNS_DAYS = 90.0   # runs that ended longer ago are deleted with everything they wrote ...
KEEP_LAST_RUNS = 3      # ... except each project's latest ones (the memory the next discovery compares with)


def template_vars() -> dict[str, int]:
    """The limits as prompts see them."""
    return {
        "max_lookup_tables_per_call": MAX_LOOKUP_TABLES_PER_CALL,
        "max_lookups_per_run": MAX_LOOKUPS_PER_RUN,
        "max_searches_per_run": MAX_SEARCHES_PER_RUN,
        "default_search_top_k": DEFAULT_SEARCH_TOP_K,
        "max_search_top_k": MAX_SEARCH_TOP_K,
        "sample_rows": SAMPLE_ROWS,
        "max_sql_fixes": MAX_SQL_FIXES,
        "max_lookups_per_verification": MAX_LOOKUPS_PER_VERIFICATION,
    }
