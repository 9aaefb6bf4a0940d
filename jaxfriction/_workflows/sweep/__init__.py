"""Parameter sweeps: lanes built from a template system, on a chunked, resumable engine."""
