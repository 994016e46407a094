//! Datasets of rust_serialization_benchmark (github djkoloski/rust_serialization_benchmark,
//! `src/datasets/`), rebuilt by our own seeded generator with the same schemas, counts and
//! value ranges: `log` (10,000 HTTP access logs), `mesh` (125,000 triangles),
//! `minecraft_savedata` (500 players' save data) and `mk48` (1,000 game updates).
//!
//! Each dataset is typed Rust structs (what the crates serialize, the benchmark's own shapes:
//! tuples, arrays, options and unit enums included) and a YT table with one row per record
//! (what our formats write); each module's `schema` says how its structs map to YT types.

mod log;
mod mesh;
mod minecraft;
mod mk48;

pub use self::log::{logs, Address, Log, Logs, LOG_COUNT};
pub use self::mesh::{mesh, Mesh, Triangle, Vector3, TRIANGLE_COUNT};
pub use self::minecraft::{
    players, Abilities, Entity, GameType, Item, Player, Players, RecipeBook, PLAYER_COUNT,
};
pub use self::mk48::{
    updates, Contact, EntityType, Guidance, TerrainUpdate, Transform, Update, Updates, UPDATE_COUNT,
};

use shapeshift_types::{TableSchema, Value};

/// A dataset as rows of a YT table: the forward and reverse steps of our formats.
pub trait TableRows: Sized {
    fn schema() -> TableSchema;
    /// Calls `row` with each record's row, in order.
    fn for_each_row(&self, row: impl FnMut(Vec<Value>) -> Result<(), String>)
        -> Result<(), String>;
    fn from_rows(rows: impl Iterator<Item = Result<Vec<Value>, String>>) -> Result<Self, String>;
}

fn schema_of(text: &str) -> TableSchema {
    let node = shapeshift_formats::yson::from_slice(text.as_bytes()).expect("the schema parses");
    TableSchema::from_node(&node).expect("the schema is valid")
}

/// A YT schema's text from `(name, type_v3)` columns.
fn columns_of(columns: &[(&str, &str)]) -> TableSchema {
    let columns: Vec<String> = columns
        .iter()
        .map(|(name, ty)| format!("{{name={name}; type_v3={ty}}}"))
        .collect();
    schema_of(&format!("[{}]", columns.join("; ")))
}

/// A type_v3 struct of `(name, type)` members.
fn struct_type(members: &[(&str, &str)]) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(name, ty)| format!("{{name={name}; type={ty}}}"))
        .collect();
    format!("{{type_name=struct; members=[{}]}}", members.join("; "))
}

fn optional_type(item: &str) -> String {
    format!("{{type_name=optional; item={item}}}")
}

fn list_type(item: &str) -> String {
    format!("{{type_name=list; item={item}}}")
}

fn take<const N: usize>(value: Value, what: &str) -> Result<[Value; N], String> {
    match value {
        Value::Tuple(items) => items
            .try_into()
            .map_err(|items: Vec<Value>| format!("{what}: {} members, expected {N}", items.len())),
        other => Err(format!("{what}: expected a struct, found {other:?}")),
    }
}

fn row_of<const N: usize>(row: Vec<Value>, what: &str) -> Result<[Value; N], String> {
    take(Value::Tuple(row), what)
}

/// Each row as a record: `record` gets the row's `N` columns.
fn records_of<const N: usize, T>(
    rows: impl Iterator<Item = Result<Vec<Value>, String>>,
    what: &str,
    mut record: impl FnMut([Value; N]) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    rows.map(|row| record(row_of(row?, what)?)).collect()
}

fn unsigned(value: Value) -> Result<u64, String> {
    match value {
        Value::Uint64(v) => Ok(v),
        other => Err(format!("expected an unsigned integer, found {other:?}")),
    }
}

fn narrow<T: TryFrom<u64>>(value: Value) -> Result<T, String> {
    let v = unsigned(value)?;
    T::try_from(v).map_err(|_| format!("{v} out of range"))
}

fn signed(value: Value) -> Result<i64, String> {
    match value {
        Value::Int64(v) => Ok(v),
        other => Err(format!("expected a signed integer, found {other:?}")),
    }
}

