"""`RunModels`: an agent's chat models, its own and those its runs name.

The agent's own model is made once, on first use, from its `conversation_factory` (which may be
biochatter's conversation class, whose `.chat` is the model): a run whose responders need no model
never calls the factory. A run's context may name another model ("provider:model"); each name gets
one client, shared by every run that names it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env, resolve_chat_model


class RunModels:
    """The agent's own chat model, and one client per model a run's context names."""

    def __init__(self, conversation_factory: Callable[[], Any]) -> None:
        self.conversation_factory = conversation_factory
        self._conversation: Any = None
        self._own: BaseChatModel | None = None
        self.named = KeyedCache()

    @property
    def conversation(self) -> Any:
        """What `conversation_factory` returned, made once on first use."""
        if self._conversation is None:
            self._conversation = self.conversation_factory()
        return self._conversation

    def for_run(self, named: str | None) -> BaseChatModel:
        """The model a run's context names (`named`), else the agent's own."""
        if named:
            return self.named.get(named, lambda: chat_model_from_env(named))
        if self._own is None:
            self._own = resolve_chat_model(self.conversation)
        return self._own

    def ready(self, named: str | None) -> bool:
        """Whether that model is made already: making one may read files (a client's certificates) or
        run a user's `conversation_factory`, which an async run does in a worker thread."""
        return self.named.peek(named) is not None if named else self._own is not None
