"""Runs the peers' own test files (yt.yson's and array_record's, unmodified) against shapeshift.

The files live outside the project, in ``<repo root>/../shared/peer-suites`` (see its
SOURCES.md for their upstream commits and licence). Each ``test_peer_*.py`` module of this
directory loads one of them with :func:`load_peer_file`: while the file is imported, its imports
are pointed at the target (``sys.modules`` entries for ``yt``, ``yt.yson`` and its submodules,
``yt_yson_bindings``, array_record's ``python`` package), and restored afterwards, so the rest
of our suite still sees the real peers. The file keeps the module objects it imported, so its
tests run on the target.

``SHAPESHIFT_PEER_TARGET=pip`` runs the same files on the pip peers instead (the baseline).

Two things pip does not ship are provided here: ``yt.packages.six`` (the few names the files
use) and ``yt.test_helpers.assert_items_equal``. Bazel's absl flags ``--test_srcdir`` and
``--test_tmpdir`` are set to the peer testdata folder and a temporary folder.
"""

from __future__ import annotations

import collections
import importlib
import importlib.util
import os
import sys
import tempfile
import types
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PEER_ROOT = Path(os.environ.get("SHAPESHIFT_PEER_SUITES", REPO_ROOT.parent / "shared" / "peer-suites"))
TARGET = os.environ.get("SHAPESHIFT_PEER_TARGET", "shapeshift")

# Tests of the peers' private helpers: shapeshift has other internals, so these are not run.
EXCLUDED = {
    "array_record_data_source_test.py::ArrayRecordDataSourcesTest::test_check_default_group_size":
        "tests array_record's private _check_group_size",
    "array_record_data_source_test.py::ArrayRecordDataSourcesTest::test_check_invalid_group_size":
        "tests array_record's private _check_group_size",
    "array_record_data_source_test.py::ArrayRecordDataSourcesTest::"
    "test_array_record_source_reader_idx_and_position":
        "tests array_record's private _reader_idx_and_position",
    "array_record_data_source_test.py::ArrayRecordDataSourcesTest::"
    "test_array_record_source_reader_idx_and_position_negative_idx":
        "tests array_record's private _reader_idx_and_position",
    "array_record_data_source_test.py::RunInParallelTest::": "tests array_record's private _run_in_parallel",
}

# Tests that do not pass on shapeshift, with the reason. Each is run as a strict xfail, so the
# suite fails as soon as one of them starts passing (then it is taken off this list).
_NEWER_THAN_PIP = ("written for a yt.yson newer than the pinned pip release, which fails it too "
                   "(SHAPESHIFT_PEER_TARGET=pip); shapeshift follows the pip release: ")
KNOWN_FAILURES: dict[str, str] = {
    **{"test_parser.py::{}::test_always_create_attributes".format(cls): _NEWER_THAN_PIP
       + "with always_create_attributes=False strings come back as plain str, not YsonUnicode"
       for cls in ("TestParserDefault", "TestParserPython", "TestParserBindings")},
    "test_parser.py::TestParserBindings::test_context": _NEWER_THAN_PIP
    + "the expected context positions (0 for b'abacaba{') are a newer lexer's; shapeshift, like "
      "the pip bindings, puts context_pos at the byte where parsing stopped",
    "test_yson_types.py::test_string": _NEWER_THAN_PIP
    + "YsonUnicode(text, encoding=...) would need a Python __new__ on YsonUnicode, which "
      "slows every string loads creates",
}


def _six_shim() -> types.ModuleType:
    six = types.ModuleType("yt.packages.six")
    six.PY3 = True
    six.PY2 = False
    six.text_type = str
    six.binary_type = bytes
    six.integer_types = (int,)
    six.string_types = (str,)
    six.b = lambda text: text.encode("latin-1")
    six.iteritems = lambda mapping: iter(mapping.items())
    moves = types.ModuleType("yt.packages.six.moves")
    moves.xrange = range
    moves.map = map
    moves.zip = zip
    six.moves = moves
    return six


def _assert_items_equal(actual, expected):
    """``yt.test_helpers.assert_items_equal``: the same items in any order (items may be unhashable)."""
    actual, expected = list(actual), list(expected)
    assert len(actual) == len(expected), (actual, expected)
    remaining = list(expected)
    for item in actual:
        for index, candidate in enumerate(remaining):
            if item == candidate:
                del remaining[index]
                break
        else:
            raise AssertionError("{!r} is not among the expected items {!r}".format(item, expected))


