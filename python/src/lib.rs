//! The `shapeshift._native` extension module: one submodule per layer, wrapped by the pure
//! Python package `shapeshift`.

use pyo3::prelude::*;

mod columns;
mod formats;
mod records;
mod skiff;
mod sql;
mod text;
mod yson;

fn add_submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    register: fn(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let child = PyModule::new(parent.py(), name)?;
    register(&child)?;
    parent.add_submodule(&child)?;
    Ok(())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_submodule(m, "yson", yson::register)?;
    add_submodule(m, "skiff", skiff::register)?;
    add_submodule(m, "records", records::register)?;
    add_submodule(m, "columns", columns::register)?;
    add_submodule(m, "formats", formats::register)?;
    add_submodule(m, "sql", sql::register)?;
    Ok(())
}
