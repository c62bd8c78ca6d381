"""The web page `reflexion serve` serves at /ui: ask, watch the steps, approve, and see the answer as
a table and a drawing of the graph (app.py)."""
