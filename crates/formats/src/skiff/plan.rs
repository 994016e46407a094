//! Compiled plans: a Skiff schema (and, when known, the column types) turned into the small
//! tree the readers and writers walk.
//!
//! Each node knows its wire type, how a value of it looks as a `Value` (its [`ValueShape`]), how
//! to interpret wide integers (decimal, uuid, raw), and its fixed byte size when it has one.
//! A table plan adds what the row readers need: which children are system fields, which are
//! data columns, and the offsets of the *fixed prefix* — the leading children whose sizes do
//! not depend on the data. Rows of a table whose children are all fixed-size are located and
//! read without looking at any byte but the booleans (which must be 0 or 1).

use std::sync::Arc;

use shapeshift_types::{PhysicalType, PrimitiveType, TableSchema, Type};

use super::error::SkiffError;
use super::schema::{SkiffFormat, SkiffSchema};
use super::wire_type::WireType;

/// How a node's bytes are read: the wire type with the interpretation folded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Nothing,
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Double,
    /// int128/uint128/int256/uint256; the value is bytes (see [`WideAs`]).
    Wide,
    String32,
    Yson32,
    Tuple,
    Variant8,
    Variant16,
    Repeated8,
    Repeated16,
}

/// What a wide integer (or a decimal held in a narrower one) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WideAs {
    /// The little-endian wire bytes themselves.
    Raw,
    /// YT's decimal bytes: big-endian two's complement of `width` bytes with the top bit flipped.
    Decimal { width: u8, precision: u8, scale: u8 },
    /// A uuid's 16 bytes (the uint128 holds them reversed).
    Uuid,
}

/// How the value of a node looks as a [`shapeshift_types::Value`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueShape {
    Scalar,
    /// `variant8<nothing; T>`: `Null` or the value (`Some(v)` when `T` is nullable).
    Optional {
        nullable_item: bool,
    },
    Variant,
    List,
    /// A repeated variant with several alternatives: a list of `Variant(tag, v)`.
    ListOfVariants,
    /// `repeated_variant<tuple<K; V>>` of a `dict` column.
    Dict,
    Tuple,
}

/// One compiled schema node.
#[derive(Clone, Debug)]
pub struct FieldPlan {
    pub(crate) wire: WireType,
    pub(crate) kind: Kind,
    pub(crate) shape: ValueShape,
    pub(crate) wide_as: WideAs,
    /// Byte size when it does not depend on the data.
    pub(crate) fixed_size: Option<u32>,
    /// Whether a reader can hand the value out as a `ValueRef` with no conversion.
    pub(crate) borrowable: bool,
    /// The column type says the bytes are text (`utf8`, `json`).
    pub(crate) text: bool,
    pub(crate) name: String,
    pub(crate) children: Vec<FieldPlan>,
}

