"""Read a text-protocol ReAct reply: `Thought N ... Action N <search>entity</search>`.

Generation stops on the closing tag, so the reply usually ends with an open tag
and its argument. Only the first action counts: a model that ignores the stop
sequences and writes on (often inventing its own observation) is cut there, so
invented text never enters the memory.
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage

from reflexion_agents.schemas.react import ReActAction

_ACTION = re.compile(
    r"<(search|lookup|finish)>(.*?)(</\1>|(?=<(?:search|lookup|finish)>)|$)", re.DOTALL | re.IGNORECASE
)
_HEADER = re.compile(r"^\s*(?:Thought|Action)\s*\d*\s*:?\s*$", re.IGNORECASE | re.MULTILINE)


def _thought(text: str) -> str:
    """The reasoning before the action, without the `Thought N` / `Action N` headers."""
    return " ".join(_HEADER.sub("", text).split())


def parse_text_action(text: str) -> tuple[str, ReActAction]:
    """(the reply as the memory keeps it, the action read from it)."""
    match = _ACTION.search(text)
    if match is None:
        kept = text.strip()
        return kept, ReActAction(thought=_thought(kept), error="the reply has no <search>, <lookup> or <finish> action")
    argument = match.group(2)
    if not match.group(3):  # cut by a stop sequence (or never closed): the argument is one line
        argument = argument.lstrip().split("\n", 1)[0]
    tool, argument = match.group(1).lower(), " ".join(argument.split())
    kept = f"{text[: match.start()].rstrip()}\n<{tool}>{argument}</{tool}>".lstrip()
    action = f"<{tool}>{argument}</{tool}>"
    thought = _thought(text[: match.start()])
    if not argument:
        return kept, ReActAction(thought=thought, action=action, error=f"the <{tool}> action is empty")
    return kept, ReActAction(thought=thought, tool=tool, args={"argument": argument}, action=action)


def read_text_reply(reply: AIMessage) -> tuple[AIMessage, ReActAction]:
    """The ActionResponder reader for the text protocol."""
    kept, action = parse_text_action(reply.text)
    message = AIMessage(
        content=kept, id=reply.id, usage_metadata=reply.usage_metadata, response_metadata=reply.response_metadata
    )
    return message, action
