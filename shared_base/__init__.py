"""The bottom layer both packages stand on: `orchestrator` and `context_agent` import it, it imports neither.

`files`: writes that survive a crash (atomic replace, appends, links refused, bounded reads);
`tokens`: the token estimator; `model_ids`: the default model ids; `check_result`: the one model of
a check's outcome; `json_values`: the name of free-form JSON. The standard library and pydantic only.
"""
