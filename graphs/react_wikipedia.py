"""The text-protocol ReAct agent over the live Wikipedia API as a module-level graph, for `langgraph.json`.

The model comes from the environment (`OPENAI_API_KEY` / `OPENAI_BASE_URL`,
`REFLEXION_MODEL`), made on the first run rather than at import.
"""

from graphs.wikipedia_react_agent import WikipediaReActAgent

agent = WikipediaReActAgent()
graph = agent.graph
