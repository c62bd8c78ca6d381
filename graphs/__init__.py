"""Wiring: graph builders, the biochatter-compatible agent classes, and the entry points."""
