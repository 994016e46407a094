//! Bad input: garbage never panics or hangs, truncation always errors (or yields a valid prefix
//! where a fragment may legally end), errors name the offset and what was expected, nesting is
//! limited, and lengths read from the input never size an allocation.

use proptest::prelude::*;
use shapeshift_formats::yson::{
    from_slice, from_slice_with_depth, list_fragment_from_slice, map_fragment_from_slice, to_vec,
    FragmentReader, PullParser, TableReader, YsonFormat, YsonType,
};
use shapeshift_types::Node;

fn drain_events(bytes: &[u8], yson_type: YsonType) -> Result<usize, String> {
    let mut parser = PullParser::from_slice(bytes, yson_type);
    let mut count = 0;
    loop {
        match parser.next_event() {
            Ok(Some(_)) => count += 1,
            Ok(None) => return Ok(count),
            Err(e) => return Err(e.to_string()),
        }
        assert!(count <= bytes.len() + 1, "more events than bytes: a hang");
    }
}

fn sample_document() -> Node {
    from_slice(
        br#"<id=7;tags=[a;"b c"]>{name="x\ty";n=-12;u=5u;d=1.5;ok=%true;none=#;list=[1;[2;{}]];m={k=%nan}}"#,
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = from_slice(&bytes);
        let _ = list_fragment_from_slice(&bytes);
        let _ = map_fragment_from_slice(&bytes);
        let _ = drain_events(&bytes, YsonType::Node);
        let _ = FragmentReader::new(&bytes[..], YsonType::ListFragment).count();
        let _ = TableReader::new(&bytes[..]).take(100).count();
    }

    #[test]
    fn structured_garbage_never_panics(parts in proptest::collection::vec(
        prop_oneof![
            Just(&b"["[..]), Just(&b"]"[..]), Just(&b"{"[..]), Just(&b"}"[..]), Just(&b"<"[..]),
            Just(&b">"[..]), Just(&b";"[..]), Just(&b"="[..]), Just(&b"a"[..]), Just(&b"\"s\\"[..]),
            Just(&b"1"[..]), Just(&b"%"[..]), Just(&b"\x01"[..]), Just(&b"\x02"[..]), Just(&b"\x03"[..]),
            Just(&b"\x06"[..]), Just(&b"\xff"[..]), Just(&b"#"[..]), Just(&b" "[..]), Just(&b"u"[..]),
        ], 0..40)) {
        let bytes: Vec<u8> = parts.concat();
        let _ = from_slice(&bytes);
        let _ = list_fragment_from_slice(&bytes);
        let _ = map_fragment_from_slice(&bytes);
    }

    #[test]
    fn single_byte_corruption_is_caught_or_harmless(position in 0usize..1000, byte in any::<u8>()) {
        for format in [YsonFormat::Binary, YsonFormat::Text] {
            let mut bytes = to_vec(&sample_document(), format);
            let position = position % bytes.len();
            bytes[position] = byte;
            if let Err(error) = from_slice(&bytes) {
                prop_assert!(error.offset() <= bytes.len() as u64);
            }
        }
    }
}

#[test]
fn every_truncation_of_a_node_is_an_error_with_an_offset() {
    for format in [YsonFormat::Binary, YsonFormat::Text, YsonFormat::Pretty] {
        let bytes = to_vec(&sample_document(), format);
        for length in 0..bytes.len() {
            let prefix = &bytes[..length];
            match from_slice(prefix) {
                Ok(node) => panic!("{format:?} prefix of {length} bytes read as {node:?}"),
                Err(error) => {
                    assert!(error.offset() <= length as u64, "{error}");
                    assert!(error.to_string().contains("expected"), "{error}");
                }
            }
            let streamed = FragmentReader::new(prefix, YsonType::Node).next_item();
            assert!(streamed.is_err(), "{format:?} streamed prefix of {length}");
        }
    }
}

