"""The knowledge-graph Reflexion agent as a module-level graph, for `langgraph.json`.

The model and the database come from the run's context (`KGQueryContext`),
with the environment as default (`OPENAI_API_KEY` / `OPENAI_BASE_URL`,
`REFLEXION_MODEL`, `REFLEXION_DATABASE_URL`, `REFLEXION_GRAPH`), opened on the
first run rather than at import. LangGraph server checkpoints the threads.
"""

from graphs.kg_query_agent import KGQueryReflexionAgent

agent = KGQueryReflexionAgent(checkpointer=None)
graph = agent.graph
