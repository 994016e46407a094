//! Composite fields transcoded from the wire straight to binary YSON (the row convention of
//! the common interface), checked on the way, with no owned value in between.
//!
//! A [`Shape`] is a column type compiled for this: the protobuf encoding of `plan.rs` plus
//! what YSON needs (member names, variant names) and the scalar checks of `check_value`.
//! The output is byte for byte what `yson_binary::value` writes for the value the plan's
//! decoder would build (tests/protobuf_roundtrip.rs reads every random schema back), and
//! the merge rules are the decoder's:
//! - a list (repeated field) is every occurrence in order, packed runs included; a dict is
//!   every entry occurrence;
//! - everything else takes its last occurrence (a scalar, an optional, a message, a variant:
//!   of a variant the last alternative set in its last message);
//! - a member absent from its message is the member type's default (precomputed; a default
//!   that is not a value of the type, such as an empty uuid, is an error).
//!
//! Occurrences are found by scanning the enclosing message once per member (small
//! messages; no scratch allocation), so a field's bytes are skipped by every scan but
//! decoded once. Every read is bounds-checked by [`Cursor`]; recursion follows the schema,
//! not the input.

use shapeshift_types::{check_value, PrimitiveType, Type, Value};

use super::plan::{expect_wire, Plan};
use crate::protobuf::wire::{self, Cursor, WireError};
use crate::table::values::{signed_bounds, unsigned_bound};
use crate::table::yson_binary;
use crate::yson;

/// What a scalar admits, checked as it is decoded.
#[derive(Clone, Debug)]
enum Scalar {
    Signed {
        lo: i64,
        hi: i64,
    },
    Unsigned {
        hi: u64,
    },
    Float,
    Double,
    Bool,
    Bytes,
    Utf8,
    /// Bytes checked by `check_value` against the type (uuid, decimals).
    Checked(Type),
}

impl Scalar {
    fn wire_type(&self) -> u8 {
        match self {
            Scalar::Signed { .. } | Scalar::Unsigned { .. } | Scalar::Bool => wire::VARINT,
            Scalar::Float => wire::FIXED32,
            Scalar::Double => wire::FIXED64,
            Scalar::Bytes | Scalar::Utf8 | Scalar::Checked(_) => wire::LEN,
        }
    }
}

/// A column type compiled for transcoding (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    kind: Kind,
    /// Binary YSON of the default value, or why the default is not a value of the type.
    default: Result<Box<[u8]>, String>,
}

#[derive(Clone, Debug)]
enum Kind {
    Scalar(Scalar),
    Yson,
    Null,
    Optional {
        item: Box<Shape>,
        item_nullable: bool,
        wrapped: bool,
    },
    List {
        item: Box<Shape>,
        wrapped: bool,
    },
    /// A struct (`Some` names: a YSON map) or a tuple (a YSON list).
    Message {
        members: Vec<Shape>,
        names: Option<Vec<Vec<u8>>>,
    },
    /// Alternatives with their wrapped flags; names for a variant over a struct.
    Variant {
        alternatives: Vec<(Shape, bool)>,
        names: Option<Vec<Vec<u8>>>,
    },
    /// The entry message's key and value (`[key; value]` in YSON, as a tuple's members).
    Dict {
        entry: Vec<Shape>,
    },
}

impl Shape {
    pub(crate) fn compile(ty: &Type) -> Shape {
        let plan = Plan::compile(ty);
        let default_value = plan.default_value();
        let mut bytes = Vec::new();
        let default = check_value(&default_value, ty)
            .map_err(|e| e.to_string())
            .and_then(|()| yson_binary::value(&mut bytes, &default_value, ty))
            .map(|()| bytes.into_boxed_slice());
        Shape {
            kind: Shape::kind(ty, plan.unchecked()),
            default,
        }
    }

