"""Tools the agents call: the Cypher tool over the graph-database protocol."""
