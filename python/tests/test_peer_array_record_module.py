"""array_record's own tests (array_record_module_test.py, unmodified) run on shapeshift; see peer_suites.py."""

from peer_suites import load_peer_file

PEER_FILE = "ar/array_record_module_test.py"
globals().update(load_peer_file(PEER_FILE))
