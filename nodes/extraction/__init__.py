"""Structured-output reflection: read an extraction reply, validate it, feed the error back."""
