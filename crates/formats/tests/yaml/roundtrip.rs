//! Every YSON node survives YSON -> YAML -> YSON unchanged (attributes, uint64, entity,
//! binary strings and keys, non-finite doubles included).

use proptest::prelude::*;
use shapeshift_formats::{yaml, yson};
use shapeshift_types::testing::arb_node;
use shapeshift_types::{Node, NodeValue};

/// The node with each map's repeated keys dropped (YAML maps have unique keys; YSON's
/// parser keeps the last, like this).
fn unique_keys(node: Node) -> Node {
    fn dedupe(entries: Vec<(Vec<u8>, Node)>) -> Vec<(Vec<u8>, Node)> {
        let mut out: Vec<(Vec<u8>, Node)> = Vec::new();
        for (key, value) in entries {
            let value = unique_keys(value);
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => out.push((key, value)),
            }
        }
        out
    }
    let value = match node.value {
        NodeValue::Map(entries) => NodeValue::Map(dedupe(entries)),
        NodeValue::List(items) => NodeValue::List(items.into_iter().map(unique_keys).collect()),
        other => other,
    };
    Node {
        attributes: dedupe(node.attributes),
        value,
    }
}

fn round_trip(node: &Node) -> Node {
    let text = yaml::to_string(node).expect("write YAML");
    yaml::from_str(&text).unwrap_or_else(|e| panic!("read back {text:?}: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn yson_yaml_yson_keeps_every_node(node in arb_node(4).prop_map(unique_keys)) {
        let binary = yson::to_vec(&node, yson::YsonFormat::Binary);
        let parsed = yson::from_slice(&binary).unwrap();
        let back = round_trip(&parsed);
        prop_assert_eq!(yson::to_vec(&back, yson::YsonFormat::Binary), binary);
    }
}

#[test]
fn scalars_that_look_like_other_types_stay_strings() {
    for text in [
        "",
        "true",
        "false",
        "null",
        "~",
        "1",
        "-1",
        "0x1F",
        "0o17",
        "1.5",
        "1e5",
        ".nan",
        ".inf",
        "-.inf",
        "yes",
        "no",
        "#",
        "- a",
        "a: b",
        "'q'",
        "\"q\"",
        " lead",
        "trail ",
        "multi\nline",
        "tab\there",
        "\u{7f}",
        "é",
        "[1]",
        "{a: 1}",
        "&anchor",
        "*alias",
        "!tag",
        "%x",
        "@x",
        "`x",
    ] {
        let node = Node::string(text.as_bytes());
        assert_eq!(round_trip(&node), node, "string {text:?}");
    }
}

#[test]
fn the_convention_is_spelled_as_documented() {
    let node = Node {
        attributes: vec![(b"type".to_vec(), Node::string(&b"table"[..]))],
        value: NodeValue::Map(vec![
            (b"big".to_vec(), Node::uint64(u64::MAX)),
            (b"raw".to_vec(), Node::string(&[0xff, 0x00, 0x80][..])),
            (vec![0xfe], Node::entity()),
            (b"nan".to_vec(), Node::new(NodeValue::Double(f64::NAN))),
            (
                b"inf".to_vec(),
                Node::new(NodeValue::Double(f64::NEG_INFINITY)),
            ),
        ]),
    };
    let text = yaml::to_string(&node).unwrap();
    for needle in [
        "!attributes",
        "!uint64",
        "18446744073709551615",
        "!!binary /wCA",
        ".nan",
        "-.inf",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in {text}");
    }
    let back = yaml::from_str(&text).unwrap();
    let NodeValue::Map(entries) = &back.value else {
        panic!("{back:?}")
    };
    assert_eq!(back.attributes, node.attributes);
    assert_eq!(entries[0].1, Node::uint64(u64::MAX));
    assert_eq!(entries[1].1, Node::string(&[0xff, 0x00, 0x80][..]));
    assert_eq!(entries[2].0, vec![0xfe]);
    assert!(matches!(entries[3].1.value, NodeValue::Double(v) if v.is_nan()));
    assert_eq!(
        entries[4].1,
        Node::new(NodeValue::Double(f64::NEG_INFINITY))
    );
}

#[test]
fn a_map_with_a_repeated_key_is_refused_when_writing() {
    let node = Node::map([(&b"a"[..], Node::int64(1)), (&b"a"[..], Node::int64(2))]);
    let error = yaml::to_string(&node).unwrap_err();
    assert!(error.message.contains("\"a\" appears twice"), "{error}");
}
