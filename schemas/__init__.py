"""Data contracts: graph states, structured model outputs, results and errors. No I/O here."""
