"""The dyck chapter."""
