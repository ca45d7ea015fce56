"""Model registry and framework-free model code (embeddings, diffusion, ...)."""
