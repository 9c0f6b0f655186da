"""Fake platform servers for end-to-end tests of the real client libraries."""
