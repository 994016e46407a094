"""Marks the peers' tests (see peer_suites.py): private-helper tests skipped, known failures xfail."""

import peer_suites


def pytest_collection_modifyitems(config, items):
    peer_suites.mark_peer_items(items)
