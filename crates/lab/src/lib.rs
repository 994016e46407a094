//! shapeshift's lab layer (native side): datasets, scenarios and measurements.
