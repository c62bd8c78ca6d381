"""The settings models (`schemas.settings`) are the one source of every default, bound and
description: a value out of its bound, of the wrong type, NaN or infinity is a ConfigurationError
naming the option and its bound; the run contexts take the same bounds; the old constants are the
models' defaults."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from reflexion_agents.nodes.run_context import checked_context
from reflexion_agents.nodes.settings_checks import whole_number
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.run_context import AgentContext, DatabaseContext, KGQueryContext, Text2CypherContext
from reflexion_agents.schemas.settings import (
    AGENT_DEFAULTS,
    EXTRACTION_DEFAULTS,
    FLOW_DEFAULTS,
    KG_QUERY_DEFAULTS,
    MAX_STEPS_LIMIT,
    REACT_DEFAULTS,
    WIKIPEDIA_DEFAULTS,
    AgentSettings,
    DatabaseSettings,
    ExtractionSettings,
    FlowSettings,
    KGQuerySettings,
    ReActSettings,
    WikipediaSettings,
    checked_settings,
    field_like,
    setting_help,
)

MODELS = [
    AgentSettings,
    DatabaseSettings,
    KGQuerySettings,
    FlowSettings,
    ExtractionSettings,
    ReActSettings,
    WikipediaSettings,
]

# (model, option, lowest allowed, highest allowed): the bounds the task set, written out once here so
# that a model that drifts from them fails
BOUNDS: list[tuple[type[BaseModel], str, Any, Any]] = [
    (AgentSettings, "max_steps", 1, 1000),
    (AgentSettings, "score_threshold", 0, 10),
    (AgentSettings, "max_model_retries", 0, 10),
    (AgentSettings, "max_repeats", 1, None),
    (AgentSettings, "tool_results_in_prompt", 1, None),
    (KGQuerySettings, "max_steps", 1, 1000),
    (KGQuerySettings, "row_cap", 1, 100_000),
    (KGQuerySettings, "rows_in_message", 1, 100_000),
    (KGQuerySettings, "tool_results_in_prompt", 1, None),
    (FlowSettings, "max_retries", 0, 20),
    (FlowSettings, "max_llm_calls", 1, 200),
    (FlowSettings, "row_cap", 1, 100_000),
    (FlowSettings, "few_shot_k", 0, 50),
    (FlowSettings, "schema_chars", 200, 1_000_000),
    (ExtractionSettings, "max_retries", 0, MAX_STEPS_LIMIT - 1),
    (ReActSettings, "max_steps", 1, 1000),
    (WikipediaSettings, "max_calls", 1, 50),
]
SECONDS = [
    (KGQuerySettings, "query_timeout", 86_400),
    (FlowSettings, "query_timeout", 86_400),
    (FlowSettings, "cache_seconds", 7 * 86_400),
]


def refused(model: type[BaseModel], option: str, value: Any) -> str:
    with pytest.raises(ConfigurationError, match=option) as caught:
        checked_settings(model, **{option: value})
    return str(caught.value)


@pytest.mark.parametrize(("model", "option", "low", "high"), BOUNDS)
def test_each_bound_is_refused_just_outside_and_kept_at_its_edge(model, option, low, high):
    step = 1 if isinstance(low, int) and model.model_fields[option].annotation is not float else 0.001
    assert getattr(checked_settings(model, **{option: low}), option) == low
    message = refused(model, option, low - step)
    assert f"from {low}" in message or f"at least {low}" in message
    if high is not None:
        assert getattr(checked_settings(model, **{option: high}), option) == high
        assert f"to {high}" in refused(model, option, high + step)


@pytest.mark.parametrize(("model", "option", "high"), SECONDS)
def test_seconds_are_above_zero_finite_and_bounded(model, option, high):
    assert getattr(checked_settings(model, **{option: high}), option) == high
    assert getattr(checked_settings(model, **{option: 2}), option) == 2.0
    assert isinstance(getattr(checked_settings(model, **{option: 2}), option), float)
    for bad in (0, -1, high + 0.5, math.nan, math.inf, -math.inf, "10", True):
        message = refused(model, option, bad)
        assert f"{option} must be a number of seconds above 0 and at most {high}" in message


def test_the_score_threshold_is_a_finite_number_from_0_to_10():
    assert checked_settings(AgentSettings, score_threshold=10).score_threshold == 10.0
    for bad in (-0.1, 10.5, math.nan, math.inf, True, "7"):
        refused(AgentSettings, "score_threshold", bad)


@pytest.mark.parametrize("model", MODELS)
def test_a_bool_or_text_is_not_a_number(model):
    numbers = [
        name
        for name, info in model.model_fields.items()
        if {int, float} & set(getattr(info.annotation, "__args__", (info.annotation,)))
    ]
    assert numbers
    for name in numbers:
        for bad in (True, False, "5", b"5", 5j, [5]):
            refused(model, name, bad)


@pytest.mark.parametrize(
    ("model", "option"),
    [
        (AgentSettings, "trust_non_empty_result"),
        (KGQuerySettings, "allow_writes"),
        (KGQuerySettings, "require_approval"),
        (FlowSettings, "learn"),
        (FlowSettings, "map_values"),
        (FlowSettings, "require_approval"),
    ],
)
def test_a_switch_is_true_or_false_only(model, option):
    for bad in (1, 0, "yes", "true"):
        assert "True" in refused(model, option, bad)


def test_none_is_refused_where_it_means_nothing_and_kept_where_it_means_no_limit():
    for model, option in [(AgentSettings, "max_steps"), (FlowSettings, "row_cap"), (FlowSettings, "cache_seconds")]:
        refused(model, option, None)
    kept = checked_settings(KGQuerySettings, row_cap=None, query_timeout=None, tool_results_in_prompt=None)
    assert (kept.row_cap, kept.query_timeout, kept.tool_results_in_prompt) == (None, None, None)
    assert checked_settings(FlowSettings, query_timeout=None).query_timeout is None


def test_the_message_names_the_option_its_bound_its_default_and_the_value():
    with pytest.raises(ConfigurationError) as caught:
        checked_settings(AgentSettings, max_steps=0)
    assert str(caught.value) == "max_steps must be an integer from 1 to 1000 (default 30), got 0"
    with pytest.raises(ConfigurationError) as caught:
        checked_settings(KGQuerySettings, row_cap="100")
    assert str(caught.value) == "row_cap must be an integer from 1 to 100000 or None (default 100), got '100'"
    with pytest.raises(ConfigurationError) as caught:
        checked_settings(KGQuerySettings, max_steps=0, rows_in_message=0)
    assert "max_steps must" in str(caught.value) and "rows_in_message must" in str(caught.value)
    with pytest.raises(ConfigurationError, match="unknown setting 'max_step'"):
        checked_settings(AgentSettings, max_step=3)


def test_the_message_keeps_the_wording_of_the_checks_it_replaced():
    with pytest.raises(ConfigurationError, match=r"^max_calls must be an integer from 1 to 50 \(default 8\), got 0$"):
        checked_settings(WikipediaSettings, max_calls=0)
    with pytest.raises(ConfigurationError, match=r"^X must be an integer from 1 to 64, got 'abc'$"):
        whole_number("X", "abc", low=1, high=64)
    with pytest.raises(ConfigurationError, match=r"^n must be an integer of at least 1 or None, got True$"):
        whole_number("n", True, low=1, none=True)
    with pytest.raises(
        ConfigurationError, match=r"^query_timeout must be a number of seconds above 0 and at most 86400"
    ):
        checked_settings(KGQuerySettings, query_timeout=math.nan)
    with pytest.raises(ConfigurationError, match=r"^_odd name must be an integer"):
        whole_number("_odd name", 0, low=1)
    assert whole_number("n", None, low=1, none=True) is None and whole_number("n", 7, low=1) == 7
    timeout = checked_settings(KGQuerySettings, query_timeout=3).query_timeout
    assert timeout == 3.0 and isinstance(timeout, float)
    assert checked_settings(KGQuerySettings, query_timeout=None).query_timeout is None


def test_the_defaults_are_the_ones_the_constructors_had():
    assert AGENT_DEFAULTS.model_dump() == {
        "max_steps": 30,
        "score_threshold": 7.0,
        "max_model_retries": 2,
        "max_repeats": 3,
        "trust_non_empty_result": True,
        "tool_results_in_prompt": None,
    }
    kg = KG_QUERY_DEFAULTS
    assert (kg.tool_results_in_prompt, kg.query_timeout, kg.row_cap, kg.rows_in_message) == (1, 10.0, 100, 20)
    assert (kg.allow_writes, kg.require_approval, kg.max_steps) == (False, None, 30)
    assert (kg.map_values, kg.repair_queries) == (True, True)
    assert FLOW_DEFAULTS.model_dump() == {
        "query_timeout": 10.0,
        "row_cap": 100,
        "require_approval": None,
        "max_retries": 3,
        "max_llm_calls": 12,
        "few_shot_k": 5,
        "schema_chars": 6000,
        "learn": True,
        "cache_seconds": 300.0,
        "map_values": True,
        "repair_queries": True,
    }
    assert (EXTRACTION_DEFAULTS.max_retries, REACT_DEFAULTS.max_steps, WIKIPEDIA_DEFAULTS.max_calls) == (3, 6, 8)


def test_the_old_constants_are_the_models_defaults():
    from reflexion_agents.nodes.graphdb import protocol
    from reflexion_agents.nodes.reflexion import stop_rules
    from reflexion_agents.nodes.text2cypher import schema_pruning
    from reflexion_agents.nodes.tools import cypher

    # the stop rules keep no defaults of their own: every limit comes from the caller's settings
    assert not any(hasattr(stop_rules, name) for name in ("DEFAULT_MAX_STEPS", "DEFAULT_SCORE_THRESHOLD"))
    assert AgentSettings.model_fields["max_steps"].metadata[-1].le == MAX_STEPS_LIMIT
    assert protocol.DEFAULT_QUERY_TIMEOUT_S == KG_QUERY_DEFAULTS.query_timeout == FLOW_DEFAULTS.query_timeout
    assert protocol.DEFAULT_ROW_CAP == KG_QUERY_DEFAULTS.row_cap == FLOW_DEFAULTS.row_cap
    assert KG_QUERY_DEFAULTS.rows_in_message == cypher.DEFAULT_ROWS_IN_MESSAGE
    assert FLOW_DEFAULTS.schema_chars == schema_pruning.DEFAULT_SCHEMA_CHARS


def test_settings_are_frozen_and_the_defaults_are_checked_too():
    with pytest.raises(ValidationError):
        AGENT_DEFAULTS.max_steps = 3  # type: ignore[misc]
    assert checked_settings(FlowSettings) == FLOW_DEFAULTS


# -- the run contexts take their bounds and descriptions from the settings -------------------------

CONTEXT_SOURCES = [
    (AgentContext, "max_steps", AgentSettings),
    (KGQueryContext, "max_steps", AgentSettings),
    (KGQueryContext, "score_threshold", AgentSettings),
    (DatabaseContext, "row_cap", DatabaseSettings),
    (DatabaseContext, "query_timeout", DatabaseSettings),
    (KGQueryContext, "row_cap", KGQuerySettings),
    (KGQueryContext, "query_timeout", KGQuerySettings),
    (Text2CypherContext, "row_cap", FlowSettings),
    (Text2CypherContext, "query_timeout", FlowSettings),
    (Text2CypherContext, "max_llm_calls", FlowSettings),
    (Text2CypherContext, "max_retries", FlowSettings),
]


def numeric_bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema's bounds of a field, whether it is nullable (anyOf) or not."""
    branches = schema.get("anyOf", [schema])
    found = {k: v for branch in branches for k, v in branch.items() if "imum" in k}
    return {k: float(v) for k, v in found.items()}


