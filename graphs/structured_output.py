"""The structured-output reflection agent extracting the example `CarCollection`, for `langgraph.json`.

Send the passage as the user message; the run's state holds every attempt and,
once one validates, the stop reason `validated`.
"""

from graphs.structured_output_agent import StructuredOutputReflectionAgent
from schemas.extraction import CarCollection

agent = StructuredOutputReflectionAgent(CarCollection)
graph = agent.graph
