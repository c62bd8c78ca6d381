"""The agents' and flows' settings: the one source of every default, bound and description.

A constructor checks what it is given with `checked_settings`, which turns pydantic's error into a
`ConfigurationError` naming the option and its bound; its signature takes its defaults from the
default instances below (`max_steps: int = AGENT_DEFAULTS.max_steps`). The run-context schemas
(`schemas.run_context`) copy these fields' bounds and descriptions. The few values the CLI's parser
shows are plain constants of `schemas.constants`, read by the fields here: the parser must answer
`--help` without importing pydantic.

Every field is strict: a bool is not a number, "5" is not an integer, and NaN or infinity is no
number of seconds.

    settings = checked_settings(KGQuerySettings, max_steps=max_steps, row_cap=row_cap)
    settings.max_steps, settings.row_cap
"""

from __future__ import annotations

import types
from functools import lru_cache
from typing import Any, Final, TypeVar, Union, get_args, get_origin

import annotated_types
from pydantic import AllowInfNan, BaseModel, ConfigDict, Field, Strict, ValidationError, create_model
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo

from reflexion_agents.schemas.constants import AGENT_MAX_STEPS, EXTRACTION_MAX_RETRIES, MAX_STEPS_LIMIT, QUERY_TIMEOUT_S
from reflexion_agents.schemas.errors import ConfigurationError

__all__ = [
    "AGENT_DEFAULTS",
    "DATABASE_DEFAULTS",
    "EXTRACTION_DEFAULTS",
    "FLOW_DEFAULTS",
    "KG_QUERY_DEFAULTS",
    "MAX_CACHE_SECONDS",
    "MAX_QUERY_TIMEOUT_S",
    "MAX_ROW_CAP",
    "MAX_STEPS_LIMIT",
    "REACT_DEFAULTS",
    "SECONDS",
    "WIKIPEDIA_DEFAULTS",
    "AgentSettings",
    "DatabaseSettings",
    "ExtractionSettings",
    "FlowSettings",
    "KGQuerySettings",
    "ReActSettings",
    "Settings",
    "WikipediaSettings",
    "checked_settings",
    "checked_value",
    "field_like",
    "plain_number",
    "setting_help",
]

S = TypeVar("S", bound=BaseModel)

MAX_CALLS_LIMIT: Final = 50  # the Wikipedia ReAct agent's model turns per question
MAX_ROW_CAP: Final = 100_000  # rows one query may bring back into the process
MAX_QUERY_TIMEOUT_S: Final = 86_400.0  # a day
MAX_CACHE_SECONDS: Final = 7 * 86_400.0  # a week
SECONDS: Final[JsonDict] = {"unit": "seconds"}  # marks a field counted in seconds (its JSON schema says so too)


class Settings(BaseModel):
    """Base of every settings model: frozen, no unknown option, strict types, finite numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False, validate_default=True)


def _types(info: FieldInfo) -> set[Any]:
    """The types a field's annotation allows (`int | None` -> {int, NoneType})."""
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        return set(get_args(annotation))
    return {annotation}


def field_like(source: type[BaseModel], name: str, **overrides: Any) -> Any:
    """A `Field` with the bounds and description of `source`'s field `name` (and its default, unless
    `overrides` gives another): one field's spec shared by another settings model or a run context.
    It is strict, and refuses NaN and infinity for a number, whatever the new model's config says."""
    info = source.model_fields[name]
    spec: dict[str, Any] = {"strict": True, "description": info.description}
    if float in _types(info):
        spec["allow_inf_nan"] = False
    if isinstance(info.json_schema_extra, dict):
        spec["json_schema_extra"] = dict(info.json_schema_extra)
    for item in info.metadata:
        if isinstance(item, annotated_types.Gt):
            spec["gt"] = item.gt
        elif isinstance(item, annotated_types.Ge):
            spec["ge"] = item.ge
        elif isinstance(item, annotated_types.Lt):
            spec["lt"] = item.lt
        elif isinstance(item, annotated_types.Le):
            spec["le"] = item.le
        elif isinstance(item, Strict):
            spec["strict"] = item.strict
        elif isinstance(item, AllowInfNan):
            spec["allow_inf_nan"] = item.allow_inf_nan
        else:  # a new kind of constraint must be copied here, not silently dropped
            raise TypeError(f"field_like cannot copy {item!r} of {source.__name__}.{name}")
    spec.update(overrides)
    spec.setdefault("default", info.default)
    return Field(**spec)


# -- the settings ------------------------------------------------------------------------------


