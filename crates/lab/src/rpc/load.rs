//! The closed-loop load generator: `clients` connections, each sending its next request as
//! soon as the previous answer is in, random keys, random reads, random writes or a 90/10
//! mix, bounded by a request count and a time limit. Every request's latency is kept (exact
//! percentiles from the sorted samples), with the bytes on the wire both ways. A client is a
//! [`Caller`]: a connection in the study's framing (our server, Thrift's), or a gRPC channel
//! (tonic, in [`grpc_peer`](super::grpc_peer)).
//!
//! The server's CPU is read from its process ([`process_cpu_ns`]) around the measured run,
//! and our server's own codec time through [`OP_CODEC_NS`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use super::cpu::process_cpu_ns;
use super::framing::{read_frame, write_frame, HEADER_BYTES};
use super::messages::*;
use super::server::ITEMS;

/// The request mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Read,
    Write,
    /// 90% reads, 10% writes.
    Mixed,
}

impl Workload {
    pub const ALL: [Workload; 3] = [Workload::Read, Workload::Write, Workload::Mixed];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Read => "read",
            Workload::Write => "write",
            Workload::Mixed => "mixed",
        }
    }

    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == name)
    }

    fn is_write(self, rng: &mut ChaCha8Rng) -> bool {
        match self {
            Workload::Read => false,
            Workload::Write => true,
            Workload::Mixed => rng.random_range(0..10) == 0,
        }
    }
}

/// How one side of the wire spells the study's requests: our formats, or a peer's protocol.
pub trait WireProtocol: Send + Sync + 'static {
    fn get(&self, key: i64) -> Vec<u8>;
    fn put(&self, key: i64) -> Vec<u8>;
    /// Checks one response; `Err` says what was wrong.
    fn check(&self, response: Vec<u8>, write: bool) -> Result<(), String>;
}

/// Our server's protocol: [`MessageCodec`] messages.
pub struct OurProtocol {
    codec: MessageCodec,
    kind: ValueKind,
    /// The value every put sends, per key (built once: building it is not the codec's work).
    values: Vec<Item>,
}

impl OurProtocol {
    pub fn new(codec: MessageCodec, kind: ValueKind) -> OurProtocol {
        OurProtocol {
            codec,
            kind,
            values: (0..ITEMS as i64).map(|k| kind.initial_item(k)).collect(),
        }
    }
}

impl WireProtocol for OurProtocol {
    fn get(&self, key: i64) -> Vec<u8> {
        let request = Request {
            op: OP_GET,
            key,
            value: None,
        };
        self.codec
            .encode_request(&request)
            .expect("requests fit their schema")
    }

    fn put(&self, key: i64) -> Vec<u8> {
        let value = Some(self.values[key as usize].clone());
        let request = Request {
            op: OP_PUT,
            key,
            value,
        };
        self.codec
            .encode_request(&request)
            .expect("requests fit their schema")
    }

    fn check(&self, response: Vec<u8>, write: bool) -> Result<(), String> {
        let response = self
            .codec
            .decode_response(response)
            .map_err(|e| e.to_string())?;
        match (response.result, response.value.is_some(), write) {
            (RESULT_OK, true, false) | (RESULT_OK, false, true) => Ok(()),
            (result, has_value, _) => Err(format!(
                "{} response: result {result}, value {}",
                self.kind.name(),
                if has_value { "present" } else { "absent" }
            )),
        }
    }
}

/// Bounds and shape of one measured run.
#[derive(Clone, Copy, Debug)]
pub struct LoadConfig {
    pub workload: Workload,
    pub clients: usize,
    /// Requests in all (the run stops at this count or at `max_duration`).
    pub max_requests: u64,
    pub max_duration: Duration,
    /// Untimed requests per client before the run.
    pub warmup_per_client: u64,
    pub seed: u64,
}

/// The server under load: where it listens, its process, and how to ask it for its codec time.
pub struct Target<'a> {
    pub addr: SocketAddr,
    pub pid: u32,
    /// Our servers: the codec to ask [`OP_CODEC_NS`] with; peers: `None`.
    pub stats: Option<&'a MessageCodec>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadResult {
    pub workload: &'static str,
    pub clients: usize,
    pub requests: u64,
    pub elapsed_s: f64,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    /// Request and response frames (headers included), per request.
    pub bytes_per_request: f64,
    pub request_bytes: f64,
    pub response_bytes: f64,
    /// Server CPU (all its threads) per request, nanoseconds.
    pub server_cpu_ns_per_request: f64,
    /// Our server's time in its codec per request, and as a share of its CPU.
    /// Measured by the server's monotonic clock around its codec calls: wall time, so it
    /// includes any time the thread was preempted in a call (the CPU-clocked figure is
    /// [`codec_cpu_ns_per_request`](super::codec_cost::codec_cpu_ns_per_request)).
    pub codec_wall_ns_per_request: Option<f64>,
    pub codec_wall_share: Option<f64>,
}