impl FieldPlan {
    pub fn wire_type(&self) -> WireType {
        self.wire
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The child nodes (tuple members, variant alternatives, repeated items).
    pub fn children(&self) -> &[FieldPlan] {
        &self.children
    }

    /// How a value of this node looks as a `Value`.
    pub fn value_shape(&self) -> ValueShape {
        self.shape
    }

    /// Whether the column type marks the bytes as text (`utf8`, `json`).
    pub fn is_text(&self) -> bool {
        self.text
    }

    /// For a decimal column: `(precision, scale)`.
    pub fn decimal(&self) -> Option<(u8, u8)> {
        match self.wide_as {
            WideAs::Decimal {
                precision, scale, ..
            } => Some((precision, scale)),
            _ => None,
        }
    }

    /// Whether this wide-integer node holds a uuid (uint128, bytes reversed).
    pub fn is_uuid(&self) -> bool {
        self.wide_as == WideAs::Uuid
    }

    /// The fixed byte size of a value of this node, if it has one.
    pub fn fixed_size(&self) -> Option<usize> {
        self.fixed_size.map(|s| s as usize)
    }

    pub(crate) fn compile(
        schema: &SkiffSchema,
        ty: Option<&Type>,
        path: &str,
    ) -> Result<FieldPlan, SkiffError> {
        let ty = ty.map(Type::untagged);
        let wire = schema.wire_type;
        let mismatch = |expected: &str| {
            SkiffError::mapping(format!(
                "{path}: type {} cannot be read from wire type {wire}{expected}",
                ty.map(describe_type).unwrap_or_default()
            ))
        };
        let child_path = |index: usize, child: &SkiffSchema| {
            if child.name.is_empty() {
                format!("{path}/{index}")
            } else {
                format!("{path}/{}", child.name)
            }
        };
        let compile_children = |types: Option<Vec<&Type>>| -> Result<Vec<FieldPlan>, SkiffError> {
            schema
                .children
                .iter()
                .enumerate()
                .map(|(i, child)| {
                    let child_ty = types.as_ref().map(|t| t[i]);
                    FieldPlan::compile(child, child_ty, &child_path(i, child))
                })
                .collect()
        };

        let mut wide_as = WideAs::Raw;
        let (shape, children) = match ty {
            None => {
                let children = compile_children(None)?;
                let shape = infer_shape(wire, &children);
                (shape, children)
            }
            Some(Type::Optional(item)) => {
                let is_optional_wire = wire == WireType::Variant8
                    && schema.children.len() == 2
                    && schema.children[0].wire_type == WireType::Nothing;
                if !is_optional_wire {
                    return Err(mismatch(", expected variant8<nothing; T>"));
                }
                let children =
                    compile_children(Some(vec![&Type::Primitive(PrimitiveType::Null), &**item]))?;
                (
                    ValueShape::Optional {
                        nullable_item: item.is_nullable(),
                    },
                    children,
                )
            }
            Some(Type::List(item)) => {
                if !is_repeated(wire) || schema.children.len() != 1 {
                    return Err(mismatch(", expected repeated_variant8<T>"));
                }
                (ValueShape::List, compile_children(Some(vec![&**item]))?)
            }
            Some(Type::Dict { key, value }) => {
                let entry_ok = schema.children.len() == 1
                    && schema.children[0].wire_type == WireType::Tuple
                    && schema.children[0].children.len() == 2;
                if !is_repeated(wire) || !entry_ok {
                    return Err(mismatch(", expected repeated_variant8<tuple<K; V>>"));
                }
                let entry = Type::Tuple(vec![(**key).clone(), (**value).clone()]);
                (ValueShape::Dict, compile_children(Some(vec![&entry]))?)
            }
            Some(Type::Struct(members)) => {
                if wire != WireType::Tuple || schema.children.len() != members.len() {
                    return Err(mismatch(&format!(
                        ", expected tuple of {} children",
                        members.len()
                    )));
                }
                (
                    ValueShape::Tuple,
                    compile_children(Some(members.iter().map(|m| &m.ty).collect()))?,
                )
            }
            Some(Type::Tuple(elements)) => {
                if wire != WireType::Tuple || schema.children.len() != elements.len() {
                    return Err(mismatch(&format!(
                        ", expected tuple of {} children",
                        elements.len()
                    )));
                }
                (
                    ValueShape::Tuple,
                    compile_children(Some(elements.iter().collect()))?,
                )
            }
            Some(Type::VariantStruct(members)) => {
                if !is_variant(wire) || schema.children.len() != members.len() {
                    return Err(mismatch(&format!(
                        ", expected variant8/16 of {} children",
                        members.len()
                    )));
                }
                (
                    ValueShape::Variant,
                    compile_children(Some(members.iter().map(|m| &m.ty).collect()))?,
                )
            }
            Some(Type::VariantTuple(elements)) => {
                if !is_variant(wire) || schema.children.len() != elements.len() {
                    return Err(mismatch(&format!(
                        ", expected variant8/16 of {} children",
                        elements.len()
                    )));
                }
                (
                    ValueShape::Variant,
                    compile_children(Some(elements.iter().collect()))?,
                )
            }
            Some(Type::Decimal { precision, scale }) => {
                let width = Type::decimal_byte_width(*precision);
                let expected = match width {
                    4 => WireType::Int32,
                    8 => WireType::Int64,
                    16 => WireType::Int128,
                    _ => WireType::Int256,
                };
                if wire != expected {
                    return Err(mismatch(&format!(", expected {expected}")));
                }
                wide_as = WideAs::Decimal {
                    width: width as u8,
                    precision: *precision,
                    scale: *scale,
                };
                (ValueShape::Scalar, Vec::new())
            }
            Some(Type::Primitive(primitive)) => {
                let ok = match primitive.physical() {
                    PhysicalType::Int64 => matches!(
                        wire,
                        WireType::Int8 | WireType::Int16 | WireType::Int32 | WireType::Int64
                    ),
                    PhysicalType::Uint64 => matches!(
                        wire,
                        WireType::Uint8 | WireType::Uint16 | WireType::Uint32 | WireType::Uint64
                    ),
                    PhysicalType::Double => wire == WireType::Double,
                    PhysicalType::Bool => wire == WireType::Boolean,
                    PhysicalType::String => {
                        wire == WireType::String32
                            || (*primitive == PrimitiveType::Uuid && wire == WireType::Uint128)
                    }
                    PhysicalType::Any => wire == WireType::Yson32,
                    PhysicalType::Null => wire == WireType::Nothing,
                };
                if !ok {
                    return Err(mismatch(""));
                }
                if *primitive == PrimitiveType::Uuid && wire == WireType::Uint128 {
                    wide_as = WideAs::Uuid;
                }
                (ValueShape::Scalar, Vec::new())
            }
            Some(Type::Tagged { .. }) => unreachable!("untagged above"),
        };

        let kind = match wire {
            WireType::Nothing => Kind::Nothing,
            WireType::Boolean => Kind::Bool,
            WireType::Int8 => Kind::I8,
            WireType::Int16 => Kind::I16,
            WireType::Int32 => Kind::I32,
            WireType::Int64 => Kind::I64,
            WireType::Uint8 => Kind::U8,
            WireType::Uint16 => Kind::U16,
            WireType::Uint32 => Kind::U32,
            WireType::Uint64 => Kind::U64,
            WireType::Double => Kind::Double,
            WireType::Int128 | WireType::Uint128 | WireType::Int256 | WireType::Uint256 => {
                Kind::Wide
            }
            WireType::String32 => Kind::String32,
            WireType::Yson32 => Kind::Yson32,
            WireType::Tuple => Kind::Tuple,
            WireType::Variant8 => Kind::Variant8,
            WireType::Variant16 => Kind::Variant16,
            WireType::RepeatedVariant8 => Kind::Repeated8,
            WireType::RepeatedVariant16 => Kind::Repeated16,
        };
        // A decimal held in int32/int64 is bytes too.
        let kind = if matches!(wide_as, WideAs::Decimal { .. }) {
            Kind::Wide
        } else {
            kind
        };

        let fixed_size = match wire {
            WireType::Tuple => children
                .iter()
                .try_fold(0u32, |acc, c| c.fixed_size.and_then(|s| acc.checked_add(s))),
            other => other.fixed_width().map(|w| w as u32),
        };
        let borrowable = match shape {
            ValueShape::Scalar => kind != Kind::Wide,
            ValueShape::Optional { nullable_item } => !nullable_item && children[1].borrowable,
            _ => false,
        };
        let text = matches!(
            ty,
            Some(Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json))
        );
        Ok(FieldPlan {
            wire,
            kind,
            shape,
            wide_as,
            fixed_size,
            borrowable,
            text,
            name: schema.name.clone(),
            children,
        })
    }
}

