"""The text-protocol ReAct agent: prompt and stop sequences, actions, stop rules, sources, multi-turn."""

from __future__ import annotations

import pytest
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.wikipedia_react_agent import WikipediaReActAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.nodes.prompts.react_text import CORRECTIVE_MESSAGE, REACT_PROMPT, STOP_SEQUENCES
from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.schemas.errors import ConfigurationError
from tests.openai_stub import OpenAIStub

PERCY = (
    "What is the total of ages of the main trio from the new Percy Jackson and the Olympians TV series in real life?"
)


def make_agent(replies, **kwargs) -> tuple[WikipediaReActAgent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    return WikipediaReActAgent(lambda: model, wikipedia=WikipediaTools.sample(), **kwargs), model


def test_the_notebook_run_searches_sums_and_finishes_with_its_sources_in_order():
    agent, model = make_agent(
        [
            "Thought 1\nI need to search the series.\n\n"
            "Action 1\n<search>Percy Jackson and the Olympians TV series</search>",
            "Thought 2\nSearch the exact title instead.\n\n"
            "Action 2\n<search>Percy Jackson and the Olympians (TV series)</search>",
            "Thought 3\nThe trio is Walker Scobell, Leah Sava Jeffries and Aryan Simhadri.\n\n"
            "Action 3\n<search>Walker Scobell</search>",
            "Thought 4\nBorn 2009.\n\nAction 4\n<search>Leah Sava Jeffries</search>",
            "Thought 5\nBorn 2009.\n\nAction 5\n<search>Aryan Simhadri</search>",
            "Thought 6\n14 + 13 + 17 = 44.\n\nAction 6\n<finish>44</finish>",
        ]
    )
    result = agent(PERCY)
    assert (result.answer, result.finished, result.stop_reason) == ("44", True, "finished")
    assert result.steps[0].observation.startswith(
        "Could not find [Percy Jackson and the Olympians TV series]. Similar: ["
    )
    assert result.sources == [
        "https://en.wikipedia.org/wiki/Percy_Jackson_and_the_Olympians_(TV_series)",
        "https://en.wikipedia.org/wiki/Walker_Scobell",
        "https://en.wikipedia.org/wiki/Leah_Jeffries",
        "https://en.wikipedia.org/wiki/Aryan_Simhadri",
    ]
    assert [s.tool for s in result.steps] == ["search"] * 5 + ["finish"]
    assert result.steps[2].thought == "The trio is Walker Scobell, Leah Sava Jeffries and Aryan Simhadri."
    assert result.usage.llm_calls == 6
    # every call had the few-shot prompt as system message and stopped on the closing tags
    assert all(isinstance(call[0], SystemMessage) and call[0].content == REACT_PROMPT for call in model.calls)
    assert model.stops == [STOP_SEQUENCES] * 6
    assert model.calls[1][-1].content.startswith("Observation 1\nCould not find")


def test_only_the_first_action_runs_and_invented_observations_are_dropped():
    agent, model = make_agent(
        [
            "Thought 1\nSearch it.\nAction 1\n<search >Milhouse",  # a malformed tag: no action
            "Thought 1\nSearch it.\nAction 1\n<search>Milhouse\n"
            "Observation 1\nMilhouse is named after Bart.\n<finish>Bart",
            "Action 2\n<finish>Richard Nixon</finish>",
        ],
        max_calls=3,
    )
    result = agent("Who was Milhouse named after?")
    assert result.answer == "Richard Nixon"
    corrective = result.steps[0]
    assert corrective.tool is None and corrective.observation.startswith(CORRECTIVE_MESSAGE)
    assert result.steps[1].args == {"argument": "Milhouse"}  # not the invented finish after it
    remembered = model.calls[2][4].content  # the second reply, as the memory kept it
    assert remembered.endswith("<search>Milhouse</search>") and "Bart" not in remembered


def test_max_calls_ends_after_exactly_that_many_model_calls_with_a_typed_stop():
    agent, model = make_agent([f"Action {i}\n<search>Colorado orogeny" for i in range(1, 9)], max_calls=3)
    result = agent("What is the elevation range?")
    assert (result.stop_reason, result.finished, len(model.calls)) == ("max_steps", False, 3)
    assert result.answer.startswith("The Colorado orogeny was")  # the best observation so far, flagged unfinished
    result = agent("Again, with one call.", max_calls=1)
    assert (result.stop_reason, len(result.steps)) == ("max_steps", 1)


def test_replies_without_actions_each_count_as_a_call():
    agent, model = make_agent([], max_calls=2)
    model.default = "I am not sure how to answer that."
    result = agent("Which magazine was started first?")
    assert result.stop_reason == "max_steps" and len(model.calls) == 2 and result.answer is None
    assert all(step.observation.startswith(CORRECTIVE_MESSAGE) for step in result.steps)


@pytest.mark.parametrize("max_calls", [0, 51, True, "8", 2.5])
def test_max_calls_is_validated(max_calls):
    with pytest.raises(ConfigurationError, match="max_calls must be an integer from 1 to 50"):
        make_agent([], max_calls=max_calls)
    agent, _ = make_agent([])
    with pytest.raises(ConfigurationError, match="max_calls"):
        agent("q", max_calls=max_calls)


def test_lookup_reads_the_next_match_of_the_page_searched_last():
    agent, _ = make_agent(
        [
            "Action 1\n<lookup>orogeny",
            "Action 2\n<search>Colorado orogeny",
            "Action 3\n<lookup>eastern sector",
            "Action 4\n<lookup>Eastern Sector",
            "Action 5\n<finish>the High Plains",
        ]
    )
    steps = agent("Where does the eastern sector extend?").steps
    assert steps[0].observation.startswith("No page has been searched yet.")
    assert (
        steps[2].observation
        == "(Result 1 / 1) The eastern sector extends into the High Plains and is called the Central Plains orogeny."
    )
    assert steps[3].observation == "No more results for [Eastern Sector] on the page [Colorado orogeny]."


def test_a_second_question_in_the_thread_continues_the_conversation():
    agent, model = make_agent(
        [
            "Action 1\n<search>Milhouse",
            "Action 2\n<lookup>named after",
            "Action 3\n<finish>Richard Nixon",
            "Action 1\n<lookup>voiced by",
            "Action 2\n<finish>Pamela Hayden",
        ],
        checkpointer=InMemorySaver(),
    )
    assert agent("Who was Milhouse named after?", thread_id="chat").answer == "Richard Nixon"
    second = agent("Who voices him?", thread_id="chat")
    assert second.answer == "Pamela Hayden" and [s.step for s in second.steps] == [1, 2]
    # the follow-up saw the first exchange, and its lookup read the page searched in the first turn
    seen = [m.content for m in model.calls[3][1:]]
    assert seen[0] == "Question\nWho was Milhouse named after?" and seen[-1] == "Question\nWho voices him?"
    assert second.steps[0].observation.startswith("(Result 1 / 1)") and "Pamela Hayden" in second.steps[0].observation
    assert second.sources == ["https://en.wikipedia.org/wiki/Milhouse_Van_Houten"]
    other = agent.graph.get_state({"configurable": {"thread_id": "other"}}).values
    assert other == {}  # threads do not share memory


def test_a_failing_model_is_a_typed_stop():
    agent, _ = make_agent([])  # the scripted model has no reply: the call raises
    result = agent("Who was Milhouse named after?")
    assert result.stop_reason == "model_error" and "the model call failed" in result.error and result.answer is None


def test_a_prompt_file_in_the_notebook_format_is_accepted(tmp_path):
    path = tmp_path / "model_instructions.txt"
    path.write_text(REACT_PROMPT + "\nQuestion\n{question}")
    agent, model = make_agent(["<finish>yes"], prompt=str(path))
    agent("Were Pavel Urysohn and Leonid Levin known for the same type of work?")
    assert model.calls[0][0].content == REACT_PROMPT
    assert model.calls[0][1].content == "Question\nWere Pavel Urysohn and Leonid Levin known for the same type of work?"
    with pytest.raises(ConfigurationError, match="stop"):
        make_agent([], generation_kwargs={"stop": ["x"]})


def test_through_chat_openai_the_stop_sequences_and_generation_settings_reach_the_server(monkeypatch):
    replies = iter(
        ["Thought 1\nSearch.\nAction 1\n<search>Elia Kazan", "Action 2\n<finish>director, screenwriter, actor"]
    )
    with OpenAIStub(lambda request: {"text": next(replies)}) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        agent = WikipediaReActAgent(wikipedia=WikipediaTools.sample(), generation_kwargs={"temperature": 0.2})
        result = agent("What profession do Nicholas Ray and Elia Kazan have in common?")
    assert result.answer == "director, screenwriter, actor" and result.sources == [
        "https://en.wikipedia.org/wiki/Elia_Kazan"
    ]
    first, second = stub.requests
    assert first["stop"] == STOP_SEQUENCES and first["temperature"] == 0.2
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][3]["content"].startswith("Observation 1\nElia Kazan (born Elias Kazantzoglou")
