"""The pipeline, headless. Nothing in this package imports Textual."""
