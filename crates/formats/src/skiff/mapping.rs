//! From a YT table schema to the Skiff schema YT reads and writes for it.
//!
//! The rules (YT's, see docs/formats/skiff.md for the table):
//! - integers keep their width (`int8` -> `int8`, ..., `uint64` -> `uint64`); with
//!   [`MappingOptions::widen_integers`] they widen to `int64`/`uint64` as YT's C++ and Python
//!   clients' generated schemas do;
//! - `date` -> `uint16`, `datetime` -> `uint32`, `timestamp` -> `uint64`, `interval` -> `int64`,
//!   `date32` -> `int32`, `datetime64`/`timestamp64`/`interval64` -> `int64`;
//! - `float` and `double` -> `double`; `bool` -> `boolean`;
//! - `string`, `utf8`, `json`, `uuid` -> `string32`; `yson` -> `yson32`; `null`, `void` -> `nothing`;
//! - `decimal(p, s)` -> `int32` (p <= 9), `int64` (p <= 18), `int128` (p <= 38), `int256`;
//! - `optional<T>` -> `variant8<nothing; T>` (so a legacy non-required column is one too);
//! - `list<T>` -> `repeated_variant8<T>`; `dict<K, V>` -> `repeated_variant8<tuple<K; V>>`;
//! - `struct` -> `tuple` of named children; `tuple` -> `tuple`;
//! - `variant` -> `variant8` (fewer than 256 alternatives) or `variant16`;
//! - `tagged<tag, T>` -> `T`.

use shapeshift_types::{PrimitiveType, TableSchema, Type};

use super::error::SkiffError;
use super::schema::SkiffSchema;
use super::wire_type::WireType;

/// Which system fields a generated table schema carries, and how integers are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MappingOptions {
    /// Add `$key_switch` (boolean) after the columns.
    pub key_switch: bool,
    /// Add `$row_index` (`variant8<nothing; int64; nothing>`).
    pub row_index: bool,
    /// Add `$range_index` (`variant8<nothing; int64>`).
    pub range_index: bool,
    /// Add `$other_columns` (yson32, last): `None` adds it exactly when the schema is not strict.
    pub other_columns: Option<bool>,
    /// Write every integer as int64/uint64 instead of its own width.
    pub widen_integers: bool,
}

/// The Skiff schema of one value of type `ty`.
///
/// # Errors
/// Never for a well-formed type; a mapping error for a decimal precision outside 1..=76.
pub fn skiff_schema_for_type(
    ty: &Type,
    options: &MappingOptions,
) -> Result<SkiffSchema, SkiffError> {
    Ok(match ty {
        Type::Primitive(primitive) => SkiffSchema::simple(primitive_wire_type(*primitive, options)),
        Type::Decimal { precision, .. } => {
            if !(1..=76).contains(precision) {
                return Err(SkiffError::mapping(format!(
                    "decimal precision {precision} is outside 1..=76"
                )));
            }
            SkiffSchema::simple(decimal_wire_type(*precision))
        }
        Type::Optional(item) => SkiffSchema::optional(skiff_schema_for_type(item, options)?),
        Type::List(item) => SkiffSchema::composite(
            WireType::RepeatedVariant8,
            vec![skiff_schema_for_type(item, options)?],
        ),
        Type::Dict { key, value } => SkiffSchema::composite(
            WireType::RepeatedVariant8,
            vec![SkiffSchema::tuple(vec![
                skiff_schema_for_type(key, options)?,
                skiff_schema_for_type(value, options)?,
            ])],
        ),
        Type::Struct(members) => SkiffSchema::tuple(
            members
                .iter()
                .map(|m| Ok(skiff_schema_for_type(&m.ty, options)?.named(m.name.clone())))
                .collect::<Result<_, SkiffError>>()?,
        ),
        Type::Tuple(elements) => SkiffSchema::tuple(
            elements
                .iter()
                .map(|e| skiff_schema_for_type(e, options))
                .collect::<Result<_, _>>()?,
        ),
        Type::VariantStruct(members) => SkiffSchema::composite(
            variant_wire_type(members.len()),
            members
                .iter()
                .map(|m| Ok(skiff_schema_for_type(&m.ty, options)?.named(m.name.clone())))
                .collect::<Result<_, SkiffError>>()?,
        ),
        Type::VariantTuple(elements) => SkiffSchema::composite(
            variant_wire_type(elements.len()),
            elements
                .iter()
                .map(|e| skiff_schema_for_type(e, options))
                .collect::<Result<_, _>>()?,
        ),
        Type::Tagged { item, .. } => skiff_schema_for_type(item, options)?,
    })
}

