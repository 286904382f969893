"""Graded exercises of chapter 2: none. Its exercises ask the reader to run the pipeline
and read what it does; none has a hidden check."""
