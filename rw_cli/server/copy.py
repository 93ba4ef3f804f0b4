"""COPY ... FROM STDIN / TO STDOUT (placeholder until implemented)."""
from __future__ import annotations


def copy_kind(sql: str):
    return None
