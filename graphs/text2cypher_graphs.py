"""The four text-to-Cypher flows as module-level graphs, for `langgraph.json`.

Each takes `{"question": "..."}`. The model, the database and the limits come
from the run's context (`Text2CypherContext`), with the environment as default;
the database is the embedded FalkorDB with the seeded few-shot store unless
`REFLEXION_DATABASE_URL` names another. Both are opened on the first run rather
than at import. LangGraph server checkpoints the threads.
"""

from graphs.text2cypher_flow import Text2CypherFlow

naive = Text2CypherFlow("naive", checkpointer=None)
retry = Text2CypherFlow("retry", checkpointer=None)
retry_evaluate = Text2CypherFlow("retry_evaluate", checkpointer=None)
planner = Text2CypherFlow("planner", checkpointer=None)

naive_graph = naive.graph
retry_graph = retry.graph
retry_evaluate_graph = retry_evaluate.graph
planner_graph = planner.graph