fn is_repeated(wire: WireType) -> bool {
    matches!(
        wire,
        WireType::RepeatedVariant8 | WireType::RepeatedVariant16
    )
}

fn is_variant(wire: WireType) -> bool {
    matches!(wire, WireType::Variant8 | WireType::Variant16)
}

fn describe_type(ty: &Type) -> String {
    match ty {
        Type::Primitive(p) => p.name().to_owned(),
        Type::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        Type::Optional(_) => "optional".to_owned(),
        Type::List(_) => "list".to_owned(),
        Type::Struct(_) => "struct".to_owned(),
        Type::Tuple(_) => "tuple".to_owned(),
        Type::VariantStruct(_) | Type::VariantTuple(_) => "variant".to_owned(),
        Type::Dict { .. } => "dict".to_owned(),
        Type::Tagged { item, .. } => describe_type(item),
    }
}

/// The value shape of a node when no column type is known.
fn infer_shape(wire: WireType, children: &[FieldPlan]) -> ValueShape {
    match wire {
        WireType::Variant8 if children.len() == 2 && children[0].wire == WireType::Nothing => {
            let item = &children[1];
            ValueShape::Optional {
                nullable_item: matches!(item.shape, ValueShape::Optional { .. })
                    || item.wire == WireType::Nothing,
            }
        }
        WireType::Variant8 | WireType::Variant16 => ValueShape::Variant,
        WireType::RepeatedVariant8 | WireType::RepeatedVariant16 => {
            if children.len() == 1 {
                ValueShape::List
            } else {
                ValueShape::ListOfVariants
            }
        }
        WireType::Tuple => ValueShape::Tuple,
        _ => ValueShape::Scalar,
    }
}

