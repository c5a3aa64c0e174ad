"""The matrix_embeddings chapter."""
