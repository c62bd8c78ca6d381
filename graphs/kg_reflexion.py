"""The knowledge-graph Reflexion agent as a module-level graph, for `langgraph.json`.

The model comes from the environment (`OPENAI_API_KEY` / `OPENAI_BASE_URL`,
`REFLEXION_MODEL`) and the database is the embedded FalkorDB, both opened on
the first run rather than at import.
"""

from graphs.kg_query_agent import KGQueryReflexionAgent

agent = KGQueryReflexionAgent()
graph = agent.graph
