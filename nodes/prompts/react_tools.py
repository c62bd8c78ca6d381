"""The system prompt of the tool-calling ReAct agent: task, tools, output format, examples, task spec.

A template is a `str.format` string whose fields are any of `{tools}`,
`{output_format}` and `{examples}`; the step history is not part of it, as it is
the agent's message memory.

A prompt line that ends in a backslash goes on with the next one: the backslash joins them, no newline.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence

from reflexion_agents.nodes.tools.call_expression import FunctionExpression
from reflexion_agents.nodes.tools.functions import FunctionTool
from reflexion_agents.schemas.errors import ConfigurationError

TEMPLATE_FIELDS = ("tools", "output_format", "examples")

REACT_SYSTEM_TEMPLATE = """You are a helpful assistant.
Answer the user's query using the tools provided below with minimal steps and maximum accuracy.
Each step you will read the previous Thought, Action, and Observation (execution result of the action) and then \
provide the next Thought and Action.

{tools}

{output_format}

{examples}

<TASK_SPEC>
- For simple queries: Directly call the `finish` action and provide the answer.
- For complex queries:
    - Step 1: Read the user query and potentially divide it into subqueries. And get started with the first subquery.
    - Call one available tool at a time to solve each subquery/subquestion.
    - At step 'finish', join all subqueries answers and finish the task.
Remember:
- Action must call one of the above tools with name. It can not be empty.
- You will always end with 'finish' action to finish the task. The answer can be the final answer or failure message.
</TASK_SPEC>"""

NATIVE_OUTPUT_FORMAT = """<OUTPUT_FORMAT>
Each reply calls exactly one tool. Write your thought (why you call it) as the reply's text, in a sentence or two.
</OUTPUT_FORMAT>"""

TEXT_OUTPUT_FORMAT = """<OUTPUT_FORMAT>
Your output should be formatted as a standard JSON instance with the following schema:
```
{
    "thought": "Why the function is called (Optional[str]) (optional)",
    "action": "FuncName(<kwargs>) Valid function call expression. Example: \\"FuncName(a=1, b=2)\\" Follow the data \
type specified in the function parameters."
}
```
-Make sure to always enclose the JSON output in triple backticks (```). Please do not add anything other than valid \
JSON output!
-Use double quotes for the keys and string values.
-Argument values must be literals (numbers, strings, lists); to use a result, copy its value.
</OUTPUT_FORMAT>"""

DEFAULT_EXAMPLES = [
    FunctionExpression(thought="I have finished the task.", action="finish(answer=\"final answer: 'answer'\")")
]


def check_template(template: str) -> str:
    """The template itself, once every field in it is one the agent fills."""
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as e:
        raise ConfigurationError(f"the ReAct template is not a valid format string: {e}") from e
    unknown = sorted(fields - set(TEMPLATE_FIELDS))
    if unknown:
        known = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
        raise ConfigurationError(
            f"the ReAct template has unknown fields {unknown}; it may use {known} "
            "(write literal braces as {{ and }})"
        )
    return template


def _tools_section(tools: Sequence[FunctionTool]) -> str:
    listed = "\n------------------------\n".join(f"{i}.\n{tool.describe()}" for i, tool in enumerate(tools, 1))
    return f"<TOOLS>\nYour available tools are:\n{listed}\n</TOOLS>"


def _examples_section(examples: Sequence[FunctionExpression], native: bool) -> str:
    if not examples:
        return ""
    if native:
        shown = "\n________\n".join(f"Thought: {e.thought}\nCall: {e.action}" for e in examples)
    else:
        shown = "\n________\n".join(json.dumps(e.model_dump(), indent=4) for e in examples)
    return f"<EXAMPLES>\nExamples of correct steps:\n```\n{shown}\n```\n</EXAMPLES>"


def react_system_prompt(
    template: str, tools: Sequence[FunctionTool], examples: Sequence[FunctionExpression], *, native: bool
) -> str:
    """The system prompt for native tool calling (`native=True`) or the JSON-in-text format."""
    text = template.format(
        tools=_tools_section(tools),
        output_format=NATIVE_OUTPUT_FORMAT if native else TEXT_OUTPUT_FORMAT,
        examples=_examples_section(examples, native),
    )
    return "\n\n".join(part.strip() for part in text.split("\n\n") if part.strip())