class AgentSettings(Settings):
    """The Reflexion agent's settings (`graphs.engine.ReflexionAgent`)."""

    max_steps: int = Field(
        default=AGENT_MAX_STEPS,
        ge=1,
        le=MAX_STEPS_LIMIT,
        description="Step limit of a run (tool steps; model turns for ReAct; attempts for extraction)",
    )
    score_threshold: float = Field(
        default=7.0,
        ge=0,
        le=10,
        description="A revision that keeps its query and scores the result above this (0-10) ends the run, when "
        "that result ran without error and passed the schema check",
    )
    max_model_retries: int = Field(
        default=2, ge=0, le=10, description="Calls again of a model whose reply cannot be read, in each model turn"
    )
    max_repeats: int = Field(
        default=3,
        ge=1,
        description="Revisions in a row that run nothing new (an action that already ran) before the run "
        "stops `no_progress`",
    )
    trust_non_empty_result: bool = Field(
        default=True,
        description="A non-empty result the revision keeps ends the run unless its score rejects it (below 5); "
        "false: only one the revision gave no score. Either way the query must have passed the schema check",
    )
    tool_results_in_prompt: int | None = Field(
        default=None,
        ge=1,
        description="Newest tool results the model sees whole, older ones without their rows; None: all whole",
    )


class DatabaseSettings(Settings):
    """How the agents and flows query a graph database."""

    query_timeout: float | None = Field(
        default=QUERY_TIMEOUT_S,
        gt=0,
        le=MAX_QUERY_TIMEOUT_S,
        json_schema_extra=SECONDS,
        description="Seconds a query may run",
    )
    row_cap: int | None = Field(default=100, ge=1, le=MAX_ROW_CAP, description="Rows a query may return")
    map_values: bool = Field(
        default=True,
        description="Replace a literal the graph does not store by the stored value it unmistakably means "
        "(never for IDs or codes); false runs the model's literals as written",
    )
    repair_queries: bool = Field(
        default=True,
        description="Before a query runs, repair what is certain: a label, relationship type or property "
        "written in another case, a relationship the graph has only the other way round; false only reports them",
    )
    require_approval: bool | None = Field(
        default=None,
        description="Pause before each generated query runs (LangGraph interrupt); resume with "
        "{'action': 'approve'}, {'action': 'edit', 'query': ...} or {'action': 'reject'}. "
        "Default: $REFLEXION_REQUIRE_APPROVAL, else false.",
    )


class KGQuerySettings(AgentSettings, DatabaseSettings):
    """The knowledge-graph Reflexion agent's settings (`graphs.kg_query_agent.KGQueryReflexionAgent`)."""

    # A revision judges the newest result: older rows only cost tokens, and the older results keep
    # their row count and columns (benchmarks/prompt_growth.py).
    tool_results_in_prompt: int | None = field_like(AgentSettings, "tool_results_in_prompt", default=1)
    rows_in_message: int = Field(
        default=20,
        ge=1,
        le=MAX_ROW_CAP,
        description="Rows of a query result the model is shown (the count is always shown)",
    )
    allow_writes: bool = Field(default=False, description="Let generated queries change the graph (never a run option)")


class FlowSettings(DatabaseSettings):
    """The text-to-Cypher flows' settings (`graphs.text2cypher_flow.Text2CypherFlow`)."""

    max_retries: int = Field(default=3, ge=0, le=20, description="Corrections after the first query")
    max_llm_calls: int = Field(default=12, ge=1, le=200, description="Model calls a question may cost")
    row_cap: int = field_like(DatabaseSettings, "row_cap")  # a flow always caps its rows
    few_shot_k: int = Field(default=5, ge=0, le=50, description="Stored examples shown to the model with each question")
    schema_chars: int = Field(
        default=6000, ge=200, le=1_000_000, description="Characters of schema in a prompt (a bigger schema is pruned)"
    )
    learn: bool = Field(default=True, description="Store a corrected query the evaluator accepts as a new example")
    cache_seconds: float = Field(
        default=300.0,
        gt=0,
        le=MAX_CACHE_SECONDS,
        json_schema_extra=SECONDS,
        description="Seconds the graph's schema is kept before it is read again",
    )


class ExtractionSettings(Settings):
    """The structured-output agent's settings (`graphs.structured_output_agent`)."""

    max_retries: int = Field(
        default=EXTRACTION_MAX_RETRIES,
        ge=0,
        le=MAX_STEPS_LIMIT - 1,
        description="Attempts after the first whose output does not validate",
    )


class ReActSettings(Settings):
    """The tool-calling ReAct agent's settings (`graphs.react_agent.ReActAgent`)."""

    max_steps: int = field_like(AgentSettings, "max_steps", default=6)


class WikipediaSettings(Settings):
    """The Wikipedia ReAct agent's settings (`graphs.wikipedia_react_agent`)."""

    # 8 is the Gemini ReAct notebook's value, tuned in the ReAct paper; up to 50 for multi-hop
    # questions on weaker models
    max_calls: int = Field(
        default=8, ge=1, le=MAX_CALLS_LIMIT, description="Model turns (tool calls) a question may take"
    )


