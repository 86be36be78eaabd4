"""The knowledge package's errors (codes documented in docs/errors.md).

NodeloomError
└── KnowledgeError                 knowledge_error           base
    ├── DocumentLoadError          knowledge_load_failed     a file or URL could not be read
    ├── EmbeddingError             knowledge_embedding_failed  the model could not embed
    ├── ModelMismatchError         knowledge_model_mismatch  writing with another model
    │                                                        than the collection's
    ├── CollectionNotFoundError    knowledge_collection_not_found
    └── KnowledgeStoreError        knowledge_store_unavailable  the store URL is unusable
"""

from __future__ import annotations

from nodeloom.errors import NodeloomError


class KnowledgeError(NodeloomError):
    code = "knowledge_error"


class DocumentLoadError(KnowledgeError):
    code = "knowledge_load_failed"

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"cannot load {source}: {reason}")
        self.source = source
        self.reason = reason


class EmbeddingError(KnowledgeError):
    code = "knowledge_embedding_failed"


class ModelMismatchError(KnowledgeError):
    code = "knowledge_model_mismatch"


class CollectionNotFoundError(KnowledgeError):
    code = "knowledge_collection_not_found"


class KnowledgeStoreError(KnowledgeError):
    code = "knowledge_store_unavailable"
