"""The tool-calling ReAct agent with the arithmetic example tools and the LLM fallback, for `langgraph.json`.

The model comes from the run's context (`AgentContext`), else the environment.
"""

from graphs.react_agent import ReActAgent
from nodes.tools.arithmetic import ARITHMETIC_TOOLS

agent = ReActAgent(ARITHMETIC_TOOLS, add_llm_as_fallback=True, checkpointer=None)
graph = agent.graph
