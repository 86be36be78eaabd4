"""Knowledge nodes: load, chunk, embed, write and search documents (docs/knowledge.md)."""
