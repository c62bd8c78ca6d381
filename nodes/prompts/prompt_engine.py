"""`BioCypherPromptEngine`: builds the kg_prompt for a question from a graph schema.

It keeps the constructor of biochatter's `BioCypherPromptEngine` (`model_name`,
`schema_config_or_info_dict`, `conversation_factory`) and `generate_query_prompt(question)`.
The schema comes from a BioCypher `schema_config.yaml` (path or dict), a `GraphSchema`, or
a live database; building the prompt needs no model call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from reflexion_agents.nodes.prompts.kg_query import build_kg_prompt
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, NodeLabelInfo, PropertyInfo, RelationshipInfo


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[\s_]+", str(name)) if part)


def _properties(entry: dict[str, Any]) -> list[PropertyInfo]:
    props = entry.get("properties") or {}
    return [PropertyInfo(name=str(k), types=[str(v).upper()] if v else []) for k, v in props.items()]


def _names(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [_pascal(v) for v in values if v]


def schema_from_biocypher(config: dict[str, Any] | str | Path) -> GraphSchema:
    """A GraphSchema from a BioCypher schema configuration (or schema info) file or dict.

    Node labels are the entity names in PascalCase, as BioCypher writes them;
    relationship types are `label_as_edge` when given, else the PascalCase name.
    Entries marked `present_in_knowledge_graph: false` are left out.
    """
    if isinstance(config, (str, Path)):
        try:
            config = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ConfigurationError(f"cannot read the BioCypher schema {config}: {e}") from e
    if not isinstance(config, dict):
        raise ConfigurationError("a BioCypher schema must be a mapping of entity names to definitions")
    nodes, relationships = [], []
    for name, entry in config.items():
        if not isinstance(entry, dict) or entry.get("present_in_knowledge_graph") is False:
            continue
        kind = str(entry.get("represented_as", "")).lower()
        if kind == "node":
            nodes.append(NodeLabelInfo(label=_pascal(name), properties=_properties(entry)))
        elif kind == "edge":
            rel_type = entry.get("label_as_edge") or _pascal(name)
            patterns = [
                (s, t) for s in _names(entry.get("source")) or ["?"] for t in _names(entry.get("target")) or ["?"]
            ]
            relationships.append(RelationshipInfo(type=str(rel_type), patterns=patterns, properties=_properties(entry)))
    return GraphSchema(nodes=nodes, relationships=relationships)


class BioCypherPromptEngine:
    """Build kg_prompts from a schema configuration, a `GraphSchema`, or a live database."""

    def __init__(
        self,
        model_name: str | None = None,
        schema_config_or_info_dict: dict[str, Any] | str | Path | GraphSchema | None = None,
        conversation_factory: Any = None,
        *,
        database: Any = None,
        dialect: Dialect | None = None,
    ) -> None:
        if schema_config_or_info_dict is None and database is None:
            raise ConfigurationError("give a schema (schema_config_or_info_dict) or a database to read it from")
        self.model_name = model_name
        self.conversation_factory = conversation_factory  # biochatter's signature has it; no model call is needed
        self.database = database
        self.dialect = dialect or getattr(database, "dialect", None)
        self._source = schema_config_or_info_dict
        self._schema: GraphSchema | None = None

    @property
    def schema(self) -> GraphSchema:
        """The schema, read once (a live database is sampled on first use)."""
        if self._schema is None:
            if isinstance(self._source, GraphSchema):
                self._schema = self._source
            elif self._source is not None:
                self._schema = schema_from_biocypher(self._source)
            else:
                self._schema = self.database.schema()
        return self._schema

    def generate_query_prompt(self, question: str, query_language: str = "Cypher") -> str:
        """The kg_prompt for `question`: schema, what the dialect lacks, the rules, then the question."""
        if not isinstance(question, str) or not question.strip():
            raise ConfigurationError("the question must be a non-empty string")
        return build_kg_prompt(self.schema, question.strip(), self.dialect)
