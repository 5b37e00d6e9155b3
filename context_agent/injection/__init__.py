"""One feature's `## Project Context`: chosen from the stores under the hard token budget.

    injection_choice   what goes in: ranked, fitted to the budget's shares (`build_injection`)
    context_injection  `ContextInjection`, the chosen items
    render             the section as the prompt shows it
    relevance          how relevant a stored item is to the feature at hand
"""
