"""Resolve the model a user handed us, or build one from the environment.

A model is named by one string such as `openai:gpt-4o-mini`; `OPENAI_BASE_URL`
points the OpenAI client at any OpenAI-compatible server (Ollama, vLLM, llama.cpp).
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from schemas.errors import ConfigurationError

DEFAULT_MODEL = "openai:gpt-4o-mini"
MODEL_ENV = "REFLEXION_MODEL"

CONFIGURE_MODEL_HELP = (
    "No chat model is configured. Set OPENAI_API_KEY to use OpenAI, or set OPENAI_BASE_URL to any "
    "OpenAI-compatible server (Ollama, vLLM, llama.cpp: e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1), "
    f"and optionally {MODEL_ENV} (default {DEFAULT_MODEL!r})."
)


def resolve_chat_model(conversation: Any) -> BaseChatModel:
    """A LangChain chat model from `conversation`: the model itself, or an object whose `.chat` is one."""
    if isinstance(conversation, BaseChatModel):
        return conversation
    chat = getattr(conversation, "chat", None)
    if isinstance(chat, BaseChatModel):
        return chat
    raise ConfigurationError(
        "conversation_factory must return a LangChain chat model, or an object whose `.chat` "
        f"attribute is one; it returned {type(conversation).__name__}"
    )


def chat_model_from_env(model: str | None = None, *, temperature: float = 0.0) -> BaseChatModel:
    """Build the chat model named by `model` (or `$REFLEXION_MODEL`) from the environment."""
    name = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
    provider, _, model_name = name.partition(":")
    if not model_name:
        provider, model_name = "openai", provider
    if provider != "openai":
        raise ConfigurationError(
            f"unknown model provider {provider!r} in {name!r}: use 'openai:<model>' "
            "(any OpenAI-compatible server through OPENAI_BASE_URL), or pass a LangChain chat model"
        )
    api_key = os.environ.get("OPENAI_API_KEY")
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not api_key and not base_url:
        raise ConfigurationError(CONFIGURE_MODEL_HELP)
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model_name,
        api_key=api_key or "not-needed",  # local OpenAI-compatible servers ignore the key
        base_url=base_url,
        temperature=temperature,
        max_retries=2,
        timeout=120,
    )
