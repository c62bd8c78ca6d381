"""Prompt text, and the prompt engine that builds the knowledge-graph prompt from a schema."""

from reflexion_agents.nodes.prompts.prompt_engine import BioCypherPromptEngine, schema_from_biocypher

__all__ = ["BioCypherPromptEngine", "schema_from_biocypher"]