def _package(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(attributes)
    return module


def _yson_modules() -> dict[str, types.ModuleType]:
    if TARGET == "pip":
        yson = importlib.import_module("yt.yson")
        submodules = {name: importlib.import_module("yt.yson." + name)
                      for name in ("writer", "parser", "convert", "yson_types", "common")}
        bindings = importlib.import_module("yt_yson_bindings")
    else:
        yson = importlib.import_module("shapeshift.yson")
        submodules = {name: importlib.import_module("shapeshift.yson." + name)
                      for name in ("writer", "parser", "convert", "yson_types", "common")}
        # shapeshift.yson is native code throughout: it stands for the C++ bindings too.
        bindings = yson
    six = _six_shim()
    test_helpers = types.ModuleType("yt.test_helpers")
    test_helpers.assert_items_equal = _assert_items_equal
    packages = _package("yt.packages", six=six)
    yt = _package("yt", yson=yson, packages=packages, test_helpers=test_helpers)
    modules = {
        "yt": yt, "yt.yson": yson, "yt.packages": packages, "yt.packages.six": six,
        "yt.packages.six.moves": six.moves, "yt.test_helpers": test_helpers,
        "yt_yson_bindings": bindings,
    }
    modules.update({"yt.yson." + name: module for name, module in submodules.items()})
    return modules


def _array_record_modules() -> dict[str, types.ModuleType]:
    if TARGET == "pip":
        module = importlib.import_module("array_record.python.array_record_module")
        data_source = importlib.import_module("array_record.python.array_record_data_source")
    else:
        module = data_source = importlib.import_module("shapeshift.records")
    package = _package("python", array_record_module=module, array_record_data_source=data_source)
    _parse_absl_flags()
    return {"python": package, "python.array_record_module": module,
            "python.array_record_data_source": data_source}


def _parse_absl_flags() -> None:
    from absl import flags
    from absl.testing import absltest  # noqa: F401  (defines --test_srcdir, --test_tmpdir)

    if not flags.FLAGS.is_parsed():
        tmpdir = tempfile.mkdtemp(prefix="peer-suite-")
        flags.FLAGS(["peer-suites", "--test_srcdir=" + str(PEER_ROOT / "ar" / "testdata"),
                     "--test_tmpdir=" + tmpdir])


def load_peer_file(relative_path: str) -> dict:
    """The test classes and functions of the peer file, imported with its imports pointed at the
    target. Skips the calling module when the peer suites are absent."""
    path = PEER_ROOT / relative_path
    if not path.is_file():
        pytest.skip("the peers' test suites are not at {} (set SHAPESHIFT_PEER_SUITES)".format(PEER_ROOT),
                    allow_module_level=True)
    modules = _yson_modules() if relative_path.startswith("yson_tests/") else _array_record_modules()
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        name = "peer_suite_" + path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for module_name, previous in saved.items():
            if previous is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = previous
    return {key: value for key, value in vars(module).items()
            if key.startswith(("test", "Test")) or (isinstance(value, type) and key.endswith("Test"))}


def _peer_key(item: pytest.Item) -> str | None:
    """``<peer file>::<class>::<test>`` for a test loaded from a peer file."""
    module_name = getattr(item.module, "PEER_FILE", None) if hasattr(item, "module") else None
    if module_name is None:
        return None
    parts = item.nodeid.split("::")[1:]
    return "::".join([module_name.split("/")[-1]] + parts)


def mark_peer_items(items: list[pytest.Item]) -> None:
    """Skips the excluded private-helper tests and marks the known failures (shapeshift target)."""
    for item in items:
        key = _peer_key(item)
        if key is None:
            continue
        for excluded, reason in EXCLUDED.items():
            if key == excluded or (excluded.endswith("::") and key.startswith(excluded)):
                item.add_marker(pytest.mark.skip(reason="excluded: " + reason))
        if TARGET != "pip":
            base_key = key.split("[")[0]
            if base_key in KNOWN_FAILURES:
                item.add_marker(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[base_key]))


def known_failure_counts() -> collections.Counter:
    return collections.Counter(key.split("::")[0] for key in KNOWN_FAILURES)
