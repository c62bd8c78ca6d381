"""Plain values the settings models, the model resolver and the command line share.

The command line's parser shows these in its help and takes its option defaults from them, and
answers `reflexion --help` or an argument error without importing pydantic, LangGraph or a
database driver: so they live here, in a module that imports only `typing`. The models that check them
(`schemas.settings`, `schemas.text2cypher.Flow`) and the code that uses them read them from here
too, so each value is written once.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

#: The flows' names; each has a builder in `graphs.text2cypher_builders.FLOW_BUILDERS`, checked on import.
Flow = Literal["naive", "retry", "retry_evaluate", "planner"]
FLOW_NAMES: Final[tuple[Flow, ...]] = get_args(Flow)

MAX_STEPS_LIMIT: Final = 1000  # the most steps any agent may take
AGENT_MAX_STEPS: Final = 30  # `AgentSettings.max_steps`: the Reflexion agent's step limit
QUERY_TIMEOUT_S: Final = 10.0  # `DatabaseSettings.query_timeout`: seconds a query may run
EXTRACTION_MAX_RETRIES: Final = 3  # `ExtractionSettings.max_retries`: attempts after the first

EVAL_MAX_STEPS: Final = 10  # fewer than an agent's own 30: a question that needs more counts as missed
EVAL_QUERY_TIMEOUT_S: Final = QUERY_TIMEOUT_S  # the agents' own default; never unbounded here

DEFAULT_MODEL: Final = "openai:gpt-4o-mini"  # the chat model when neither the caller nor MODEL_ENV names one
MODEL_ENV: Final = "REFLEXION_MODEL"
