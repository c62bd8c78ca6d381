"""The structured-output reflection agent extracting the example `CarCollection`, for `langgraph.json`.

Send the passage as the user message; the run's state holds every attempt and,
once one validates, the stop reason `validated`. The model comes from the
run's context (`AgentContext`; `max_steps` counts attempts), else the environment.
"""

from graphs.structured_output_agent import StructuredOutputReflectionAgent
from schemas.extraction import CarCollection

agent = StructuredOutputReflectionAgent(CarCollection, checkpointer=None)
graph = agent.graph