    fn kind(ty: &Type, plan: &Plan) -> Kind {
        match (ty.untagged(), plan) {
            (_, Plan::Yson) => Kind::Yson,
            (_, Plan::Null) => Kind::Null,
            (_, Plan::Signed) => {
                let (lo, hi) = signed_bounds(ty);
                Kind::Scalar(Scalar::Signed { lo, hi })
            }
            (_, Plan::Unsigned) => Kind::Scalar(Scalar::Unsigned {
                hi: unsigned_bound(ty),
            }),
            (_, Plan::Float) => Kind::Scalar(Scalar::Float),
            (_, Plan::Double) => Kind::Scalar(Scalar::Double),
            (_, Plan::Bool) => Kind::Scalar(Scalar::Bool),
            (Type::Primitive(PrimitiveType::String), Plan::Bytes) => Kind::Scalar(Scalar::Bytes),
            (Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json), Plan::Bytes) => {
                Kind::Scalar(Scalar::Utf8)
            }
            (other, Plan::Bytes) => Kind::Scalar(Scalar::Checked(other.clone())),
            (Type::Optional(item), Plan::Optional { .. }) => {
                let item_shape = Shape::compile(item);
                Kind::Optional {
                    wrapped: item_shape.may_be_empty(),
                    item: Box::new(item_shape),
                    item_nullable: item.is_nullable(),
                }
            }
            (Type::List(item), _) => {
                let item_shape = Shape::compile(item);
                Kind::List {
                    wrapped: item_shape.may_be_empty(),
                    item: Box::new(item_shape),
                }
            }
            (Type::Struct(members), _) => Kind::Message {
                members: members.iter().map(|m| Shape::compile(&m.ty)).collect(),
                names: Some(members.iter().map(|m| m.name.as_bytes().to_vec()).collect()),
            },
            (Type::Tuple(elements), _) => Kind::Message {
                members: elements.iter().map(Shape::compile).collect(),
                names: None,
            },
            (Type::VariantStruct(members), _) => Kind::Variant {
                alternatives: members
                    .iter()
                    .map(|m| {
                        let shape = Shape::compile(&m.ty);
                        let wrapped = shape.may_be_empty();
                        (shape, wrapped)
                    })
                    .collect(),
                names: Some(members.iter().map(|m| m.name.as_bytes().to_vec()).collect()),
            },
            (Type::VariantTuple(elements), _) => Kind::Variant {
                alternatives: elements
                    .iter()
                    .map(|t| {
                        let shape = Shape::compile(t);
                        let wrapped = shape.may_be_empty();
                        (shape, wrapped)
                    })
                    .collect(),
                names: None,
            },
            (Type::Dict { key, value }, _) => Kind::Dict {
                entry: vec![Shape::compile(key), Shape::compile(value)],
            },
            // Tags are stripped by `untagged`; every other pairing is covered by the plan.
            (other, plan) => unreachable!("type {other:?} compiled to {plan:?}"),
        }
    }

    /// As `Plan::may_be_empty`: a value of this type may encode to no bytes.
    fn may_be_empty(&self) -> bool {
        matches!(
            self.kind,
            Kind::Null | Kind::Optional { .. } | Kind::List { .. } | Kind::Dict { .. }
        )
    }

    /// Writes the value of field `field` of `body` (all its occurrences, merged as the
    /// module docs say), or the default when it has none.
    pub(crate) fn emit_field(
        &self,
        body: &Cursor<'_>,
        field: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        let mut occurrences = Occurrences::new(body, field);
        // The first occurrence decides whether there is one at all.
        match occurrences.next_occurrence()? {
            None => self.emit_default(body, out),
            Some(first) => self.emit(first, &mut occurrences, out),
        }
    }

    /// Writes the value of the run of field `field` whose first occurrence's value starts
    /// at `value` (the common case: a field's occurrences are written together); returns
    /// where the run ends. The caller must use [`Shape::emit_field`] instead when the field
    /// occurs again after the run.
    pub(crate) fn emit_run(
        &self,
        value: &Cursor<'_>,
        wire_type: u8,
        field: u32,
        out: &mut Vec<u8>,
    ) -> Result<usize, WireError> {
        let first = Occurrence {
            wire_type,
            value: Cursor {
                bytes: value.bytes,
                pos: value.pos,
                base: value.base,
            },
        };
        let mut run = Occurrences::run_after(value, wire_type, field)?;
        self.emit(first, &mut run, out)?;
        Ok(run.scan.pos)
    }

    /// A message's members when each occurs in one run and the runs come in member order
    /// (what every writer does): one pass over the body. `Ok(false)` (or an error) sends
    /// the caller to the general path, which decides (the last occurrence of a member wins,
    /// so an error here may be overruled there).
    fn emit_members_in_order(
        members: &[Shape],
        names: &Option<Vec<Vec<u8>>>,
        body: &Cursor<'_>,
        out: &mut Vec<u8>,
    ) -> Result<bool, WireError> {
        let mut scan = Cursor::new(body.bytes, body.base);
        let mut next = 0usize;
        let name = |out: &mut Vec<u8>, i: usize| {
            if let Some(names) = names {
                yson_binary::string(out, &names[i]);
                out.push(b'=');
            }
        };
        while !scan.at_end() {
            let (field, wire_type) = scan.tag()?;
            let index = field as usize - 1;
            if index >= members.len() {
                scan.skip(wire_type)?;
                continue;
            }
            if index < next {
                return Ok(false);
            }
            for (gap, member) in members.iter().enumerate().take(index).skip(next) {
                name(out, gap);
                member.emit_default(body, out)?;
                out.push(b';');
            }
            name(out, index);
            scan.pos = members[index].emit_run(&scan, wire_type, field, out)?;
            out.push(b';');
            next = index + 1;
        }
        for (gap, member) in members.iter().enumerate().skip(next) {
            name(out, gap);
            member.emit_default(body, out)?;
            out.push(b';');
        }
        Ok(true)
    }

    fn emit_default(&self, at: &Cursor<'_>, out: &mut Vec<u8>) -> Result<(), WireError> {
        match &self.default {
            Ok(bytes) => {
                out.extend_from_slice(bytes);
                Ok(())
            }
            Err(e) => Err(WireError {
                offset: at.base,
                message: format!("missing field: {e}"),
            }),
        }
    }

    /// Writes the value of occurrences `first` and then the rest of `more`.
    fn emit(
        &self,
        first: Occurrence<'_>,
        more: &mut Occurrences<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        match &self.kind {
            Kind::List { item, wrapped } => {
                out.push(b'[');
                let mut occurrence = Some(first);
                while let Some(current) = occurrence {
                    item.emit_element(current, *wrapped, out)?;
                    occurrence = more.next_occurrence()?;
                }
                out.push(b']');
            }
            Kind::Dict { entry: shapes } => {
                out.push(b'[');
                let mut occurrence = Some(first);
                while let Some(mut current) = occurrence {
                    expect_wire(&current.value, current.wire_type, wire::LEN)?;
                    let entry = current.value.len_delimited()?;
                    out.push(b'[');
                    let start = out.len();
                    if !matches!(
                        Shape::emit_members_in_order(shapes, &None, &entry, out),
                        Ok(true)
                    ) {
                        out.truncate(start);
                        shapes[0].emit_field(&entry, 1, out)?;
                        out.push(b';');
                        shapes[1].emit_field(&entry, 2, out)?;
                        out.push(b';');
                    }
                    out.extend_from_slice(b"];");
                    occurrence = more.next_occurrence()?;
                }
                out.push(b']');
            }
            _ => {
                // Last occurrence wins; the earlier ones are checked for their wire type.
                let mut last = first;
                while let Some(next) = more.next_occurrence()? {
                    self.check_wire(&last)?;
                    last = next;
                }
                self.emit_one(last, out)?;
            }
        }
        Ok(())
    }

    fn check_wire(&self, occurrence: &Occurrence<'_>) -> Result<(), WireError> {
        let expected = match &self.kind {
            Kind::Scalar(scalar) => scalar.wire_type(),
            Kind::Optional { .. } => return Ok(()),
            _ => wire::LEN,
        };
        expect_wire(&occurrence.value, occurrence.wire_type, expected)
    }

    /// One element of a list: a packed run, a wrapper message, or the item itself.
    fn emit_element(
        &self,
        mut occurrence: Occurrence<'_>,
        wrapped: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        if wrapped {
            expect_wire(&occurrence.value, occurrence.wire_type, wire::LEN)?;
            let body = occurrence.value.len_delimited()?;
            self.emit_field(&body, 1, out)?;
            out.push(b';');
            return Ok(());
        }
        if let Kind::Scalar(scalar) = &self.kind {
            if occurrence.wire_type == wire::LEN && scalar.wire_type() != wire::LEN {
                let mut run = occurrence.value.len_delimited()?;
                while !run.at_end() {
                    emit_scalar(scalar, &mut run, out)?;
                    out.push(b';');
                }
                return Ok(());
            }
        }
        self.emit_one(occurrence, out)?;
        out.push(b';');
        Ok(())
    }

    /// Writes the value of one occurrence (for the kinds where the last one wins).
    fn emit_one(&self, mut occurrence: Occurrence<'_>, out: &mut Vec<u8>) -> Result<(), WireError> {
        let cursor = &mut occurrence.value;
        match &self.kind {
            Kind::Scalar(scalar) => {
                expect_wire(cursor, occurrence.wire_type, scalar.wire_type())?;
                emit_scalar(scalar, cursor, out)?;
            }
            Kind::Yson => {
                expect_wire(cursor, occurrence.wire_type, wire::LEN)?;
                let body = cursor.len_delimited()?;
                let node = yson::from_slice(body.bytes).map_err(|e| WireError {
                    offset: body.base + e.offset(),
                    message: format!("yson field: {}", e.message()),
                })?;
                yson_binary::node(out, &node);
            }
            Kind::Null => return Err(cursor.error("a field for a null-typed value")),
            Kind::Optional {
                item,
                item_nullable,
                wrapped,
            } => {
                if *item_nullable {
                    out.push(b'[');
                }
                if *wrapped {
                    expect_wire(cursor, occurrence.wire_type, wire::LEN)?;
                    let body = cursor.len_delimited()?;
                    item.emit_field(&body, 1, out)?;
                } else {
                    item.emit_one(occurrence, out)?;
                }
                if *item_nullable {
                    out.extend_from_slice(b";]");
                }
            }
            Kind::Message { members, names } => {
                expect_wire(cursor, occurrence.wire_type, wire::LEN)?;
                let body = cursor.len_delimited()?;
                out.push(if names.is_some() { b'{' } else { b'[' });
                let start = out.len();
                if let Ok(true) = Shape::emit_members_in_order(members, names, &body, out) {
                    out.push(if names.is_some() { b'}' } else { b']' });
                    return Ok(());
                }
                out.truncate(start);
                for (i, member) in members.iter().enumerate() {
                    if let Some(names) = names {
                        yson_binary::string(out, &names[i]);
                        out.push(b'=');
                    }
                    member.emit_field(&body, i as u32 + 1, out)?;
                    out.push(b';');
                }
                out.push(if names.is_some() { b'}' } else { b']' });
            }
            Kind::Variant {
                alternatives,
                names,
            } => {
                expect_wire(cursor, occurrence.wire_type, wire::LEN)?;
                let body = cursor.len_delimited()?;
                // The last field that names an alternative wins.
                let mut scan = Cursor::new(body.bytes, body.base);
                let mut chosen = None;
                while !scan.at_end() {
                    let (field, wire_type) = scan.tag()?;
                    let value = Cursor {
                        bytes: scan.bytes,
                        pos: scan.pos,
                        base: scan.base,
                    };
                    scan.skip(wire_type)?;
                    if (field as usize) <= alternatives.len() {
                        chosen = Some((field, Occurrence { wire_type, value }));
                    }
                }
                let Some((field, chosen)) = chosen else {
                    return Err(WireError {
                        offset: body.base,
                        message: "variant message sets none of its alternatives".into(),
                    });
                };
                let index = field as usize - 1;
                let (alternative, wrapped) = &alternatives[index];
                out.push(b'[');
                match names {
                    Some(names) => yson_binary::string(out, &names[index]),
                    None => yson_binary::int64(out, index as i64),
                }
                out.push(b';');
                if *wrapped {
                    let mut value = chosen.value;
                    expect_wire(&value, chosen.wire_type, wire::LEN)?;
                    let inner = value.len_delimited()?;
                    alternative.emit_field(&inner, 1, out)?;
                } else {
                    alternative.emit_one(chosen, out)?;
                }
                out.extend_from_slice(b";]");
            }
            Kind::List { .. } | Kind::Dict { .. } => {
                // Only reached for an optional's item, which is never a list or dict
                // unwrapped (they may be empty, so they are wrapped).
                let mut none = Occurrences::empty(cursor);
                self.emit(occurrence, &mut none, out)?;
            }
        }
        Ok(())
    }
}