fn narrow_signed<T: TryFrom<i64>>(value: Value) -> Result<T, String> {
    let v = signed(value)?;
    T::try_from(v).map_err(|_| format!("{v} out of range"))
}

/// The enum of `code` among `all` (in code order).
pub fn enum_from_code<T: Copy>(all: &[T], code: i64, what: &str) -> Result<T, String> {
    usize::try_from(code)
        .ok()
        .and_then(|i| all.get(i))
        .copied()
        .ok_or_else(|| format!("{what} code {code} is not 0 to {}", all.len() - 1))
}

fn enum_of<T: Copy>(value: Value, all: &[T], what: &str) -> Result<T, String> {
    enum_from_code(all, signed(value)?, what)
}

fn text(value: Value) -> Result<String, String> {
    String::from_utf8(bytes(value)?).map_err(|e| e.to_string())
}

fn bytes(value: Value) -> Result<Vec<u8>, String> {
    match value {
        Value::String(bytes) => Ok(bytes),
        other => Err(format!("expected a string, found {other:?}")),
    }
}

fn float(value: Value) -> Result<f32, String> {
    // A float column holds the f32 exactly as a double.
    Ok(double(value)? as f32)
}

fn double(value: Value) -> Result<f64, String> {
    match value {
        Value::Double(v) => Ok(v),
        other => Err(format!("expected a float, found {other:?}")),
    }
}

fn boolean(value: Value) -> Result<bool, String> {
    match value {
        Value::Bool(v) => Ok(v),
        other => Err(format!("expected a boolean, found {other:?}")),
    }
}

/// An `optional<T>` of a non-nullable `T`: null or the value itself.
fn optional_of<T>(
    value: Value,
    item: impl FnOnce(Value) -> Result<T, String>,
) -> Result<Option<T>, String> {
    match value {
        Value::Null => Ok(None),
        other => item(other).map(Some),
    }
}

fn list_of<T>(
    value: Value,
    item: impl FnMut(Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    match value {
        Value::List(items) => items.into_iter().map(item).collect(),
        other => Err(format!("expected a list, found {other:?}")),
    }
}

fn string(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

fn uint_value(v: impl Into<u64>) -> Value {
    Value::Uint64(v.into())
}

fn int_value(v: impl Into<i64>) -> Value {
    Value::Int64(v.into())
}

fn double_value(v: impl Into<f64>) -> Value {
    Value::Double(v.into())
}

fn optional_value<T>(v: Option<T>, item: impl FnOnce(T) -> Value) -> Value {
    v.map_or(Value::Null, item)
}

fn list_value<T>(items: &[T], item: impl FnMut(&T) -> Value) -> Value {
    Value::List(items.iter().map(item).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: TableRows + PartialEq + std::fmt::Debug>(data: &T) {
        let schema = T::schema();
        let mut rows = Vec::new();
        data.for_each_row(|row| {
            assert_eq!(row.len(), schema.columns.len());
            for (v, c) in row.iter().zip(&schema.columns) {
                shapeshift_types::check_value(v, &c.ty).map_err(|e| format!("{}: {e}", c.name))?;
            }
            rows.push(row);
            Ok(())
        })
        .unwrap();
        assert_eq!(&T::from_rows(rows.into_iter().map(Ok)).unwrap(), data);
    }

    #[test]
    fn rows_round_trip_and_match_their_schema() {
        check(&logs(300, 3));
        check(&mesh(300, 3));
        check(&players(200, 3));
        check(&updates(100, 3));
    }

    #[test]
    fn a_row_of_the_wrong_shape_is_an_error() {
        let mut rows = Vec::new();
        players(1, 5)
            .for_each_row(|row| {
                rows.push(row);
                Ok(())
            })
            .unwrap();
        let mut bad = rows[0].clone();
        bad[0] = Value::Int64(4); // game_type: codes are 0 to 3
        assert!(Players::from_rows([Ok(bad)].into_iter()).is_err());
        let mut short = rows[0].clone();
        short.pop();
        assert!(Players::from_rows([Ok(short)].into_iter()).is_err());
    }
}