#[derive(Default)]
struct ClientTally {
    latencies_ns: Vec<u64>,
    request_bytes: u64,
    response_bytes: u64,
}

struct Connection {
    reader: BufReader<OwnedReadHalf>,
    writer: BufWriter<OwnedWriteHalf>,
}

impl Connection {
    async fn open(addr: SocketAddr) -> Result<Connection, String> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (reader, writer) = stream.into_split();
        Ok(Connection {
            reader: BufReader::new(reader),
            writer: BufWriter::new(writer),
        })
    }

    async fn call(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        write_frame(&mut self.writer, request)
            .await
            .map_err(|e| e.to_string())?;
        self.writer.flush().await.map_err(|e| e.to_string())?;
        read_frame(&mut self.reader, usize::MAX)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the server closed the connection".to_string())
    }
}

/// One client's connection to a server under load, in the server's protocol.
pub trait Caller: Send + 'static {
    /// One request for `key` (a put when `write`, else a get), its answer checked.
    fn call(&mut self, key: i64, write: bool) -> impl Future<Output = Result<(), String>> + Send;

    /// Bytes this connection has sent and received so far, as the wire carries them.
    fn wire_bytes(&self) -> (u64, u64);
}

/// A connection in the study's framing (our server and Thrift's): a 4-byte length and a
/// message of `protocol`.
pub struct FramedCaller {
    conn: Connection,
    protocol: Arc<dyn WireProtocol>,
    sent: u64,
    received: u64,
}

impl FramedCaller {
    /// # Errors
    /// The connection's error.
    pub async fn open(
        addr: SocketAddr,
        protocol: Arc<dyn WireProtocol>,
    ) -> Result<FramedCaller, String> {
        Ok(FramedCaller {
            conn: Connection::open(addr).await?,
            protocol,
            sent: 0,
            received: 0,
        })
    }
}

impl Caller for FramedCaller {
    async fn call(&mut self, key: i64, write: bool) -> Result<(), String> {
        let request = if write {
            self.protocol.put(key)
        } else {
            self.protocol.get(key)
        };
        let response = self.conn.call(&request).await?;
        self.sent += (request.len() + HEADER_BYTES) as u64;
        self.received += (response.len() + HEADER_BYTES) as u64;
        self.protocol.check(response, write)
    }

    fn wire_bytes(&self) -> (u64, u64) {
        (self.sent, self.received)
    }
}

/// Asks our server for a statistics counter (`op` = [`OP_CODEC_NS`] or [`OP_REQUESTS`]).
async fn server_counter(
    conn: &mut Connection,
    codec: &MessageCodec,
    op: i64,
) -> Result<i64, String> {
    let request = codec
        .encode_request(&Request {
            op,
            key: 0,
            value: None,
        })
        .map_err(|e| e.to_string())?;
    let response = codec
        .decode_response(conn.call(&request).await?)
        .map_err(|e| e.to_string())?;
    Ok(response.result)
}

/// Runs one measured load against `target` over framed connections speaking `protocol`
/// (connections opened and warmed first).
///
/// # Errors
/// A message when a connection fails or a response is wrong.
pub async fn run(
    target: &Target<'_>,
    protocol: Arc<dyn WireProtocol>,
    config: &LoadConfig,
) -> Result<LoadResult, String> {
    let addr = target.addr;
    run_with(
        target,
        || FramedCaller::open(addr, Arc::clone(&protocol)),
        config,
    )
    .await
}

