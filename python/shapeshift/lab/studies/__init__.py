"""The lab's studies, in the order ``make lab`` runs them.

Each entry is a module of this package with ``TITLE`` and ``run(ctx) -> StudyResult``.
"""

STUDIES = ["formats", "rowformats", "codecs", "records", "columns"]
