"""Every token budget and store cap of the Context Agent, in one place.

All counts are `shared_base.tokens` estimates. The injection limit is hard; the section
figures are the shares the spec names ("about"), used to pick items before the final check.
"""

from __future__ import annotations

# The rendered `## Project Context` section, headings included, never exceeds this.
INJECTION_BUDGET = 2000

# Shares of the injection. Budget the summary leaves unused goes to constraints, so that
# "all active constraints" holds whenever they fit the whole section.
SUMMARY_BUDGET = 1500
DECISIONS_BUDGET = 150
FAILURES_BUDGET = 100
CONSTRAINTS_BUDGET = 250
# Part of the summary share kept for report summaries recorded since the last summarization,
# so the next feature already sees what the previous one did.
RECENT_NOTES_BUDGET = 300

MAX_DECISIONS_SHOWN = 3
MAX_FAILURES_SHOWN = 2

# Store caps (spec section 6).
MAX_STORED_DECISIONS = 20
MAX_STORED_FAILURES = 10
# running-summary.json, measured on its content as compact JSON; 100 below the spec's 2000
# so the indented file on disk stays under 2000 as well.
SUMMARY_STORE_CAP = 1900
MAX_RECENT_NOTES = 8
# Retired constraints are kept for the record; only the latest few.
MAX_RETIRED_CONSTRAINTS = 50
# Active constraints: a hard limit, so that loading, ranking and deduplicating them stays
# cheap and the store small however long the run. About all that could ever be shown in the
# 2000-token section. From CONSOLIDATE_CONSTRAINTS_AT on, the summarizer is asked to merge
# and retire; past the limit, `recording.enforce_constraint_limit` retires the surplus.
MAX_ACTIVE_CONSTRAINTS = 100
CONSOLIDATE_CONSTRAINTS_AT = 80

# Per-item bounds applied when an item is recorded: a store's size stays bounded, yet a
# sentence a report or a failure gives is kept whole (cut at 40 tokens, "error messages are
# exactly ... and" lost the very message a later change broke). Items are always shown whole:
# decisions and failures are taken whole (the top 3 and 2), the summary gives way first, and
# when the section is still over budget whole items go, least relevant first.
DECISION_TOKENS = 200
CONSTRAINT_TOKENS = 200
FAILURE_DESCRIPTION_TOKENS = 80
PREVENTION_TOKENS = 80
RECENT_NOTE_TOKENS = 150

# What the summarizer is asked for: below SUMMARY_BUDGET so a slightly long answer still fits.
SUMMARY_TARGET_WORDS = 800