/// Runs one measured load against `target`, each client a connection from `open`.
///
/// # Errors
/// A message when a connection fails or a response is wrong.
pub async fn run_with<C, Open, Opening>(
    target: &Target<'_>,
    open: Open,
    config: &LoadConfig,
) -> Result<LoadResult, String>
where
    C: Caller,
    Open: Fn() -> Opening,
    Opening: Future<Output = Result<C, String>> + Send + 'static,
{
    let clients = config.clients.max(1);
    // Every client connects and warms up at once (its connection, and the server's task for
    // it, has served requests): one at a time, 100 clients' set-up took longer than a run.
    let mut opening = Vec::with_capacity(clients);
    for i in 0..clients {
        let connect = open();
        let (workload, warmup, seed) = (config.workload, config.warmup_per_client, config.seed);
        opening.push(tokio::spawn(async move {
            let mut caller = connect.await?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (i as u64 + 1) << 32);
            for _ in 0..warmup {
                let (key, write) = next_request(workload, &mut rng);
                caller.call(key, write).await?;
            }
            Ok::<C, String>(caller)
        }));
    }
    let mut callers = Vec::with_capacity(clients);
    for task in opening {
        callers.push(task.await.map_err(|e| format!("client set-up: {e}"))??);
    }
    let mut stats = match target.stats {
        Some(codec) => Some((Connection::open(target.addr).await?, codec)),
        None => None,
    };
    let codec_before = match &mut stats {
        Some((conn, codec)) => Some(server_counter(conn, codec, OP_CODEC_NS).await?),
        None => None,
    };
    let cpu_before = process_cpu_ns(target.pid).map_err(|e| format!("server CPU: {e}"))?;
    let issued = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + config.max_duration;
    let mut tasks = Vec::with_capacity(clients);
    for (i, mut caller) in callers.into_iter().enumerate() {
        let issued = Arc::clone(&issued);
        let config = *config;
        tasks.push(tokio::spawn(async move {
            let mut rng = ChaCha8Rng::seed_from_u64(config.seed.wrapping_add(i as u64));
            let mut tally = ClientTally::default();
            let (sent_before, received_before) = caller.wire_bytes();
            // The time limit is checked after each request, so every client completes at
            // least one even when the runtime starts it late (a loaded machine).
            while issued.fetch_add(1, Ordering::Relaxed) < config.max_requests {
                let begun = Instant::now();
                let (key, write) = next_request(config.workload, &mut rng);
                caller.call(key, write).await?;
                tally.latencies_ns.push(begun.elapsed().as_nanos() as u64);
                if Instant::now() >= deadline {
                    break;
                }
            }
            let (sent, received) = caller.wire_bytes();
            tally.request_bytes = sent - sent_before;
            tally.response_bytes = received - received_before;
            Ok::<ClientTally, String>(tally)
        }));
    }
    let mut latencies = Vec::new();
    let (mut request_bytes, mut response_bytes) = (0u64, 0u64);
    for task in tasks {
        let tally = task.await.map_err(|e| format!("client task: {e}"))??;
        latencies.extend(tally.latencies_ns);
        request_bytes += tally.request_bytes;
        response_bytes += tally.response_bytes;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_after = process_cpu_ns(target.pid).map_err(|e| format!("server CPU: {e}"))?;
    let codec_after = match &mut stats {
        Some((conn, codec)) => Some(server_counter(conn, codec, OP_CODEC_NS).await?),
        None => None,
    };
    let requests = latencies.len() as u64;
    if requests == 0 {
        return Err("no request completed within the time limit".into());
    }
    latencies.sort_unstable();
    let n = requests as f64;
    let percentile =
        |p: f64| latencies[((p * n).ceil() as usize).clamp(1, latencies.len()) - 1] as f64 / 1e3;
    let cpu_per_request = cpu_after.saturating_sub(cpu_before) as f64 / n;
    let codec_per_request = codec_before
        .zip(codec_after)
        .map(|(before, after)| (after - before) as f64 / n);
    Ok(LoadResult {
        workload: config.workload.name(),
        clients,
        requests,
        elapsed_s: elapsed,
        requests_per_s: n / elapsed,
        p50_us: percentile(0.50),
        p99_us: percentile(0.99),
        mean_us: latencies.iter().sum::<u64>() as f64 / n / 1e3,
        bytes_per_request: (request_bytes + response_bytes) as f64 / n,
        request_bytes: request_bytes as f64 / n,
        response_bytes: response_bytes as f64 / n,
        server_cpu_ns_per_request: cpu_per_request,
        codec_wall_ns_per_request: codec_per_request,
        codec_wall_share: codec_per_request
            .filter(|_| cpu_per_request > 0.0)
            .map(|codec| codec / cpu_per_request),
    })
}

/// The next request of a client: a random key, a put or a get.
fn next_request(workload: Workload, rng: &mut ChaCha8Rng) -> (i64, bool) {
    let key = rng.random_range(0..ITEMS as i64);
    (key, workload.is_write(rng))
}