@pytest.mark.parametrize(("context", "option", "settings"), CONTEXT_SOURCES)
def test_a_run_context_field_has_the_settings_bounds(context, option, settings):
    in_context = numeric_bounds(context.model_json_schema()["properties"][option])
    in_settings = numeric_bounds(settings.model_json_schema()["properties"][option])
    assert in_context == in_settings and in_context
    assert context.model_fields[option].description.startswith(settings.model_fields[option].description)
    assert context().model_dump()[option] is None  # unset: the agent's own setting


def test_the_kg_context_refuses_more_steps_than_the_settings_allow():
    assert KGQueryContext(max_steps=MAX_STEPS_LIMIT).max_steps == MAX_STEPS_LIMIT
    with pytest.raises(ConfigurationError, match="max_steps"):
        checked_context(KGQueryContext, {"max_steps": MAX_STEPS_LIMIT + 1})
    for bad in (0, 5.5, "many"):
        with pytest.raises(ValidationError, match="max_steps"):
            KGQueryContext(max_steps=bad)
    # a run's context is parsed as JSON clients send it (a form sends text), then bounded
    assert KGQueryContext(max_steps="5").max_steps == 5


@pytest.mark.parametrize(
    ("context", "values"),
    [
        (KGQueryContext, {"score_threshold": 10.5}),
        (KGQueryContext, {"score_threshold": math.nan}),
        (KGQueryContext, {"row_cap": 100_001}),
        (KGQueryContext, {"row_cap": "0"}),
        (KGQueryContext, {"query_timeout": math.inf}),
        (KGQueryContext, {"query_timeout": 86_401}),
        (Text2CypherContext, {"max_llm_calls": 201}),
        (Text2CypherContext, {"max_retries": 21}),
        (Text2CypherContext, {"max_retries": -1}),
        (Text2CypherContext, {"query_timeout": "-1"}),
        (Text2CypherContext, {"map_values": "perhaps"}),
        (AgentContext, {"max_steps": 1001}),
    ],
)
def test_a_run_context_refuses_what_the_settings_refuse(context, values):
    (option,) = values
    with pytest.raises(ConfigurationError, match=option):
        checked_context(context, values)


