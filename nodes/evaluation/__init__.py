"""Evaluation of knowledge-graph agents: execution accuracy over (question, gold Cypher) datasets."""
