"""The bottom layer both packages stand on: `orchestrator` and `context_agent` import it, it imports neither.

`files`: writes that survive a crash (atomic replace, appends, links refused, bounded reads);
`tokens`: the token estimator; `model_ids`: the default model ids. Standard library only.
"""
