//! Round trips: any node written in any format reads back to the same node, through the slice
//! reader and the streaming reader alike; the event writer and the node writer agree.

use proptest::prelude::*;
use shapeshift_formats::yson::{
    from_slice, list_fragment_from_slice, to_vec, write_list_fragment, FragmentReader, YsonFormat,
    YsonType,
};
use shapeshift_types::{Node, NodeValue};

fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..12),
        "[a-z_][a-z0-9_.-]{0,6}".prop_map(String::into_bytes),
        Just(b"\x001\x08a\"\\".to_vec()),
    ]
}

fn arb_scalar() -> impl Strategy<Value = NodeValue> {
    prop_oneof![
        Just(NodeValue::Entity),
        any::<bool>().prop_map(NodeValue::Bool),
        any::<i64>().prop_map(NodeValue::Int64),
        any::<u64>().prop_map(NodeValue::Uint64),
        any::<f64>().prop_map(NodeValue::Double),
        (-1000i64..1000, -12i32..25).prop_map(|(m, e)| NodeValue::Double(m as f64 * 10f64.powi(e))),
        arb_bytes().prop_map(NodeValue::String),
    ]
}

fn arb_node() -> impl Strategy<Value = Node> {
    let leaf = arb_scalar().prop_map(Node::new);
    leaf.prop_recursive(4, 48, 5, |inner| {
        let value = prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(NodeValue::List),
            proptest::collection::vec((arb_bytes(), inner.clone()), 0..5).prop_map(NodeValue::Map),
        ];
        (
            value,
            prop_oneof![
                3 => Just(Vec::new()),
                1 => proptest::collection::vec((arb_bytes(), inner), 1..3),
            ],
        )
            .prop_map(|(value, attributes)| Node { attributes, value })
    })
}

/// Equality that treats NaNs with the same bits as equal: compare binary encodings.
fn same(a: &Node, b: &Node) -> bool {
    to_vec(a, YsonFormat::Binary) == to_vec(b, YsonFormat::Binary)
}

const FORMATS: [YsonFormat; 3] = [YsonFormat::Binary, YsonFormat::Text, YsonFormat::Pretty];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn nodes_round_trip_in_every_format(node in arb_node()) {
        for format in FORMATS {
            let bytes = to_vec(&node, format);
            let back = from_slice(&bytes).map_err(|e| TestCaseError::fail(format!("{format:?}: {e}")))?;
            prop_assert!(same(&node, &back), "{:?}: {:?}", format, String::from_utf8_lossy(&bytes));
            // Writing again gives the same bytes.
            prop_assert_eq!(to_vec(&back, format), bytes);
        }
    }

    #[test]
    fn list_fragments_round_trip_through_the_streaming_reader(items in proptest::collection::vec(arb_node(), 0..6)) {
        for format in FORMATS {
            let mut bytes = Vec::new();
            write_list_fragment(&mut bytes, &items, format).unwrap();
            let sliced = list_fragment_from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let streamed: Vec<Node> = FragmentReader::new(&bytes[..], YsonType::ListFragment)
                .collect::<Result<_, _>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(sliced.len(), items.len());
            prop_assert_eq!(streamed.len(), items.len());
            for ((a, b), c) in items.iter().zip(&sliced).zip(&streamed) {
                prop_assert!(same(a, b));
                prop_assert!(same(a, c));
            }
        }
    }

    #[test]
    fn text_and_binary_tokens_mix(node in arb_node()) {
        // A binary document wrapped in a text list with text items around it.
        let inner = to_vec(&node, YsonFormat::Binary);
        let mut bytes = b"[ 1 ; ".to_vec();
        bytes.extend_from_slice(&inner);
        bytes.extend_from_slice(b" ; abc ]");
        let back = from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let NodeValue::List(items) = back.value else { return Err(TestCaseError::fail("not a list")) };
        prop_assert_eq!(items.len(), 3);
        prop_assert!(same(&items[1], &node));
    }
}

#[test]
fn long_strings_cross_the_stream_buffer() {
    let big = Node::string(vec![b'x'; 200_000]);
    let quoted = Node::string(b"\"q\\".repeat(50_000));
    let unquoted_text = format!("[{};{}]", "a".repeat(150_000), "b");
    for format in FORMATS {
        let bytes = to_vec(&Node::list(vec![big.clone(), quoted.clone()]), format);
        let mut reader = FragmentReader::new(&bytes[..], YsonType::Node);
        let back = reader.next_item().unwrap().unwrap();
        assert!(same(&back, &Node::list(vec![big.clone(), quoted.clone()])));
        assert!(reader.next_item().unwrap().is_none());
    }
    let mut reader = FragmentReader::new(unquoted_text.as_bytes(), YsonType::Node);
    let back = reader.next_item().unwrap().unwrap();
    assert_eq!(
        back,
        Node::list(vec![Node::string("a".repeat(150_000)), Node::string("b")])
    );
}

#[test]
fn text_grammar_that_yt_accepts_is_read() {
    let cases: &[(&[u8], Node)] = &[
        (b"+5", Node::int64(5)),
        (b"01", Node::int64(1)),
        (b"5.", Node::new(NodeValue::Double(5.0))),
        (b"1E5", Node::new(NodeValue::Double(1e5))),
        (b"%+inf", Node::new(NodeValue::Double(f64::INFINITY))),
        (b"abc-def.g", Node::string("abc-def.g")),
        (
            b"\"\\u0041\\x4g\\101\\q\\1234\"",
            Node::string(b"A\x04gAqS4".to_vec()),
        ),
        (b"<>1", Node::int64(1)),
        (b" \t\r\n1\n", Node::int64(1)),
        (b"\x01\x06abc", Node::string("abc")),
        (b"\x02\x03", Node::int64(-2)),
        (
            b"{a=1;b=2;}",
            Node::map([("a", Node::int64(1)), ("b", Node::int64(2))]),
        ),
        (
            b"{a=1;b=2}",
            Node::map([("a", Node::int64(1)), ("b", Node::int64(2))]),
        ),
        (
            b"[1;#;%true]",
            Node::list(vec![
                Node::int64(1),
                Node::entity(),
                Node::new(NodeValue::Bool(true)),
            ]),
        ),
    ];
    for (input, expected) in cases {
        let node = from_slice(input)
            .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(input)));
        assert_eq!(&node, expected, "{:?}", String::from_utf8_lossy(input));
    }
}
