"""The text-protocol ReAct agent over Wikipedia as a module-level graph, for `langgraph.json`.

The model comes from the run's context (`AgentContext`), else the environment
(`OPENAI_API_KEY` / `OPENAI_BASE_URL`, `REFLEXION_MODEL`), made on the first
run rather than at import. `REFLEXION_WIKIPEDIA` chooses the pages: `live`
(the MediaWiki API, the default), `sample` (the corpus shipped with the
package, offline) or the path of a corpus JSON file.
"""

import os

from graphs.wikipedia_react_agent import WikipediaReActAgent
from nodes.tools.wikipedia import WikipediaTools
from nodes.tools.wikipedia_backends import LocalCorpus

WIKIPEDIA_ENV = "REFLEXION_WIKIPEDIA"


def wikipedia_from_env() -> WikipediaTools:
    source = (os.environ.get(WIKIPEDIA_ENV) or "live").strip()
    if source == "live":
        return WikipediaTools()
    return WikipediaTools.sample() if source == "sample" else WikipediaTools(LocalCorpus.from_file(source))


agent = WikipediaReActAgent(wikipedia=wikipedia_from_env(), checkpointer=None)
graph = agent.graph
