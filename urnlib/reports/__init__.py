"""Chapter reports: stored runs -> the figures, tables and claims a chapter shows."""
