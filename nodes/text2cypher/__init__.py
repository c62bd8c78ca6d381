"""Text-to-Cypher flows: guardrail, few-shot retrieval, generation, value mapping, execution, evaluation."""
