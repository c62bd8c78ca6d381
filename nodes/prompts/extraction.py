"""Prompts of the structured-output reflection agent: extract, then reflect on a validation error."""

from __future__ import annotations

import json

from pydantic import BaseModel

EXTRACTION_SYSTEM_PROMPT = "You extract structured data from text, using only the information the text gives."

EXTRACTION_PROMPT = """Context information is below:
---------------------
{passage}
---------------------

Given the context information and not prior knowledge, create a JSON object from the information in the context.
The JSON object must follow the JSON schema:
{schema}
"""

REFLECTION_PROMPT = """You already created this output previously:
---------------------
{wrong_answer}
---------------------

This caused the error: {error}

Try again, the response must contain only valid JSON code. Do not add any sentence before or after the JSON object.
Do not repeat the schema."""

TOOL_REFLECTION_PROMPT = """Those arguments were rejected: {error}

Call `{tool}` again with arguments that follow its schema."""


def extraction_prompt(passage: str, schema: type[BaseModel]) -> str:
    return EXTRACTION_PROMPT.format(passage=passage, schema=json.dumps(schema.model_json_schema(), indent=1))
