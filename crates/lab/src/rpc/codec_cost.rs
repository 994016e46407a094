//! The codec's share of our server's work, measured apart from the server: the CPU time of
//! exactly the codec calls the server makes per request (decode the request, encode the
//! response), in a loop on one thread, read from that thread's CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`). Unlike the
//! server's own clock around its calls, a thread's CPU clock does not count time the thread
//! spent preempted, so the figure holds on a loaded machine.

use std::hint::black_box;

use super::cpu::thread_cpu_ns;
use super::load::Workload;
use super::messages::*;

/// CPU nanoseconds per request of `workload` that our server spends in `codec` (the mean over
/// `iterations` requests; mixed = every tenth a write). The request bytes are copied into the
/// owned buffer the decoder takes, as the framing hands it one: that copy is counted too.
///
/// # Errors
/// A message when the codec fails on the study's messages (a bug) or the clock is missing.
pub fn codec_cpu_ns_per_request(
    codec: &MessageCodec,
    kind: ValueKind,
    workload: Workload,
    iterations: u32,
) -> Result<f64, String> {
    let item = kind.initial_item(7);
    let get = codec
        .encode_request(&Request {
            op: OP_GET,
            key: 7,
            value: None,
        })
        .map_err(|e| e.to_string())?;
    let put = codec
        .encode_request(&Request {
            op: OP_PUT,
            key: 7,
            value: Some(item.clone()),
        })
        .map_err(|e| e.to_string())?;
    let iterations = iterations.max(1);
    let clock = |e: std::io::Error| format!("thread CPU clock: {e}");
    let started = thread_cpu_ns().map_err(clock)?;
    for i in 0..iterations {
        let write = match workload {
            Workload::Read => false,
            Workload::Write => true,
            Workload::Mixed => i % 10 == 0,
        };
        let request = codec
            .decode_request(if write { put.clone() } else { get.clone() })
            .map_err(|e| e.to_string())?;
        let value = if write { None } else { Some(&item) };
        let response = codec
            .encode_response_parts(RESULT_OK, value)
            .map_err(|e| e.to_string())?;
        black_box((request, response));
    }
    let spent = thread_cpu_ns().map_err(clock)?.saturating_sub(started);
    Ok(spent as f64 / f64::from(iterations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shapeshift_formats::registry::FormatKind;

    #[test]
    fn mediacontent_costs_the_codec_more_than_a_tiny_value() {
        for format in [FormatKind::Msgpack, FormatKind::Thrift] {
            let tiny = MessageCodec::new(format, ValueKind::Tiny).unwrap();
            let media = MessageCodec::new(format, ValueKind::Media).unwrap();
            let tiny_ns =
                codec_cpu_ns_per_request(&tiny, ValueKind::Tiny, Workload::Read, 3000).unwrap();
            let media_ns =
                codec_cpu_ns_per_request(&media, ValueKind::Media, Workload::Read, 3000).unwrap();
            assert!(
                tiny_ns > 0.0 && media_ns > tiny_ns,
                "{format}: tiny {tiny_ns} ns, media {media_ns} ns"
            );
        }
    }
}
