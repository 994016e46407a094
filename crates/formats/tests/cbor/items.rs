//! The CBOR item reader (`cbor::ItemReader`, the head decoder every CBOR reader shares)
//! against the spec and against `minicbor`'s encoder: every head width and major type reads
//! back, every truncation and every unused construct is an error at the item's offset,
//! never a panic or an allocation sized by a length read from the input.

use minicbor::data::Tag;
use minicbor::Encoder;
use proptest::prelude::*;
use shapeshift_formats::cbor::{self, Item, YSON_TAG};

/// An owned item: what [`Item`] holds, to generate and compare.
#[derive(Clone, Debug, PartialEq)]
enum Owned {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(u64),
    Bytes(Vec<u8>),
    /// Text strings are not checked for UTF-8 by the item reader: their bytes.
    Text(Vec<u8>),
    Array(u64),
    Map(u64),
    Yson(Vec<u8>),
}

fn owned(item: Item<'_>) -> Owned {
    match item {
        Item::Nil => Owned::Nil,
        Item::Bool(v) => Owned::Bool(v),
        Item::Int(v) => Owned::Int(v),
        Item::Uint(v) => Owned::Uint(v),
        Item::Double(v) => Owned::Double(v.to_bits()),
        Item::Bytes(v) => Owned::Bytes(v.to_vec()),
        Item::Text(v) => Owned::Text(v.to_vec()),
        Item::Array(n) => Owned::Array(n),
        Item::Map(n) => Owned::Map(n),
        Item::Yson(v) => Owned::Yson(v.to_vec()),
    }
}

/// Encodes `item` with minicbor (shortest heads), as a CBOR writer other than ours would.
fn encode(e: &mut Encoder<&mut Vec<u8>>, item: &Owned) {
    let _ = match item {
        Owned::Nil => e.null(),
        Owned::Bool(v) => e.bool(*v),
        // minicbor writes a non-negative i64 as major type 0: read back as `Uint`.
        Owned::Int(v) => e.i64(*v),
        Owned::Uint(v) => e.u64(*v),
        Owned::Double(bits) => e.f64(f64::from_bits(*bits)),
        Owned::Bytes(v) => e.bytes(v),
        Owned::Text(v) => e.str(std::str::from_utf8(v).expect("generated as text")),
        Owned::Array(n) => e.array(*n),
        Owned::Map(n) => e.map(*n),
        Owned::Yson(v) => e.tag(Tag::new(YSON_TAG)).and_then(|e| e.bytes(v)),
    };
}

/// What reading `item` back gives (non-negative `Int`s come back as `Uint`s).
fn read_back(item: &Owned) -> Owned {
    match item {
        Owned::Int(v) if *v >= 0 => Owned::Uint(*v as u64),
        other => other.clone(),
    }
}

fn arb_item() -> impl Strategy<Value = Owned> {
    prop_oneof![
        Just(Owned::Nil),
        any::<bool>().prop_map(Owned::Bool),
        any::<i64>().prop_map(Owned::Int),
        any::<u64>().prop_map(Owned::Uint),
        (0u32..24).prop_map(|v| Owned::Uint(u64::from(v))),
        any::<u64>().prop_map(Owned::Double),
        any::<f32>().prop_map(|v| Owned::Double(f64::from(v).to_bits())),
        prop::collection::vec(any::<u8>(), 0..300).prop_map(Owned::Bytes),
        ".{0,40}".prop_map(|v: String| Owned::Text(v.into_bytes())),
        any::<u64>().prop_map(Owned::Array),
        (0u64..30).prop_map(Owned::Map),
        prop::collection::vec(any::<u8>(), 0..30).prop_map(Owned::Yson),
    ]
}

