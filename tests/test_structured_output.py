"""The structured-output reflection agent: extract, validate, feed the error back, retry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.extraction import Car, CarCollection
from tests.openai_stub import OpenAIStub

PASSAGE = "I own two cars: a Fiat Panda with 45Hp and a Honda Civic with 330Hp."
CARS = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}, {"brand": "Honda", "model": "Civic", "power": 330}]}
EXPECTED = CarCollection(
    cars=[Car(brand="Fiat", model="Panda", power=45), Car(brand="Honda", model="Civic", power=330)]
)
BAD_CARS = {
    "cars": [{"brand": "Fiat", "model": "Panda", "power": "45Hp"}, {"brand": "Honda", "model": "Civic", "power": 330}]
}


def agent_with(replies, **kwargs) -> tuple[StructuredOutputReflectionAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    return StructuredOutputReflectionAgent(CarCollection, lambda: model, **kwargs), model


def test_a_tool_calling_model_is_corrected_after_one_invalid_attempt():
    agent, model = agent_with([tool_reply("CarCollection", BAD_CARS), tool_reply("CarCollection", CARS)])
    result = agent.extract(PASSAGE)
    assert result.ok and result.value == EXPECTED and result.stop_reason == "validated"
    assert [a.error is None for a in result.attempts] == [False, True]
    assert "cars.0.power: Input should be a valid integer" in result.attempts[0].error
    feedback = model.calls[1][-1]
    assert feedback.type == "tool" and "cars.0.power" in feedback.content  # the error answered the bad call
    assert model.bound_tools[0][0]["function"]["name"] == "CarCollection"
    assert PASSAGE in model.calls[0][1].content and '"power"' in model.calls[0][1].content  # passage + JSON schema


def test_a_plain_text_model_gets_fences_and_prose_stripped_and_its_wrong_output_fed_back():
    truncated = 'Sure! Here it is:\n```json\n{"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]\n```'
    agent, model = agent_with(
        [truncated, f"Here you go:\n```json\n{json.dumps(CARS)}\n```\nAnything else?"], tool_calling=False
    )
    result = agent.extract(PASSAGE)
    assert result.ok and result.value == EXPECTED
    assert result.attempts[0].error.startswith("invalid JSON: Expecting ','")  # not a smaller object found inside it
    feedback = model.calls[1][-1].content
    assert feedback.startswith("You already created this output previously:") and truncated in feedback
    assert "This caused the error: invalid JSON" in feedback
    assert model.bound_tools[0] == []


def test_a_failure_carries_every_attempt_and_its_error():
    agent, model = agent_with([], max_retries=2)
    model.default = "I cannot produce JSON."
    result = agent.extract(PASSAGE)
    assert not result.ok and result.value is None and result.stop_reason == "max_steps"
    assert len(result.attempts) == 3 and len(model.calls) == 3
    assert all(
        a.output == "I cannot produce JSON." and a.error == "the output holds no JSON object" for a in result.attempts
    )
    assert (
        result.error == "no output fitted CarCollection in 3 attempts; the last error: the output holds no JSON object"
    )


def test_max_retries_zero_means_one_attempt_and_defaults_allow_four():
    agent, model = agent_with([tool_reply("CarCollection", BAD_CARS)], max_retries=0)
    assert len(agent.extract(PASSAGE).attempts) == 1 and len(model.calls) == 1
    agent, model = agent_with([tool_reply("CarCollection", BAD_CARS)] * 3 + [tool_reply("CarCollection", CARS)])
    result = agent.extract(PASSAGE)
    assert result.ok and len(result.attempts) == 4


def test_invalid_tool_call_json_is_reported_as_such():
    from langchain_core.messages import AIMessage

    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "CarCollection", "args": '{"cars": [', "id": "c1", "error": None, "type": "invalid_tool_call"}
        ],
    )
    agent, _ = agent_with([broken, tool_reply("CarCollection", CARS)])
    result = agent.extract(PASSAGE)
    assert result.ok and result.attempts[0].error.startswith("the tool call arguments are not valid JSON")


def test_a_failing_model_and_bad_settings_are_clear():
    agent, _ = agent_with([])
    result = agent.extract(PASSAGE)
    assert result.stop_reason == "model_error" and not result.ok and "the model call failed" in result.error
    with pytest.raises(ConfigurationError, match="pydantic model class"):
        StructuredOutputReflectionAgent(dict, lambda: None)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="max_retries"):
        StructuredOutputReflectionAgent(CarCollection, lambda: None, max_retries=-1)
    with pytest.raises(ConfigurationError, match="non-empty"):
        agent.extract("   ")


def test_any_schema_works_and_async_too():
    class Person(BaseModel):
        name: str
        born: int

    model = ScriptedChatModel(replies=[tool_reply("Person", {"name": "Walker Scobell", "born": 2009})])
    agent = StructuredOutputReflectionAgent(Person, lambda: model)
    import asyncio

    result = asyncio.run(agent.aextract("Walker Scobell (born January 5, 2009) is an American actor."))
    assert result.value == Person(name="Walker Scobell", born=2009)


def test_through_chat_openai_with_tool_calls(monkeypatch):
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        first = request["messages"][-1]["role"] == "user"
        return {"tool": "CarCollection", "args": BAD_CARS if first else CARS}

    with OpenAIStub(reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        result = StructuredOutputReflectionAgent(CarCollection).extract(PASSAGE)
    assert result.ok and result.value == EXPECTED and len(result.attempts) == 2
    assert stub.requests[0]["tool_choice"]["function"]["name"] == "CarCollection"
    assert stub.requests[1]["messages"][-1]["role"] == "tool"


def test_aliases_validators_and_strict_dates_survive_into_the_result():
    import datetime

    from pydantic import ConfigDict, Field, field_validator

    class Actor(BaseModel):
        model_config = ConfigDict(strict=True, populate_by_name=True)
        name: str = Field(alias="fullName")
        born: datetime.date
        films: int

        @field_validator("films")
        @classmethod
        def at_least_one(cls, value: int) -> int:
            if value < 1:
                raise ValueError("an actor has at least one film")
            return value

    model = ScriptedChatModel(
        replies=[
            tool_reply("Actor", {"fullName": "Walker Scobell", "born": "2009-01-05", "films": 0}),
            tool_reply("Actor", {"fullName": "Walker Scobell", "born": "2009-01-05", "films": 2}),
        ]
    )
    result = StructuredOutputReflectionAgent(Actor, lambda: model).extract(
        "Walker Scobell, born 2009-01-05, made 2 films."
    )
    assert "films: Value error, an actor has at least one film" in result.attempts[0].error
    assert result.value == Actor(fullName="Walker Scobell", born=datetime.date(2009, 1, 5), films=2)
