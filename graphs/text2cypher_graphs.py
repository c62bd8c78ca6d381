"""The four text-to-Cypher flows as module-level graphs, for `langgraph.json`.

Each takes `{"question": "..."}`. The model comes from the environment and the
database is the embedded FalkorDB with the seeded few-shot store, both opened
on the first run rather than at import.
"""

from graphs.text2cypher_flow import Text2CypherFlow

naive = Text2CypherFlow("naive")
retry = Text2CypherFlow("retry")
retry_evaluate = Text2CypherFlow("retry_evaluate")
planner = Text2CypherFlow("planner")

naive_graph = naive.graph
retry_graph = retry.graph
retry_evaluate_graph = retry_evaluate.graph
planner_graph = planner.graph
