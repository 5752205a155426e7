"""Offline adapters: rule-based extraction and judging, hashed n-gram embeddings.

They need no network and no model, and give the same answer on every run, so
the whole pipeline can be built, tested and replayed without an LLM.
"""

from factledger.infrastructure.offline.embedder import HashedNgramEmbedder
from factledger.infrastructure.offline.extractor import RuleExtractor
from factledger.infrastructure.offline.judge import RuleJudge
from factledger.infrastructure.offline.signals import SignalDetector

__all__ = ["HashedNgramEmbedder", "RuleExtractor", "RuleJudge", "SignalDetector"]
