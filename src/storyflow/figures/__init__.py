"""Every figure of the workflow, one module per measure; the shared look in ``common``."""