/// Where a table's system fields sit among its schema's children.
#[derive(Clone, Debug, Default)]
pub(crate) struct SystemSlots {
    pub key_switch: Option<usize>,
    pub row_index: Option<usize>,
    /// Whether `$row_index` has the third alternative (tag 2 = no row index).
    pub row_index_has_missing: bool,
    pub range_index: Option<usize>,
    pub sparse: Option<usize>,
    pub other_columns: Option<usize>,
}

/// The compiled plan of one table: its schema's children, data columns and system fields.
#[derive(Clone, Debug)]
pub struct TablePlan {
    pub(crate) schema: SkiffSchema,
    /// One plan per child of the table's tuple, system fields included.
    pub(crate) fields: Vec<FieldPlan>,
    /// Child index of each data column, in order.
    pub(crate) columns: Vec<usize>,
    pub(crate) system: SystemSlots,
    /// Number of leading children with a fixed size.
    pub(crate) fixed_prefix: usize,
    /// Offsets from the row start (2 bytes of table index included) of the first
    /// `fixed_prefix + 1` children; the last is where the variable part starts.
    pub(crate) prefix_offsets: Vec<u32>,
    /// Row-relative offsets of the boolean bytes inside the fixed prefix (checked per row).
    pub(crate) prefix_booleans: Vec<u32>,
    /// Row size when every child is fixed-size.
    pub(crate) fixed_row_size: Option<u32>,
    /// Per data column, the compact form the hot loops read: 8 bytes instead of a whole
    /// [`FieldPlan`], so walking a 1000-column row touches 8 KB of plan, not 100 KB.
    pub(crate) fast: Vec<FastColumn>,
}

/// A data column as the fast paths see it: a simple non-optional scalar in the fixed prefix
/// (read at `offset` by `kind`), or not (`direct == false`: take the general path).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastColumn {
    pub offset: u32,
    pub kind: Kind,
    pub direct: bool,
}