/// Decodes one scalar at `cursor`, checks it, writes its YSON.
#[inline]
fn emit_scalar(
    scalar: &Scalar,
    cursor: &mut Cursor<'_>,
    out: &mut Vec<u8>,
) -> Result<(), WireError> {
    let start = cursor.pos;
    let refused = |cursor: &mut Cursor<'_>, what: String| {
        cursor.pos = start;
        Err(cursor.error(what))
    };
    match scalar {
        Scalar::Signed { lo, hi } => {
            let v = cursor.varint()? as i64;
            if v < *lo || v > *hi {
                return refused(cursor, format!("{v} is out of range ({lo}..={hi})"));
            }
            yson_binary::int64(out, v);
        }
        Scalar::Unsigned { hi } => {
            let v = cursor.varint()?;
            if v > *hi {
                return refused(cursor, format!("{v} is out of range (0..={hi})"));
            }
            yson_binary::uint64(out, v);
        }
        Scalar::Float => {
            let v = f64::from(f32::from_bits(cursor.fixed32()?));
            yson_binary::double(out, v);
        }
        Scalar::Double => yson_binary::double(out, f64::from_bits(cursor.fixed64()?)),
        Scalar::Bool => yson_binary::boolean(out, cursor.varint()? != 0),
        Scalar::Bytes => yson_binary::string(out, cursor.len_delimited()?.bytes),
        Scalar::Utf8 => {
            let bytes = cursor.len_delimited()?.bytes;
            if crate::utf8::text(bytes).is_err() {
                return refused(cursor, "invalid UTF-8 in a utf8 value".into());
            }
            yson_binary::string(out, bytes);
        }
        Scalar::Checked(ty) => {
            let bytes = cursor.len_delimited()?.bytes;
            if let Err(e) = check_value(&Value::String(bytes.to_vec()), ty) {
                return refused(cursor, e.to_string());
            }
            yson_binary::string(out, bytes);
        }
    }
    Ok(())
}

