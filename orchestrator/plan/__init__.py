"""`orchestrate plan`: from a product description to a spec whose checks mean something.

Owns:
    schema        the two answers the model gives, as forced tools whose `input_schema` is
                  derived from the spec's own models (`orchestrator.spec.feature_spec`)
    structured    one forced tool-use call through the `ModelClient` (caps, retries, cost)
    prompts       every text the planner and the check writer are sent
    chunks        long descriptions split in chunks; planned features merged, de-duplicated,
                  put in dependency order
    planner       phase 1: chunk by chunk, answers validated like any spec and repaired by
                  feeding the problems back, a bounded number of times
    runners       whether the project (or the description) has a test runner
    red           run a check on the current tree and say whether it fails for the right reason
    check_files   the check files written into the project: confined, never replacing its
                  files, removed again when the plan stops early
    check_writer  phase 2: each feature's check files written, run red, rewritten when vacuous
                  or broken, flagged when they stay so
    result        the spec with its checks (`verify`, `protected`, `red`) and its written JSON

May import `orchestrator.{llm,spec,safety,store}`, `orchestrator.run.checks.running.check_command` (the one way a
check is run) and `orchestrator.config`; never `orchestrator.commands` or `orchestrator.cli.commands`.
"""
