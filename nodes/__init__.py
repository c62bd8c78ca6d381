"""Behaviour: node functions and routers, prompts, tools, models and graph-database adapters."""