/// The Skiff schema of a table: a tuple of its columns (named) and the requested system fields.
///
/// # Errors
/// A mapping error for a column whose name starts with `$` (reserved for system fields) or
/// whose type cannot be mapped.
pub fn skiff_schema_for_table(
    schema: &TableSchema,
    options: &MappingOptions,
) -> Result<SkiffSchema, SkiffError> {
    let mut children = Vec::with_capacity(schema.columns.len() + 4);
    for column in &schema.columns {
        if column.name.starts_with('$') {
            return Err(SkiffError::mapping(format!(
                "column name '{}' starts with '$', which Skiff reserves for system fields",
                column.name
            )));
        }
        children.push(skiff_schema_for_type(&column.ty, options)?.named(column.name.clone()));
    }
    if options.key_switch {
        children.push(SkiffSchema::simple(WireType::Boolean).named("$key_switch"));
    }
    if options.row_index {
        children.push(
            SkiffSchema::composite(
                WireType::Variant8,
                vec![
                    SkiffSchema::simple(WireType::Nothing),
                    SkiffSchema::simple(WireType::Int64),
                    SkiffSchema::simple(WireType::Nothing),
                ],
            )
            .named("$row_index"),
        );
    }
    if options.range_index {
        children.push(
            SkiffSchema::optional(SkiffSchema::simple(WireType::Int64)).named("$range_index"),
        );
    }
    if options.other_columns.unwrap_or(!schema.strict) {
        children.push(SkiffSchema::simple(WireType::Yson32).named("$other_columns"));
    }
    Ok(SkiffSchema::tuple(children))
}

fn primitive_wire_type(primitive: PrimitiveType, options: &MappingOptions) -> WireType {
    use PrimitiveType as P;
    let wide = options.widen_integers;
    match primitive {
        P::Int8 if !wide => WireType::Int8,
        P::Int16 if !wide => WireType::Int16,
        P::Int32 if !wide => WireType::Int32,
        P::Int8 | P::Int16 | P::Int32 | P::Int64 => WireType::Int64,
        P::Uint8 if !wide => WireType::Uint8,
        P::Uint16 if !wide => WireType::Uint16,
        P::Uint32 if !wide => WireType::Uint32,
        P::Uint8 | P::Uint16 | P::Uint32 | P::Uint64 => WireType::Uint64,
        P::Date => WireType::Uint16,
        P::Datetime => WireType::Uint32,
        P::Timestamp => WireType::Uint64,
        P::Interval => WireType::Int64,
        P::Date32 => WireType::Int32,
        P::Datetime64 | P::Timestamp64 | P::Interval64 => WireType::Int64,
        P::Float | P::Double => WireType::Double,
        P::Bool => WireType::Boolean,
        P::String | P::Utf8 | P::Json | P::Uuid => WireType::String32,
        P::Yson => WireType::Yson32,
        P::Null | P::Void => WireType::Nothing,
    }
}

fn decimal_wire_type(precision: u8) -> WireType {
    match Type::decimal_byte_width(precision) {
        4 => WireType::Int32,
        8 => WireType::Int64,
        16 => WireType::Int128,
        _ => WireType::Int256,
    }
}

fn variant_wire_type(alternatives: usize) -> WireType {
    if alternatives < 256 {
        WireType::Variant8
    } else {
        WireType::Variant16
    }
}