/// One occurrence of a field: its wire type and a cursor at its value.
struct Occurrence<'a> {
    wire_type: u8,
    value: Cursor<'a>,
}

/// The occurrences of one field number in a message body, in order; or, `consecutive`,
/// only those up to the first other field (a run).
struct Occurrences<'a> {
    scan: Cursor<'a>,
    field: u32,
    consecutive: bool,
}

impl<'a> Occurrences<'a> {
    fn new(body: &Cursor<'a>, field: u32) -> Self {
        Occurrences {
            scan: Cursor::new(body.bytes, body.base),
            field,
            consecutive: false,
        }
    }

    fn empty(at: &Cursor<'a>) -> Self {
        Occurrences {
            scan: Cursor::new(&at.bytes[at.bytes.len()..], at.base + at.bytes.len() as u64),
            field: 0,
            consecutive: false,
        }
    }

    /// The run of `field` after the occurrence whose value starts at `value` (of
    /// `wire_type`).
    fn run_after(value: &Cursor<'a>, wire_type: u8, field: u32) -> Result<Self, WireError> {
        let mut scan = Cursor {
            bytes: value.bytes,
            pos: value.pos,
            base: value.base,
        };
        scan.skip(wire_type)?;
        Ok(Occurrences {
            scan,
            field,
            consecutive: true,
        })
    }

    fn next_occurrence(&mut self) -> Result<Option<Occurrence<'a>>, WireError> {
        while !self.scan.at_end() {
            let before = self.scan.pos;
            let (field, wire_type) = self.scan.tag()?;
            if self.consecutive && field != self.field {
                self.scan.pos = before;
                return Ok(None);
            }
            let value = Cursor {
                bytes: self.scan.bytes,
                pos: self.scan.pos,
                base: self.scan.base,
            };
            self.scan.skip(wire_type)?;
            if field == self.field {
                return Ok(Some(Occurrence { wire_type, value }));
            }
        }
        Ok(None)
    }
}