impl TablePlan {
    fn compile(
        schema: &SkiffSchema,
        types: Option<&TableSchema>,
        table_index: usize,
    ) -> Result<TablePlan, SkiffError> {
        if schema.wire_type != WireType::Tuple {
            return Err(SkiffError::schema(format!(
                "table {table_index}: a table schema must be a tuple, got {}",
                schema.wire_type
            )));
        }
        let mut system = SystemSlots::default();
        let mut columns = Vec::new();
        let mut fields = Vec::with_capacity(schema.children.len());
        let count = schema.children.len();
        let mut seen_names: Vec<&str> = Vec::new();
        for (index, child) in schema.children.iter().enumerate() {
            let path = format!("table {table_index}, column '{}'", child.name);
            if !child.name.is_empty() {
                if seen_names.contains(&child.name.as_str()) {
                    return Err(SkiffError::schema(format!("{path}: duplicate column name")));
                }
                seen_names.push(&child.name);
            }
            let bad = |expected: &str| {
                SkiffError::schema(format!("{path}: system field must be {expected}"))
            };
            let is_int64_optional = |c: &SkiffSchema, alternatives: usize| {
                c.wire_type == WireType::Variant8
                    && c.children.len() == alternatives
                    && c.children[0].wire_type == WireType::Nothing
                    && c.children[1].wire_type == WireType::Int64
                    && c.children
                        .iter()
                        .skip(2)
                        .all(|x| x.wire_type == WireType::Nothing)
            };
            let ty = match child.name.as_str() {
                "$key_switch" => {
                    if child.wire_type != WireType::Boolean {
                        return Err(bad("boolean"));
                    }
                    system.key_switch = Some(index);
                    None
                }
                "$row_index" => {
                    if !is_int64_optional(child, 2) && !is_int64_optional(child, 3) {
                        return Err(bad(
                            "variant8<nothing; int64> or variant8<nothing; int64; nothing>",
                        ));
                    }
                    system.row_index = Some(index);
                    system.row_index_has_missing = child.children.len() == 3;
                    None
                }
                "$range_index" => {
                    if !is_int64_optional(child, 2) {
                        return Err(bad("variant8<nothing; int64>"));
                    }
                    system.range_index = Some(index);
                    None
                }
                "$other_columns" => {
                    if child.wire_type != WireType::Yson32 {
                        return Err(bad("yson32"));
                    }
                    if index + 1 != count {
                        return Err(SkiffError::schema(format!(
                            "{path}: $other_columns must be the last child"
                        )));
                    }
                    system.other_columns = Some(index);
                    None
                }
                "$sparse_columns" => {
                    if child.wire_type != WireType::RepeatedVariant16 {
                        return Err(bad("repeated_variant16"));
                    }
                    let last_data = if system_tail_is_other(schema) {
                        count - 2
                    } else {
                        count - 1
                    };
                    if index != last_data {
                        return Err(SkiffError::schema(format!(
                            "{path}: $sparse_columns must be last, or just before $other_columns"
                        )));
                    }
                    if let Some(unnamed) = child.children.iter().position(|c| c.name.is_empty()) {
                        return Err(SkiffError::schema(format!(
                            "{path}: sparse column {unnamed} has no name"
                        )));
                    }
                    system.sparse = Some(index);
                    None
                }
                name => {
                    if name.starts_with('$') {
                        return Err(SkiffError::schema(format!("{path}: unknown system field")));
                    }
                    columns.push(index);
                    types
                        .and_then(|t| t.columns.iter().find(|c| c.name == name))
                        .map(|c| &c.ty)
                }
            };
            let plan = if child.name == "$sparse_columns" {
                compile_sparse(child, types, &path)?
            } else {
                FieldPlan::compile(child, ty, &path)?
            };
            fields.push(plan);
        }
        if let Some(types) = types {
            for column in &types.columns {
                let present = schema.children.iter().any(|c| c.name == column.name)
                    || system.sparse.is_some_and(|s| {
                        schema.children[s]
                            .children
                            .iter()
                            .any(|c| c.name == column.name)
                    });
                if !present && !column.ty.is_nullable() {
                    return Err(SkiffError::mapping(format!(
                        "table {table_index}: required column '{}' has no field in the skiff schema",
                        column.name
                    )));
                }
            }
        }

        let mut fixed_prefix = 0;
        let mut prefix_offsets = vec![2u32];
        let mut prefix_booleans = Vec::new();
        let mut offset = 2u32;
        for field in &fields {
            let Some(size) = field.fixed_size else { break };
            collect_booleans(field, offset, &mut prefix_booleans);
            offset = offset
                .checked_add(size)
                .ok_or_else(|| SkiffError::schema("fixed row size overflows 4 GiB"))?;
            prefix_offsets.push(offset);
            fixed_prefix += 1;
        }
        let fixed_row_size = (fixed_prefix == fields.len()).then_some(offset);
        let fast = columns
            .iter()
            .map(|&child| {
                let field = &fields[child];
                let direct = child < fixed_prefix
                    && field.borrowable
                    && field.shape == ValueShape::Scalar
                    && !matches!(field.kind, Kind::String32 | Kind::Yson32);
                FastColumn {
                    offset: prefix_offsets.get(child).copied().unwrap_or(0),
                    kind: field.kind,
                    direct,
                }
            })
            .collect();
        Ok(TablePlan {
            schema: schema.clone(),
            fields,
            columns,
            system,
            fixed_prefix,
            prefix_offsets,
            prefix_booleans,
            fixed_row_size,
            fast,
        })
    }

