//! A server in its own process (so its CPU time is its own), and the grid of measured runs:
//! every codec x value kind x workload x client count against a fresh server per codec and
//! value kind.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use shapeshift_formats::registry::FormatKind;

use super::codec_cost::codec_cpu_ns_per_request;
use super::grpc_peer::GrpcCaller;
use super::load::{self, LoadConfig, LoadResult, OurProtocol, Target, WireProtocol, Workload};
use super::messages::{MessageCodec, ValueKind};
use super::thrift_peer::{ThriftProtocol, ThriftWire};

/// The line a server process prints on standard output once it listens.
pub const LISTENING: &str = "listening on";

/// A server process started by [`ServerProcess::spawn`]; it stops when its standard input
/// closes (on drop), and is killed if it has not stopped a few seconds later.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Runs `command` (which must print `listening on <addr>` as its first line and stop at the
    /// end of its standard input) and waits for its address.
    ///
    /// # Errors
    /// A message when the process cannot start or prints something else first.
    pub fn spawn(mut command: Command) -> Result<ServerProcess, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("start server: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let addr = match read {
            Ok(_) => line
                .trim()
                .strip_prefix(LISTENING)
                .and_then(|rest| rest.trim().parse().ok()),
            Err(_) => None,
        };
        let mut server = ServerProcess {
            child,
            stdin,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        match addr {
            Some(addr) => {
                server.addr = addr;
                Ok(server)
            }
            None => Err(format!(
                "the server printed {:?} instead of its address",
                line.trim()
            )),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server of the study: ours with one of our formats, or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerSpec {
    Ours(FormatKind),
    Thrift(ThriftWire),
    /// tonic's gRPC server (prost messages).
    Grpc,
}

impl ServerSpec {
    /// The server's name in the results.
    pub fn server_name(self) -> &'static str {
        match self {
            ServerSpec::Ours(_) => "shapeshift",
            ServerSpec::Thrift(_) => "apache-thrift",
            ServerSpec::Grpc => "tonic",
        }
    }

    /// The wire format's name in the results (Thrift's protocols under our formats' names).
    pub fn codec_name(self) -> &'static str {
        match self {
            ServerSpec::Ours(format) => format.name(),
            ServerSpec::Thrift(ThriftWire::Binary) => FormatKind::Thrift.name(),
            ServerSpec::Thrift(ThriftWire::Compact) => FormatKind::ThriftCompact.name(),
            ServerSpec::Grpc => FormatKind::Protobuf.name(),
        }
    }
}

/// What one grid run measures.
#[derive(Clone, Debug)]
pub struct GridConfig {
    pub servers: Vec<ServerSpec>,
    pub kinds: Vec<ValueKind>,
    pub workloads: Vec<Workload>,
    pub clients: Vec<usize>,
    /// Client counts for MediaContent values (fewer levels keep the study short).
    pub media_clients: Vec<usize>,
    pub max_requests: u64,
    pub max_duration: Duration,
    pub warmup_per_client: u64,
    pub seed: u64,
    /// Worker threads of the load generator's runtime.
    pub load_workers: usize,
}

/// One measured run of the grid.
#[derive(Clone, Debug, Serialize)]
pub struct RpcMeasurement {
    /// `"shapeshift"` (our server) or the peer's name.
    pub server: String,
    pub codec: String,
    pub values: &'static str,
    #[serde(flatten)]
    pub load: LoadResult,
    /// Our server: CPU time of its codec calls per request of this workload
    /// ([`codec_cpu_ns_per_request`]), and that over the server's CPU per request.
    pub codec_cpu_ns_per_request: Option<f64>,
    pub codec_share: Option<f64>,
}

/// Runs the grid: for each value kind and server a fresh server process from
/// `server_command(server, kind)`, then every workload and client count against it.
///
/// # Errors
/// A message when a server does not start or a run fails.
pub fn run_grid(
    config: &GridConfig,
    server_command: impl Fn(ServerSpec, ValueKind) -> Command,
    mut progress: impl FnMut(&str),
) -> Result<Vec<RpcMeasurement>, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.load_workers.max(1))
        .enable_all()
        .build()
        .map_err(|e| format!("load generator runtime: {e}"))?;
    let mut out = Vec::new();
    for &kind in &config.kinds {
        let clients = match kind {
            ValueKind::Tiny => &config.clients,
            ValueKind::Media => &config.media_clients,
        };
        for &spec in &config.servers {
            let server = ServerProcess::spawn(server_command(spec, kind))?;
            // The framed servers' protocol (none for gRPC, whose clients are tonic's).
            let (codec, protocol): (Option<MessageCodec>, Option<Arc<dyn WireProtocol>>) =
                match spec {
                    ServerSpec::Ours(format) => {
                        let codec = MessageCodec::new(format, kind)
                            .map_err(|e| format!("{format} messages: {e}"))?;
                        let protocol = Arc::new(OurProtocol::new(codec.clone(), kind));
                        (Some(codec), Some(protocol))
                    }
                    ServerSpec::Thrift(wire) => {
                        (None, Some(Arc::new(ThriftProtocol::new(wire, kind))))
                    }
                    ServerSpec::Grpc => (None, None),
                };
            let target = Target {
                addr: server.addr,
                pid: server.pid(),
                stats: codec.as_ref(),
            };
            let label = format!("{} {}", spec.server_name(), spec.codec_name());
            for &workload in &config.workloads {
                let codec_cpu = match &codec {
                    Some(codec) => {
                        let iterations = match kind {
                            ValueKind::Tiny => 3000,
                            ValueKind::Media => 1000,
                        };
                        Some(codec_cpu_ns_per_request(codec, kind, workload, iterations)?)
                    }
                    None => None,
                };
                for &count in clients {
                    let load_config = LoadConfig {
                        workload,
                        clients: count,
                        max_requests: config.max_requests,
                        max_duration: config.max_duration,
                        warmup_per_client: config.warmup_per_client,
                        seed: config.seed,
                    };
                    let result = match &protocol {
                        Some(protocol) => {
                            runtime.block_on(load::run(&target, Arc::clone(protocol), &load_config))
                        }
                        None => runtime.block_on(load::run_with(
                            &target,
                            || GrpcCaller::connect(target.addr, kind),
                            &load_config,
                        )),
                    }
                    .map_err(|e| {
                        format!("{label} {} {} x{count}: {e}", kind.name(), workload.name())
                    })?;
                    progress(&format!(
                        "{label} {} {} x{count}: {:.0} req/s, p99 {:.0} us, {:.0} ns CPU/req",
                        kind.name(),
                        workload.name(),
                        result.requests_per_s,
                        result.p99_us,
                        result.server_cpu_ns_per_request
                    ));
                    out.push(RpcMeasurement {
                        server: spec.server_name().into(),
                        codec: spec.codec_name().into(),
                        values: kind.name(),
                        codec_cpu_ns_per_request: codec_cpu,
                        codec_share: codec_cpu
                            .filter(|_| result.server_cpu_ns_per_request > 0.0)
                            .map(|ns| ns / result.server_cpu_ns_per_request),
                        load: result,
                    });
                }
            }
        }
    }
    Ok(out)
}