AGENT_DEFAULTS: Final = AgentSettings()
DATABASE_DEFAULTS: Final = DatabaseSettings()
KG_QUERY_DEFAULTS: Final = KGQuerySettings()
FLOW_DEFAULTS: Final = FlowSettings()
EXTRACTION_DEFAULTS: Final = ExtractionSettings()
REACT_DEFAULTS: Final = ReActSettings()
WIKIPEDIA_DEFAULTS: Final = WikipediaSettings()


# -- checking ----------------------------------------------------------------------------------


def checked_settings(settings: type[S], /, **values: Any) -> S:
    """`settings` built from `values` (an option left out keeps its default); a value out of its
    bound, of the wrong type, or an unknown option is a `ConfigurationError` naming each option and
    its bound: "max_steps must be an integer from 1 to 1000 (default 30), got 0"."""
    try:
        return settings.model_validate(values)
    except ValidationError as e:
        raise ConfigurationError(_refusal(settings, e, values)) from None


def checked_value(
    name: str,
    value: Any,
    *,
    annotation: Any,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
) -> Any:
    """`value` checked as a setting `name` of type `annotation` (`int`, `float | None`, ...) within
    the bounds, with `checked_settings`' message: for a value no settings model holds (an environment
    variable's, say). It is returned as the model holds it (an int given for a float as a float)."""
    model = _one_value_model(annotation, ge, gt, le)
    try:
        return model.model_validate({"value": value}).value  # type: ignore[attr-defined]
    except ValidationError as e:
        raise ConfigurationError(_refusal(model, e, {"value": value}, name=name)) from None


@lru_cache(maxsize=64)
def _one_value_model(annotation: Any, ge: float | None, gt: float | None, le: float | None) -> type[Settings]:
    spec: Any = (annotation, Field(default=..., ge=ge, gt=gt, le=le))
    return create_model("Setting", __base__=Settings, value=spec)


def setting_help(settings: type[BaseModel], name: str) -> str:
    """A field's description with its bound and default, for a CLI option's help: "Rows a query may
    return (an integer from 1 to 100000 or None; default 100)."."""
    info = settings.model_fields[name]
    default = "" if info.is_required() or info.default is None else f"; default {plain_number(info.default)}"
    return f"{(info.description or name).rstrip('.')} ({_bound(info)}{default})."


def _refusal(settings: type[BaseModel], error: ValidationError, values: dict[str, Any], name: str | None = None) -> str:
    """One sentence per refused option: its name (or `name`), its bound, its default, and the value."""
    said: dict[str, str] = {}
    for err in error.errors(include_url=False):
        field = str(err["loc"][0]) if err["loc"] else ""
        if field in said:
            continue
        info = settings.model_fields.get(field)
        if info is None:  # extra="forbid": an option the settings do not have
            known = ", ".join(settings.model_fields)
            said[field] = f"unknown setting {field!r} for {settings.__name__} (it has {known})"
            continue
        default = "" if info.is_required() or info.default is None else f" (default {info.default!r})"
        given = values.get(field, err.get("input"))
        said[field] = f"{name or field} must be {_bound(info)}{default}, got {given!r}"
    return "; ".join(said.values()) or str(error)


def _bound(info: FieldInfo) -> str:
    """What a field accepts, in words: 'an integer from 1 to 1000', 'a number of seconds above 0 and
    at most 86400 or None', 'True or False'."""
    allowed = _types(info)
    nullable = " or None" if type(None) in allowed else ""
    if bool in allowed:
        return "True, False or None" if nullable else "True or False"
    limits: dict[str, Any] = {}
    for item in info.metadata:
        for key in ("gt", "ge", "lt", "le"):
            if hasattr(item, key):
                limits[key] = plain_number(getattr(item, key))
    kind = "an integer" if int in allowed else "a number"
    if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("unit") == "seconds":
        kind += " of seconds"
    low = f"from {limits['ge']}" if "ge" in limits else f"above {limits['gt']}" if "gt" in limits else ""
    high = f"at most {limits['le']}" if "le" in limits else f"below {limits['lt']}" if "lt" in limits else ""
    if "ge" in limits and "le" in limits:
        words = f"from {limits['ge']} to {limits['le']}"
    elif low and high:
        words = f"{low} and {high}"
    elif "ge" in limits:
        words = f"of at least {limits['ge']}"
    else:
        words = low or high
    return " ".join(part for part in (kind, words) if part) + nullable


def plain_number(number: Any) -> Any:
    """A bound or default as a person writes it: 86400.0 as 86400, 7.0 as 7, 0.5 as 0.5."""
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number
