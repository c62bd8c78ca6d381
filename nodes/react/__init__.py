"""ReAct protocols: reading a reply as a thought and an action, and answering it with an observation."""
