//! Table schemas: named, typed columns with an optional sort order, and the strict flag.

use crate::Type;

/// The sort order of a key column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortOrder {
    Ascending,
    Descending,
}

impl SortOrder {
    pub fn name(self) -> &'static str {
        match self {
            SortOrder::Ascending => "ascending",
            SortOrder::Descending => "descending",
        }
    }

    pub fn from_name(name: &str) -> Option<SortOrder> {
        match name {
            "ascending" => Some(SortOrder::Ascending),
            "descending" => Some(SortOrder::Descending),
            _ => None,
        }
    }
}

/// One column of a table schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnSchema {
    pub name: String,
    pub ty: Type,
    pub sort_order: Option<SortOrder>,
}

impl ColumnSchema {
    pub fn new(name: impl Into<String>, ty: Type) -> ColumnSchema {
        ColumnSchema {
            name: name.into(),
            ty,
            sort_order: None,
        }
    }

    pub fn sorted(mut self, order: SortOrder) -> ColumnSchema {
        self.sort_order = Some(order);
        self
    }
}

/// A table schema. A strict schema admits only its columns; a non-strict one admits others,
/// which formats carry untyped (Skiff's `$other_columns`, for instance).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableSchema {
    pub columns: Vec<ColumnSchema>,
    pub strict: bool,
    pub unique_keys: bool,
}

impl TableSchema {
    /// A strict schema with the given columns and no unique-keys flag.
    pub fn new(columns: Vec<ColumnSchema>) -> TableSchema {
        TableSchema {
            columns,
            strict: true,
            unique_keys: false,
        }
    }

    /// The index of the column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// A row as one value: the struct whose members are the columns, in order.
    pub fn row_type(&self) -> Type {
        Type::Struct(
            self.columns
                .iter()
                .map(|c| crate::Member {
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                })
                .collect(),
        )
    }
}