/// All items of `bytes`, or the first error as (offset, message).
fn read_all(bytes: &[u8]) -> Result<Vec<Owned>, (Option<u64>, String)> {
    let mut reader = cbor::ItemReader::new(bytes);
    let mut items = Vec::new();
    loop {
        match reader.next_item() {
            Ok(Some(item)) => items.push(owned(item)),
            Ok(None) => return Ok(items),
            Err(e) => return Err((e.offset, e.message)),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Items minicbor writes read back as themselves (floats bit for bit, f32 widened).
    #[test]
    fn minicbor_items_read_back(items in prop::collection::vec(arb_item(), 0..20)) {
        let mut bytes = Vec::new();
        let mut e = Encoder::new(&mut bytes);
        for item in &items {
            encode(&mut e, item);
        }
        let expected: Vec<Owned> = items.iter().map(read_back).collect();
        prop_assert_eq!(read_all(&bytes), Ok(expected));
    }

    /// A head in any of the wider forms than the shortest (RFC 8949 allows them) reads as
    /// the shortest does.
    #[test]
    fn every_head_width_reads_the_same(value in any::<u64>(), major in 0u8..6, width in 0usize..4) {
        let bytes = value.to_be_bytes();
        let needed = match value {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            0x1_0000..=0xffff_ffff => 4,
            _ => 8,
        };
        let size = (1usize << width).max(needed);
        let info = 24 + size.trailing_zeros() as u8;
        let mut encoded = vec![(major << 5) | info];
        encoded.extend_from_slice(&bytes[8 - size..]);
        let expected = match major {
            0 => Owned::Uint(value),
            1 if value <= i64::MAX as u64 => Owned::Int(!(value as i64)),
            1 => {
                let e = read_all(&encoded).unwrap_err();
                prop_assert_eq!(e.0, Some(0));
                prop_assert!(e.1.contains("64-bit range"), "{}", e.1);
                return Ok(());
            }
            2 if value == 0 => Owned::Bytes(Vec::new()),
            3 if value == 0 => Owned::Text(Vec::new()),
            2 | 3 => {
                // A string that claims `value` bytes, none of which follow.
                let e = read_all(&encoded).unwrap_err();
                prop_assert_eq!(e.0, Some(0));
                prop_assert!(e.1.contains("truncated"), "{}", e.1);
                return Ok(());
            }
            4 => Owned::Array(value),
            _ => Owned::Map(value),
        };
        prop_assert_eq!(read_all(&encoded), Ok(vec![expected]));
    }

    /// Every prefix of a stream reads its whole items and then fails at the offset of the
    /// item that was cut (which starts within the prefix).
    #[test]
    fn truncation_fails_at_the_cut_item(items in prop::collection::vec(arb_item(), 1..12), cut in any::<prop::sample::Index>()) {
        let mut bytes = Vec::new();
        let mut e = Encoder::new(&mut bytes);
        let mut ends = Vec::new();
        for item in &items {
            encode(&mut e, item);
            ends.push(e.writer().len());
        }
        let cut = cut.index(bytes.len());
        let whole_items = ends.iter().filter(|&&end| end <= cut).count();
        let cut_item_start = if whole_items == 0 { 0 } else { ends[whole_items - 1] };
        match read_all(&bytes[..cut]) {
            Ok(read) => {
                prop_assert_eq!(cut, cut_item_start, "no item was cut");
                prop_assert_eq!(read.len(), whole_items);
            }
            Err((offset, message)) => {
                prop_assert_eq!(offset, Some(cut_item_start as u64), "{}", message);
                prop_assert!(message.contains("truncated"), "{}", message);
            }
        }
    }

    /// Arbitrary bytes read as items or fail with an offset inside the input: no panic, no
    /// huge allocation (a length is only ever compared with the bytes that remain).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Err((offset, message)) = read_all(&bytes) {
            prop_assert!(offset.is_some_and(|o| o < bytes.len() as u64), "{:?} {}", offset, message);
        }
    }
}

/// The constructs the mapping never writes are errors that say what they are, at their item.
#[test]
fn unused_constructs_are_named_errors() {
    let cases: [(&[u8], &str); 9] = [
        (&[0x5f, 0x41, 0x00, 0xff], "indefinite-length"),
        (&[0x9f, 0xff], "indefinite-length"),
        (&[0xbf, 0xff], "indefinite-length"),
        (&[0xff], "break"),
        (&[0x1c], "reserved"),
        (&[0xf7], "undefined"),
        (&[0xf8, 0x20], "simple value"),
        (&[0xc1, 0x00], "unknown tag 1"),
        (&[0x3b, 0x80, 0, 0, 0, 0, 0, 0, 0], "64-bit range"),
    ];
    for (bytes, what) in cases {
        let mut input = vec![0x01];
        input.extend_from_slice(bytes);
        let (offset, message) = read_all(&input).unwrap_err();
        assert_eq!(offset, Some(1), "{bytes:02x?}: {message}");
        assert!(message.contains(what), "{bytes:02x?}: {message}");
    }
    // The yson tag over anything but a byte string: at the wrapped item.
    let mut input = vec![0xda];
    input.extend_from_slice(&(YSON_TAG as u32).to_be_bytes());
    input.push(0x61);
    input.push(b'x');
    let (offset, message) = read_all(&input).unwrap_err();
    assert_eq!(offset, Some(5), "{message}");
    assert!(message.contains("byte string"), "{message}");
    // The most negative 64-bit integer is in range.
    let min = [0x3b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    assert_eq!(read_all(&min), Ok(vec![Owned::Int(i64::MIN)]));
}

proptest! {
    /// Our writer's items are minicbor's byte for byte (shortest heads of every width, both
    /// integer signs, float64 for doubles and float32 for `f32`, array heads past 23): tuples
    /// through the serde path, then the same items through minicbor's encoder.
    #[test]
    fn items_written_are_minicbors(
        signed in any::<i64>(),
        unsigned in any::<u64>(),
        small in 0u64..70_000,
        text in ".{0,300}",
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        flag in any::<bool>(),
        double in any::<f64>(),
        single in any::<f32>(),
        absent in any::<bool>(),
        zeros in 0usize..300,
    ) {
        let optional = (!absent).then_some(small);
        let sequence = vec![0u8; zeros];
        let ours = cbor::to_vec(&(
            (signed, unsigned, small, &text, Bytes(&bytes)),
            (flag, double, single, optional, &sequence),
        ))
        .expect("plain items");
        let mut expected = Vec::new();
        let mut e = Encoder::new(&mut expected);
        let _ = e.array(2).and_then(|e| e.array(5)).and_then(|e| e.i64(signed))
            .and_then(|e| e.u64(unsigned)).and_then(|e| e.u64(small)).and_then(|e| e.str(&text))
            .and_then(|e| e.bytes(&bytes)).and_then(|e| e.array(5)).and_then(|e| e.bool(flag))
            .and_then(|e| e.f64(double)).and_then(|e| e.f32(single));
        let _ = match optional {
            Some(v) => e.u64(v),
            None => e.null(),
        };
        let _ = e.array(zeros as u64);
        for _ in 0..zeros {
            let _ = e.u8(0);
        }
        prop_assert_eq!(ours, expected);
    }
}

/// A byte string for serde (a `&[u8]` alone serializes as a sequence of integers).
struct Bytes<'a>(&'a [u8]);

impl serde::Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}
