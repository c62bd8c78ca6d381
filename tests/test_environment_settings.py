"""Models and databases named by the environment, as LangChain and langchain-neo4j users set them."""

from __future__ import annotations

import importlib.util

import pytest
from langchain_openai import ChatOpenAI

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb.locations import default_connection_args
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import closed_port, kg_model
from tests.openai_stub import OpenAIStub


@pytest.fixture
def clean_env(monkeypatch):
    for name in (
        "REFLEXION_DATABASE_URL",
        "REFLEXION_GRAPH",
        "NEO4J_URI",
        "NEO4J_USERNAME",
        "NEO4J_PASSWORD",
        "NEO4J_DATABASE",
        "REFLEXION_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_neo4j_variables_name_the_database_as_langchain_neo4j_reads_them(clean_env):
    assert default_connection_args() == {"backend": "falkordb", "graph": "movies"}
    clean_env.setenv("NEO4J_URI", "neo4j+s://db.example.com")
    clean_env.setenv("NEO4J_USERNAME", "reader")
    clean_env.setenv("NEO4J_PASSWORD", "pw")
    clean_env.setenv("NEO4J_DATABASE", "films")
    assert default_connection_args() == {
        "backend": "neo4j",
        "uri": "neo4j+s://db.example.com",
        "user": "reader",
        "password": "pw",
        "database": "films",
    }
    clean_env.setenv("REFLEXION_GRAPH", "other")  # the project's own setting wins over NEO4J_DATABASE
    assert default_connection_args()["database"] == "other"
    clean_env.setenv("REFLEXION_DATABASE_URL", "falkordb://127.0.0.1:6379")  # and its URL over NEO4J_URI
    assert default_connection_args()["backend"] == "falkordb"


def test_a_neo4j_uri_that_is_not_one_is_a_configuration_error(clean_env):
    clean_env.setenv("NEO4J_URI", "http://127.0.0.1:7474")
    with pytest.raises(ConfigurationError, match="NEO4J_URI"):
        default_connection_args()


def test_models_are_named_as_init_chat_model_names_them(clean_env):
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = chat_model_from_env("openai:served-model")
    assert isinstance(model, ChatOpenAI) and model.model_name == "served-model"
    for bare in (
        "local-model",
        "mistral",
        "deepseek-r1",
        "claude-3-haiku",
    ):  # a bare name: the server OPENAI_BASE_URL names
        assert chat_model_from_env(bare).model_name == bare
    clean_env.setenv("REFLEXION_MODEL", "openai:")
    with pytest.raises(ConfigurationError, match="names no model"):
        chat_model_from_env()
    with pytest.raises(ConfigurationError, match="Unsupported provider"):
        chat_model_from_env("no_such_provider:x")


@pytest.mark.skipif(
    importlib.util.find_spec("langchain_anthropic") is not None, reason="the anthropic extra is installed"
)
@pytest.mark.parametrize("name", ["anthropic:claude-sonnet-4-5", "claude-sonnet-4-5"])
def test_a_provider_whose_package_is_missing_names_the_package(clean_env, name):
    clean_env.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match=r"langchain-anthropic.*reflexion-agents\[anthropic\]"):
        chat_model_from_env(name)


@pytest.mark.integration
def test_the_cli_exits_2_naming_the_package_and_3_for_an_unreachable_neo4j(clean_env, capsys):
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("REFLEXION_MODEL", "ollama:llama3.1")
    if importlib.util.find_spec("langchain_ollama") is None:
        assert main(["ask", "Who directed The Matrix?"]) == 2
        err = capsys.readouterr().err
        assert "langchain-ollama" in err and "Traceback" not in err
    clean_env.delenv("REFLEXION_MODEL")
    with OpenAIStub(kg_model) as stub:
        clean_env.setenv("OPENAI_BASE_URL", stub.base_url)
        clean_env.setenv("NEO4J_URI", f"bolt://127.0.0.1:{closed_port()}")
        assert main(["ask", "Who directed The Matrix?"]) == 3
        assert stub.requests == []
    assert "unreachable" in capsys.readouterr().out


def test_ask_about_a_graph_that_does_not_exist_exits_2(clean_env, capsys, falkordb_server, movies_db):
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert main(["--data-dir", str(falkordb_server.data_dir), "ask", "Who?", "--graph", "nosuchgraph"]) == 2
    captured = capsys.readouterr()
    assert "no graph 'nosuchgraph'" in captured.err and "movies" in captured.err and "skipped" not in captured.out


@pytest.mark.parametrize("value", ["maybe", "2", "enable", "tru", "Y E S"])
def test_an_unreadable_approval_setting_is_refused_rather_than_read_as_off(clean_env, value):
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow

    clean_env.setenv("REFLEXION_REQUIRE_APPROVAL", value)
    for build in (
        lambda: KGQueryReflexionAgent(conversation_factory=lambda: None, checkpointer=None),
        lambda: Text2CypherFlow("naive", conversation_factory=lambda: None, checkpointer=None),
    ):
        with pytest.raises(ConfigurationError, match="REFLEXION_REQUIRE_APPROVAL"):
            build()


@pytest.mark.parametrize(("value", "on"), [("1", True), ("ON", True), (" yes ", True), ("off", False), ("", False)])
def test_the_approval_setting_reads_the_usual_words(clean_env, value, on):
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent

    clean_env.setenv("REFLEXION_REQUIRE_APPROVAL", value)
    assert KGQueryReflexionAgent(conversation_factory=lambda: None, checkpointer=None).require_approval is on


def test_a_data_directory_that_is_a_file_is_a_configuration_error(clean_env, tmp_path, capsys):
    afile = tmp_path / "not-a-directory"
    afile.write_text("x")
    clean_env.setenv("REFLEXION_DATA_DIR", str(afile))
    assert main(["graphs"]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