    /// The table's Skiff schema.
    pub fn schema(&self) -> &SkiffSchema {
        &self.schema
    }

    /// Number of data columns (children that are not system fields).
    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Name of data column `column`.
    ///
    /// # Panics
    /// When `column >= column_count()`, like slice indexing.
    pub fn column_name(&self, column: usize) -> &str {
        &self.fields[self.columns[column]].name
    }

    /// Index of the data column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|&c| self.fields[c].name == name)
    }

    /// The compiled plan of data column `column`.
    ///
    /// # Panics
    /// When `column >= column_count()`, like slice indexing.
    pub fn column_plan(&self, column: usize) -> &FieldPlan {
        &self.fields[self.columns[column]]
    }

    /// Names of the sparse columns, in tag order (empty without `$sparse_columns`).
    pub fn sparse_column_names(&self) -> Vec<&str> {
        match self.system.sparse {
            Some(s) => self.fields[s]
                .children
                .iter()
                .map(|c| c.name.as_str())
                .collect(),
            None => Vec::new(),
        }
    }

    /// Plans of the sparse columns, in tag order (empty without `$sparse_columns`).
    pub fn sparse_column_plans(&self) -> &[FieldPlan] {
        match self.system.sparse {
            Some(s) => &self.fields[s].children,
            None => &[],
        }
    }

    pub fn has_key_switch(&self) -> bool {
        self.system.key_switch.is_some()
    }

    pub fn has_row_index(&self) -> bool {
        self.system.row_index.is_some()
    }

    pub fn has_range_index(&self) -> bool {
        self.system.range_index.is_some()
    }

    pub fn has_other_columns(&self) -> bool {
        self.system.other_columns.is_some()
    }

    /// The byte size of every row of this table (2 bytes of table index included), when no
    /// child has a data-dependent size.
    pub fn fixed_row_size(&self) -> Option<usize> {
        self.fixed_row_size.map(|s| s as usize)
    }

    /// The row-relative byte offset of data column `column` when it lies in the fixed prefix.
    pub fn fixed_column_offset(&self, column: usize) -> Option<usize> {
        let child = *self.columns.get(column)?;
        (child < self.fixed_prefix).then(|| self.prefix_offsets[child] as usize)
    }
}

fn system_tail_is_other(schema: &SkiffSchema) -> bool {
    schema
        .children
        .last()
        .is_some_and(|c| c.name == "$other_columns")
}

