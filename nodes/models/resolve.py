"""Resolve the model a user handed us, or build one from the environment.

A model is named by one string in LangChain's `init_chat_model` convention,
`provider:model`: `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
`ollama:llama3.1`, `google_genai:gemini-2.5-flash`, ... Each provider's package
is an optional extra (`pip install 'reflexion-agents[anthropic]'`); a missing
one is a configuration error that names it. `OPENAI_BASE_URL` points the OpenAI
client at any OpenAI-compatible server (Ollama, vLLM, llama.cpp).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from reflexion_agents.schemas.constants import (
    DEFAULT_MODEL as DEFAULT_MODEL,  # the CLI's parser shows them without LangChain
)
from reflexion_agents.schemas.constants import MODEL_ENV as MODEL_ENV
from reflexion_agents.schemas.errors import ConfigurationError

CONFIGURE_MODEL_HELP = (
    "No chat model is configured. Set OPENAI_API_KEY to use OpenAI, or set OPENAI_BASE_URL to any "
    "OpenAI-compatible server (Ollama, vLLM, llama.cpp: e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1), "
    f"and optionally {MODEL_ENV} (default {DEFAULT_MODEL!r}); or name another provider's model, "
    "e.g. anthropic:claude-sonnet-4-5 or ollama:llama3.1."
)

#: The extra of this project that installs each provider's package.
PROVIDER_EXTRAS = {"anthropic": "anthropic", "ollama": "ollama", "google_genai": "google"}


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


def split_model_name(name: str) -> tuple[str, str]:
    """(provider, model) from `provider:model`. A bare name is a model of the OpenAI-compatible
    server `OPENAI_BASE_URL` names, if set; else LangChain infers its provider (`claude-...` is
    Anthropic's), and OpenAI's when it cannot."""
    name = name.strip()
    provider, colon, model_name = name.partition(":")
    if colon:
        provider, model_name = provider.strip().lower(), model_name.strip()
        if not provider or not model_name:
            raise ConfigurationError(
                f"the model {name!r} names no {'provider' if not provider else 'model'}: "
                f"write provider:model, e.g. {DEFAULT_MODEL}"
            )
        return provider, model_name
    if not name:
        raise ConfigurationError(f"the model name is empty: write provider:model, e.g. {DEFAULT_MODEL}")
    if os.environ.get("OPENAI_BASE_URL"):  # names on a local server (mistral, deepseek-r1) are its own
        return "openai", name
    from langchain.chat_models.base import _attempt_infer_model_provider

    return _attempt_infer_model_provider(name) or "openai", name


def _require_package(provider: str, name: str) -> None:
    """Name the provider's package when it is missing (LangChain's fallbacks otherwise fail with
    an unrelated AttributeError for some providers)."""
    from langchain.chat_models import base

    module = getattr(base, "_BUILTIN_PROVIDERS", {}).get(provider, ("",))[0].split(".")[0]
    if module and importlib.util.find_spec(module) is None:
        package = module.replace("_", "-")
        extra = PROVIDER_EXTRAS.get(provider)
        hint = f" (or pip install 'reflexion-agents[{extra}]')" if extra else ""
        raise ConfigurationError(f"the model {name!r} needs the {package} package: pip install {package}{hint}")


def _openai_settings() -> dict[str, Any]:
    api_key = os.environ.get("OPENAI_API_KEY")
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not api_key and not base_url:
        raise ConfigurationError(CONFIGURE_MODEL_HELP)
    # local OpenAI-compatible servers ignore the key; the client insists on one
    return {"api_key": api_key or "not-needed", "base_url": base_url, "max_retries": 2, "timeout": 120}


def chat_model_from_env(model: str | None = None, *, temperature: float = 0.0) -> BaseChatModel:
    """Build the chat model named by `model` (or `$REFLEXION_MODEL`, else the default) with
    LangChain's `init_chat_model`; every failure to build it is a `ConfigurationError`."""
    name = model if model is not None else (os.environ.get(MODEL_ENV) or DEFAULT_MODEL)
    provider, model_name = split_model_name(name)
    settings = _openai_settings() if provider == "openai" else {}
    _require_package(provider, name)
    from langchain.chat_models import init_chat_model

    try:
        chat: BaseChatModel = init_chat_model(model_name, model_provider=provider, temperature=temperature, **settings)
        return chat
    except ImportError as e:
        raise ConfigurationError(f"the model {name!r} needs a package that is not installed: {e}") from e
    except ValueError as e:  # an unknown provider, or settings the provider refuses
        raise ConfigurationError(f"the model {name!r} cannot be used: {e}") from e
    except Exception as e:
        raise ConfigurationError(f"the model {name!r} cannot be started: {type(e).__name__}: {e}") from e
