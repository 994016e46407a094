"""yt.yson's own tests (test_parser.py, unmodified) run on shapeshift; see peer_suites.py."""

from peer_suites import load_peer_file

PEER_FILE = "yson_tests/test_parser.py"
globals().update(load_peer_file(PEER_FILE))
