"""biochatter's documented usage of `KGQueryReflexionAgent` and `BioCypherPromptEngine`, as its
reflexion-agent docs write it, through the real ChatOpenAI client and a local stub."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.graphdb.demo_data import MOVIES_SCHEMA_CONFIG
from reflexion_agents.nodes.prompts import BioCypherPromptEngine, schema_from_biocypher
from tests.helpers import TOM_HANKS_QUERY, kg_model
from tests.openai_stub import OpenAIStub


def test_biocypher_schema_config_becomes_a_kg_prompt():
    schema = schema_from_biocypher(MOVIES_SCHEMA_CONFIG)
    assert [n.label for n in schema.nodes] == ["Person", "Movie"]
    engine = BioCypherPromptEngine(model_name="gpt-3.5-turbo", schema_config_or_info_dict=str(MOVIES_SCHEMA_CONFIG))
    prompt = engine.generate_query_prompt("Which movies did Tom Hanks act in?")
    assert "(:Person)-[:ACTED_IN]->(:Movie)" in prompt and "released: INT" in prompt
    assert prompt.endswith("Question: Which movies did Tom Hanks act in?")


def test_the_seed_usage_works_as_written(falkordb_server, movies_db):
    with OpenAIStub(kg_model) as stub:

        def create_conversation():
            return ChatOpenAI(model="gpt-3.5-turbo", api_key="sk-test", base_url=stub.base_url, max_retries=0)

        connection_args = {"backend": "falkordb", "host": falkordb_server.host, "port": str(falkordb_server.port)}
        agent = KGQueryReflexionAgent(connection_args=connection_args, conversation_factory=create_conversation)
        prompt_engine = BioCypherPromptEngine(
            model_name="gpt-3.5-turbo",
            schema_config_or_info_dict=str(MOVIES_SCHEMA_CONFIG),
            conversation_factory=create_conversation,
        )
        question = "Which movies did Tom Hanks act in?"
        kg_prompt = prompt_engine.generate_query_prompt(question)
        cypher_query = agent.execute(question, kg_prompt)

    assert cypher_query.answer == TOM_HANKS_QUERY and len(cypher_query.tool_result) == 12
    assert cypher_query.stop_reason == "score_threshold" and cypher_query.steps == 2 and cypher_query.score == 9.0
    assert cypher_query.usage.llm_calls == 3 and cypher_query.usage.input_tokens > 0
    first = stub.requests[0]
    assert first["tool_choice"]["function"]["name"] == "GenerateQuery"
    assert kg_prompt in first["messages"][0]["content"]
    # The revise request carries the tool result of the executed query back to the model.
    assert any(m["role"] == "tool" and "Result: no rows" in m["content"] for m in stub.requests[1]["messages"])
