"""Chat models: resolving the user's model or conversation object, and a scripted model for offline runs."""

from reflexion_agents.nodes.models.resolve import chat_model_from_env, resolve_chat_model
from reflexion_agents.nodes.models.scripted import ScriptedChatModel, tool_reply

__all__ = ["ScriptedChatModel", "chat_model_from_env", "resolve_chat_model", "tool_reply"]
