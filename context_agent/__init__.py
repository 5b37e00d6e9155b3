"""The Context Agent: compressed project memory injected into every feature's prompt under a
hard token budget (product spec, section 6).

    agent = ContextAgent(project_root, features=spec.features, model_call=call)
    section = render_project_context(agent.get_injection("todo-api"))
"""

from .agent import DEFAULT_SUMMARIZER_MODEL, ContextAgent
from .injection import ContextInjection
from .interfaces import FeatureLike, ModelCall
from .render import render_project_context
from .summarizer import SummarizerAnswer, answer_schema
from .tokens import estimate_json_tokens, estimate_tokens

__all__ = [
    "DEFAULT_SUMMARIZER_MODEL",
    "ContextAgent",
    "ContextInjection",
    "FeatureLike",
    "ModelCall",
    "SummarizerAnswer",
    "answer_schema",
    "estimate_json_tokens",
    "estimate_tokens",
    "render_project_context",
]