#[test]
fn truncated_list_fragments_yield_a_valid_prefix_or_an_error() {
    let rows: Vec<Node> = (0..5)
        .map(|i| Node::map([("k", Node::int64(i)), ("s", Node::string("abc"))]))
        .collect();
    for format in [YsonFormat::Binary, YsonFormat::Text] {
        let mut bytes = Vec::new();
        shapeshift_formats::yson::write_list_fragment(&mut bytes, &rows, format).unwrap();
        for length in 0..bytes.len() {
            let mut reader = FragmentReader::new(&bytes[..length], YsonType::ListFragment);
            let mut read = 0;
            loop {
                match reader.next_item() {
                    Ok(Some(item)) => {
                        assert_eq!(item, rows[read], "items read must be the rows written");
                        read += 1;
                    }
                    Ok(None) => break,
                    Err(error) => {
                        assert!(error.offset() <= length as u64);
                        break;
                    }
                }
            }
            assert!(read <= rows.len());
        }
    }
}

#[test]
fn errors_name_the_offset_and_what_was_expected() {
    let cases: &[(&[u8], u64, &str)] = &[
        (b"[1 2]", 3, "expected ';' or ']'"),
        (b"{a=1;;}", 5, "a map key"),
        (b"{a 1}", 3, "'='"),
        (b"1;", 1, "end of input"),
        (b"", 0, "a value"),
        (b"[1;", 3, "a value"),
        (b"\"abc", 4, "closing '\"'"),
        (b"<a=1><b=2>1", 5, "several attribute maps"),
        (b"9223372036854775808", 0, "integer literal"),
        (b"%NaN", 0, "%true"),
        (b"{1=2}", 1, "a map key"),
        (b"/", 0, "a value, found '/'"),
    ];
    for (input, offset, expected) in cases {
        let error = from_slice(input).unwrap_err();
        assert_eq!(error.offset(), *offset, "{error}");
        assert!(
            error.to_string().contains(expected),
            "{error} should say {expected}"
        );
        assert!(
            error.to_string().contains(&format!("byte {offset}")),
            "{error}"
        );
    }
}

#[test]
fn nesting_is_limited() {
    let deep = |n: usize| [vec![b'['; n], vec![b']'; n]].concat();
    assert!(from_slice(&deep(256)).is_ok());
    let error = from_slice(&deep(257)).unwrap_err();
    assert!(error.to_string().contains("nesting"), "{error}");
    assert!(from_slice_with_depth(&deep(10), 9).is_err());
    assert!(from_slice_with_depth(&deep(1000), 1000).is_ok());
    // Deep attributes count too.
    let attributes = [b"<a=".repeat(300), b"1".to_vec(), b">#".repeat(300)].concat();
    assert!(from_slice(&attributes).is_err());
}

#[test]
fn huge_declared_lengths_do_not_allocate() {
    // A binary string claiming 2^62 bytes, then nothing.
    let mut bytes = vec![0x01];
    let mut length = (1u64 << 62) << 1; // zigzag of 2^62
    while length >= 0x80 {
        bytes.push((length as u8) | 0x80);
        length >>= 7;
    }
    bytes.push(length as u8);
    let error = from_slice(&bytes).unwrap_err();
    assert!(error.to_string().contains("binary data"), "{error}");
    let error = FragmentReader::new(&bytes[..], YsonType::Node)
        .next_item()
        .unwrap_err();
    assert!(error.to_string().contains("binary data"), "{error}");
    // Negative length.
    assert!(from_slice(b"\x01\x01")
        .unwrap_err()
        .to_string()
        .contains("negative"));
    // Endless varint.
    assert!(
        from_slice(&[0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
            .is_err()
    );
}

#[test]
fn reader_errors_are_reported_with_the_offset() {
    struct Failing(usize);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk on fire"));
            }
            self.0 -= 1;
            buf[0] = b'1';
            buf[1] = b';';
            Ok(2)
        }
    }
    let mut reader = FragmentReader::new(Failing(3), YsonType::ListFragment);
    let mut items = 0;
    let error = loop {
        match reader.next_item() {
            Ok(Some(_)) => items += 1,
            Ok(None) => panic!("the reader failed, not ended"),
            Err(e) => break e,
        }
    };
    assert!(items <= 3);
    assert!(error.to_string().contains("disk on fire"), "{error}");
    assert_eq!(error.offset(), 6);
}
