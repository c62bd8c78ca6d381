"""Pieces every agent and flow shares: model responders, the approval pause, the schema as prompt text."""
