"""The shapeshift lab: measures formats on this machine, side by side with peer libraries,
and writes a report (``report/index.html`` plus the figures as JSON and the charts as SVG).

Run it with ``make lab`` or ``python -m shapeshift.lab --out report``.
"""

from shapeshift.lab.study import LabContext, StudyResult, Table, Target

__all__ = ["LabContext", "StudyResult", "Table", "Target"]