fn compile_sparse(
    schema: &SkiffSchema,
    types: Option<&TableSchema>,
    path: &str,
) -> Result<FieldPlan, SkiffError> {
    let children = schema
        .children
        .iter()
        .map(|child| {
            let ty = types
                .and_then(|t| t.columns.iter().find(|c| c.name == child.name))
                .map(|c| c.ty.untagged());
            // A sparse column is present exactly when it is not null: its field holds the
            // value of the optional's item.
            let item_ty = match ty {
                Some(Type::Optional(item)) => Some(&**item),
                other => other,
            };
            FieldPlan::compile(child, item_ty, &format!("{path}/{}", child.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FieldPlan {
        wire: WireType::RepeatedVariant16,
        kind: Kind::Repeated16,
        shape: ValueShape::ListOfVariants,
        wide_as: WideAs::Raw,
        fixed_size: None,
        borrowable: false,
        text: false,
        name: schema.name.clone(),
        children,
    })
}

fn collect_booleans(field: &FieldPlan, offset: u32, out: &mut Vec<u32>) {
    match field.kind {
        Kind::Bool => out.push(offset),
        Kind::Tuple => {
            let mut at = offset;
            for child in &field.children {
                collect_booleans(child, at, out);
                at += child.fixed_size.unwrap_or(0);
            }
        }
        _ => {}
    }
}

/// A compiled Skiff format: one [`TablePlan`] per table. Cheap to clone (shared).
///
/// This is the entry point of the Skiff module: build it once per format, then read with
/// [`Codec::reader`] / [`Codec::stream_reader`] and write with [`Codec::writer`].
#[derive(Clone, Debug)]
pub struct Codec {
    pub(crate) tables: Arc<[TablePlan]>,
}

impl Codec {
    /// Compiles Skiff schemas with no column types: values take the shape the wire types
    /// suggest (`variant8<nothing; T>` is an optional, `repeated_variant8<T>` a list, ...).
    ///
    /// # Errors
    /// A schema error when a table schema is not a tuple, misplaces a system field, or nests
    /// too deep.
    pub fn new(format: &SkiffFormat) -> Result<Codec, SkiffError> {
        Codec::compile(format, None)
    }

    /// Compiles Skiff schemas paired with the tables' schemas (matched by column name), so
    /// values take their columns' shapes: dicts, decimals, uuids, nullable optionals.
    ///
    /// # Errors
    /// As [`Codec::new`], plus a mapping error when a column's type does not fit its wire type
    /// or a required column has no field.
    pub fn with_table_schemas(
        format: &SkiffFormat,
        schemas: &[TableSchema],
    ) -> Result<Codec, SkiffError> {
        if schemas.len() != format.tables.len() {
            return Err(SkiffError::mapping(format!(
                "{} table schemas given for {} skiff table schemas",
                schemas.len(),
                format.tables.len()
            )));
        }
        Codec::compile(format, Some(schemas))
    }

    /// The format YT would use for these table schemas (see [`super::skiff_schema_for_table`]),
    /// compiled with the column types.
    ///
    /// # Errors
    /// A mapping error for a column that cannot be mapped.
    pub fn for_table_schemas(
        schemas: &[TableSchema],
        options: &super::MappingOptions,
    ) -> Result<Codec, SkiffError> {
        let tables = schemas
            .iter()
            .map(|s| super::skiff_schema_for_table(s, options))
            .collect::<Result<Vec<_>, _>>()?;
        Codec::with_table_schemas(&SkiffFormat::new(tables), schemas)
    }

    fn compile(format: &SkiffFormat, schemas: Option<&[TableSchema]>) -> Result<Codec, SkiffError> {
        if format.tables.is_empty() {
            return Err(SkiffError::schema(
                "a skiff format needs at least one table schema",
            ));
        }
        if format.tables.len() > usize::from(u16::MAX) + 1 {
            return Err(SkiffError::schema(
                "more table schemas than a u16 table index can address",
            ));
        }
        let tables = format
            .tables
            .iter()
            .enumerate()
            .map(|(index, schema)| {
                schema.validate()?;
                TablePlan::compile(schema, schemas.map(|s| &s[index]), index)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Codec {
            tables: tables.into(),
        })
    }

    /// The plan of table `table_index`.
    pub fn table(&self, table_index: usize) -> Option<&TablePlan> {
        self.tables.get(table_index)
    }

    pub fn table_count(&self) -> usize {
        self.tables.len()
    }

    /// The format these plans were compiled from.
    pub fn format(&self) -> SkiffFormat {
        SkiffFormat::new(self.tables.iter().map(|t| t.schema.clone()).collect())
    }
}
