"""The Reflexion engine's behaviour: responders, score parsing, stop rules and node updates."""
