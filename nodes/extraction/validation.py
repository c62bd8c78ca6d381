"""Read an extraction reply and validate it against the output schema.

Replies come as a tool call of the schema (tool-calling models) or as text with
the JSON somewhere in it (plain-text models: code fences and prose around the
object are stripped). Validation errors are summarised field by field, so the
model can see exactly what to fix.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from reflexion_agents.nodes.models.wire import MAX_ARGUMENT_DEPTH, nesting_depth, not_an_object
from reflexion_agents.nodes.prompts.extraction import REFLECTION_PROMPT, TOOL_REFLECTION_PROMPT
from reflexion_agents.schemas.extraction import RawExtraction
from reflexion_agents.schemas.reflexion import ToolOutcome, ToolRun

_FENCE = re.compile(r"```(?:json)?\s*(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)


def read_extraction_reply(reply: AIMessage) -> tuple[AIMessage, RawExtraction]:
    """(the reply as the memory keeps it, its raw output). Nothing is validated here."""
    text = reply.text.strip()
    meta = {"id": reply.id, "usage_metadata": reply.usage_metadata, "response_metadata": reply.response_metadata}
    if reply.tool_calls:
        call = reply.tool_calls[0]
        if nesting_depth(call.get("args"), MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
            kept = AIMessage(content=text, tool_calls=[{**call, "args": {}}], **meta)
            error = f"the tool call arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
            return kept, RawExtraction(output="", call_id=call["id"], error=error)
        kept = AIMessage(content=text, tool_calls=[call], **meta)
        return kept, RawExtraction(
            output=json.dumps(call.get("args") or {}), data=call.get("args") or {}, call_id=call["id"]
        )
    if reply.invalid_tool_calls:
        bad = reply.invalid_tool_calls[0]
        call_id = bad.get("id") or f"call_{uuid.uuid4().hex[:12]}"
        kept = AIMessage(
            content=text,
            tool_calls=[{"name": bad.get("name") or "unknown", "args": {}, "id": call_id, "type": "tool_call"}],
            **meta,
        )
        raw = str(bad.get("args") or "")
        error = not_an_object(raw) or f"the tool call arguments are not valid JSON: {_json_error(raw)}"
        return kept, RawExtraction(output=raw, call_id=call_id, error=error)
    return AIMessage(content=text, **meta), RawExtraction(output=text)


def _json_error(text: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return str(e)
    except RecursionError:
        return f"it nests deeper than {MAX_ARGUMENT_DEPTH} levels"
    return "no JSON object"


def outer_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the outermost JSON object in `text`, None) or (None, why there is none).

    Fenced blocks are tried first, then the whole text; inside each, the object that
    starts at the first `{`. A truncated object is reported as such, never replaced
    by a smaller object found inside it.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    errors = []
    for candidate in candidates:
        start = candidate.find("{")
        if start < 0:
            continue
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate[start:])
        except json.JSONDecodeError as e:
            errors.append(f"invalid JSON: {e}")
            continue
        except RecursionError:
            errors.append("the JSON nests too deep to read")
            continue
        if isinstance(value, dict) and nesting_depth(value, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
            errors.append(f"the JSON nests deeper than {MAX_ARGUMENT_DEPTH} levels")
            continue
        if isinstance(value, dict):
            return value, None
    return None, errors[0] if errors else "the output holds no JSON object"


def _summary(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in error.errors())


def validate_output(schema: type[BaseModel], raw: RawExtraction) -> tuple[BaseModel | None, str | None]:
    """(instance, None) when the output fits `schema`, else (None, what is wrong)."""
    if raw.error:
        return None, raw.error
    data: Any = raw.data
    if data is None:
        data, error = outer_json_object(raw.output)
        if data is None:
            return None, error
    return validate_data(schema, data)


def validate_data(schema: type[BaseModel], data: dict[str, Any]) -> tuple[BaseModel | None, str | None]:
    """Validate decoded JSON with JSON semantics (strict models accept ISO dates, aliases apply)."""
    try:
        return schema.model_validate_json(json.dumps(data)), None
    except ValidationError as e:
        return None, f"the JSON does not fit the schema {schema.__name__}: {_summary(e)}"


def run_validation(schema: type[BaseModel], raw: RawExtraction) -> ToolRun:
    """The validate step: its outcome, and the feedback the next extraction reads (none once valid)."""
    value, error = validate_output(schema, raw)
    outcome = ToolOutcome(
        step=0,
        action=raw.output,
        executed=True,
        non_empty=value is not None,
        content="Valid." if value is not None else error or "",
        error=error,
        # The JSON as the model gave it, not a dump of the instance: dumps lose aliases and
        # re-run validators on their own output. The result validates this same data again.
        detail={"data": raw.data if raw.data is not None else outer_json_object(raw.output)[0]}
        if value is not None
        else {},
    )
    if raw.call_id:
        text = "Valid." if value is not None else TOOL_REFLECTION_PROMPT.format(error=error, tool=schema.__name__)
        return ToolRun(ToolMessage(content=text, tool_call_id=raw.call_id), outcome)
    if value is not None:
        return ToolRun(None, outcome)
    return ToolRun(HumanMessage(content=REFLECTION_PROMPT.format(wrong_answer=raw.output, error=error)), outcome)
