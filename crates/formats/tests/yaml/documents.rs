//! Real YAML read (a Cassandra configuration, JSON as YAML), and bad or hostile input
//! refused with the byte offset.

use shapeshift_formats::{yaml, yson};
use shapeshift_types::{Node, NodeValue};

fn vector(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/vectors/yaml/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_cassandra_configuration_reads_with_its_types() {
    let node = yaml::from_slice(&vector("cassandra.yaml")).unwrap();
    assert_eq!(
        node.get(b"cluster_name"),
        Some(&Node::string(&b"Test Cluster"[..]))
    );
    assert_eq!(node.get(b"initial_token"), Some(&Node::entity()));
    assert_eq!(
        node.get(b"hinted_handoff_enabled"),
        Some(&Node::new(NodeValue::Bool(true)))
    );
    assert_eq!(
        node.get(b"max_hint_window_in_ms"),
        Some(&Node::int64(3_600_000))
    );
    assert_eq!(
        node.get(b"flush_largest_memtables_at"),
        Some(&Node::new(NodeValue::Double(0.75)))
    );
    let seeds = node.get(b"seed_provider").unwrap();
    let NodeValue::List(providers) = &seeds.value else {
        panic!("{seeds:?}")
    };
    let parameters = providers[0].get(b"parameters").unwrap();
    let NodeValue::List(parameters) = &parameters.value else {
        panic!()
    };
    assert_eq!(
        parameters[0].get(b"seeds"),
        Some(&Node::string(&b"127.0.0.1"[..]))
    );
    assert_eq!(
        node.get(b"encryption_options")
            .and_then(|o| o.get(b"keystore")),
        Some(&Node::string(&b"conf/.keystore"[..]))
    );
    let NodeValue::Map(entries) = &node.value else {
        panic!()
    };
    assert_eq!(entries.len(), 45, "every top-level key, in file order");
    assert_eq!(entries[0].0, b"cluster_name");
    // And through YSON and back to YAML: the same node.
    let text = yson::to_vec(&node, yson::YsonFormat::Text);
    let again = yaml::from_str(&yaml::to_string(&yson::from_slice(&text).unwrap()).unwrap());
    assert_eq!(again.unwrap(), node);
}

#[test]
fn json_is_read_as_yaml() {
    let node = yaml::from_str(r#"{"a": [1, 2.5, null, true, "x"], "b": {"c": -7}}"#).unwrap();
    let expected = yson::from_slice(b"{a=[1;2.5;#;%true;x];b={c=-7}}").unwrap();
    assert_eq!(node, expected);
}

#[test]
fn aliases_expand_and_plain_big_integers_are_uint64() {
    let node = yaml::from_str("base: &b {x: 1}\ncopy: *b\nbig: 18446744073709551615\n").unwrap();
    assert_eq!(node.get(b"copy"), node.get(b"base"));
    assert_eq!(node.get(b"big"), Some(&Node::uint64(u64::MAX)));
}

fn fails(input: &[u8], message: &str) -> yaml::YamlError {
    let error = yaml::from_slice(input).expect_err("must fail");
    assert!(
        error.message.contains(message),
        "{message:?} not in {error}"
    );
    error
}

#[test]
fn bad_input_names_where_and_what() {
    let error = fails(b"a: [1, 2\nb: 3\n", "");
    assert!(error.offset.is_some(), "{error}");
    let error = fails(b"a: 1\nb: !uint64 -5\n", "is not a uint64");
    assert_eq!(error.line, Some(2), "{error}");
    assert_eq!(error.offset, Some(8), "{error}");
    fails(b"x: !custom 1\n", "unknown tag");
    fails(b"a: 1\na: 2\n", "\"a\" appears twice");
    fails(b"? [1]\n: x\n", "map key");
    fails(b"--- 1\n--- 2\n", "more than one YAML document");
    fails(b"", "no YAML document");
    let error = fails(b"a: \xff\n", "not UTF-8");
    assert_eq!(error.offset, Some(3));
    fails(b"x: !!binary '@@@'\n", "base64");
    fails(b"!attributes {value: 1}\n", "needs both");
}

#[test]
fn hostile_input_is_bounded() {
    let deep = "[".repeat(100_000);
    let error = yaml::from_str(&deep).expect_err("must stop");
    assert!(
        error.message.contains("recursion limit") || error.message.contains("nested deeper"),
        "{error}"
    );
    // A "billion laughs": nine levels of ten aliases each.
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..9 {
        let previous = format!("*a{}", level - 1);
        let items = vec![previous.as_str(); 10].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
    }
    let error = yaml::from_str(&text).expect_err("must stop");
    assert!(
        error.message.contains("alias") || error.message.contains("limit"),
        "{error}"
    );
}