def test_the_run_contexts_take_the_settings_defaults_in_their_descriptions():
    props = Text2CypherContext.model_json_schema()["properties"]
    assert props["row_cap"]["description"] == "Rows a query may return (default 100)."
    assert props["query_timeout"]["description"] == "Seconds a query may run (default 10)."
    assert props["max_llm_calls"]["description"] == "Model calls a question may cost (default 12)."
    assert props["max_retries"]["description"] == "Corrections after the first query (default 3)."
    assert props["map_values"]["description"].endswith("A run may turn it off only.")
    assert "(default 7)" in KGQueryContext.model_json_schema()["properties"]["score_threshold"]["description"]
    assert "ceiling" in AgentContext.model_fields["max_steps"].description
    ok = Text2CypherContext(row_cap=5, query_timeout=2, max_retries=0, max_llm_calls=1, map_values=False)
    assert (ok.row_cap, ok.query_timeout, ok.max_retries, ok.max_llm_calls, ok.map_values) == (5, 2.0, 0, 1, False)


def test_setting_help_says_the_bound_and_default_for_the_cli():
    assert setting_help(FlowSettings, "row_cap") == (
        "Rows a query may return (an integer from 1 to 100000; default 100)."
    )
    assert "a number of seconds above 0 and at most 86400 or None; default 10" in setting_help(
        KGQuerySettings, "query_timeout"
    )


def test_a_constraint_field_like_cannot_copy_is_refused_not_dropped():
    class Named(BaseModel):
        size: int = 3

    class Patterned(BaseModel):
        name: str = Field(default="x", pattern="^x$")

    assert field_like(Named, "size").default == 3
    with pytest.raises(TypeError, match="cannot copy"):
        field_like(Patterned, "name")
