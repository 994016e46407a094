//! Events to [`Node`]s: an explicit stack instead of recursion, so the nesting limit of the
//! parser (not the thread's stack) bounds how deep a document may be.

use shapeshift_types::{Bytes, Node, NodeValue};

use super::error::YsonError;
use super::parser::{Event, PullParser};
use super::source::Source;

type Entries = Vec<(Bytes, Node)>;

enum Partial {
    List(Vec<Node>, Entries),
    Map(Entries, Option<Bytes>, Entries),
    Attributes(Entries, Option<Bytes>),
}

/// Reads one complete value from `parser`; `None` when the input ended before a value started.
pub(crate) fn read_value<S: Source>(parser: &mut PullParser<S>) -> Result<Option<Node>, YsonError> {
    let mut stack: Vec<Partial> = Vec::new();
    let mut pending_attributes: Entries = Vec::new();
    loop {
        let offset = parser.offset();
        let Some(event) = parser.next_event()? else {
            if stack.is_empty() && pending_attributes.is_empty() {
                return Ok(None);
            }
            return Err(YsonError::new(
                offset,
                "expected the rest of a value, found end of input",
            ));
        };
        let complete = match event {
            Event::BeginAttributes => {
                stack.push(Partial::Attributes(Vec::new(), None));
                continue;
            }
            Event::EndAttributes => {
                if let Some(Partial::Attributes(entries, _)) = stack.pop() {
                    pending_attributes = entries;
                }
                continue;
            }
            Event::BeginList => {
                stack.push(Partial::List(
                    Vec::new(),
                    std::mem::take(&mut pending_attributes),
                ));
                continue;
            }
            Event::BeginMap => {
                stack.push(Partial::Map(
                    Vec::new(),
                    None,
                    std::mem::take(&mut pending_attributes),
                ));
                continue;
            }
            Event::Key(key) => {
                match stack.last_mut() {
                    Some(Partial::Map(_, slot, _) | Partial::Attributes(_, slot)) => {
                        *slot = Some(key.to_vec())
                    }
                    _ => {
                        return Err(YsonError::new(
                            offset,
                            "expected a value, found a map key outside a map",
                        ))
                    }
                }
                continue;
            }
            Event::EndList => match stack.pop() {
                Some(Partial::List(items, attributes)) => Node {
                    attributes,
                    value: NodeValue::List(items),
                },
                _ => return Err(YsonError::new(offset, "unbalanced ']'")),
            },
            Event::EndMap => match stack.pop() {
                Some(Partial::Map(entries, _, attributes)) => Node {
                    attributes,
                    value: NodeValue::Map(entries),
                },
                _ => return Err(YsonError::new(offset, "unbalanced '}'")),
            },
            scalar => {
                let value = match scalar {
                    Event::Entity => NodeValue::Entity,
                    Event::Bool(v) => NodeValue::Bool(v),
                    Event::Int64(v) => NodeValue::Int64(v),
                    Event::Uint64(v) => NodeValue::Uint64(v),
                    Event::Double(v) => NodeValue::Double(v),
                    Event::String(v) => NodeValue::String(v.to_vec()),
                    _ => unreachable!("structural events are handled above"),
                };
                Node {
                    attributes: std::mem::take(&mut pending_attributes),
                    value,
                }
            }
        };
        match stack.last_mut() {
            None => return Ok(Some(complete)),
            Some(Partial::List(items, _)) => items.push(complete),
            Some(Partial::Map(entries, slot, _) | Partial::Attributes(entries, slot)) => {
                entries.push((slot.take().unwrap_or_default(), complete))
            }
        }
    }
}
