//! `shapeshift bench rpc` and `shapeshift bench rpc-server`: the rpc study's native side
//! (the server and load generator live in `shapeshift_lab::rpc`).

use std::io::Read;
use std::process::Command;
use std::time::Duration;

use clap::Args;
use shapeshift_formats::registry::FormatKind;
use shapeshift_lab::rpc::grpc_peer::{self, GrpcServer};
use shapeshift_lab::rpc::load::Workload;
use shapeshift_lab::rpc::messages::{ValueKind, STUDY_FORMATS};
use shapeshift_lab::rpc::process::{run_grid, GridConfig, ServerSpec, LISTENING};
use shapeshift_lab::rpc::server::{RunningServer, ServerConfig};
use shapeshift_lab::rpc::thrift_peer::{self, ThriftWire};

#[derive(Args)]
pub struct RpcServerArgs {
    /// The wire format of our server's messages.
    #[arg(long, required_unless_present = "peer")]
    codec: Option<String>,
    /// A peer server instead of ours: thrift-server or thrift-server-compact (Apache
    /// Thrift's TServer, binary or compact protocol), or grpc-tonic (tonic's gRPC server);
    /// each serves both value kinds.
    #[arg(long, conflicts_with = "codec")]
    peer: Option<String>,
    /// What the store holds: tiny (16-byte strings) or media (MediaContent).
    #[arg(long, default_value = "tiny")]
    values: String,
    /// Port on 127.0.0.1 (0: any free port; the one taken is printed).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Tokio worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Largest request frame accepted, bytes.
    #[arg(long, default_value_t = shapeshift_lab::rpc::framing::DEFAULT_MAX_FRAME)]
    max_frame: usize,
    /// Most connections served at once (the Thrift peer: its worker threads).
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
}

#[derive(Args)]
pub struct RpcArgs {
    /// Codecs of our server to measure (default: every format of the study).
    #[arg(long = "codec")]
    codecs: Vec<String>,
    /// Peer servers to measure in the same run: thrift-server, thrift-server-compact,
    /// grpc-tonic (default: all three; `--peer none` for none).
    #[arg(long = "peer")]
    peers: Vec<String>,
    /// Value kinds (default: tiny and media).
    #[arg(long = "values")]
    values: Vec<String>,
    /// Workloads: read, write, mixed (default: all).
    #[arg(long = "workload")]
    workloads: Vec<String>,
    /// Concurrent clients for tiny values (default: 1, 4, 16, 64, 100).
    #[arg(long = "clients")]
    clients: Vec<usize>,
    /// Concurrent clients for MediaContent values (default: the tiny ones).
    #[arg(long = "media-clients")]
    media_clients: Vec<usize>,
    /// Requests per measured run (the run also stops at --duration-ms).
    #[arg(long, default_value_t = 20_000)]
    requests: u64,
    /// Time limit per measured run, milliseconds.
    #[arg(long, default_value_t = 1_000)]
    duration_ms: u64,
    /// Untimed requests per client before each run.
    #[arg(long, default_value_t = 20)]
    warmup: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads of each server.
    #[arg(long, default_value_t = 2)]
    server_workers: usize,
    /// Worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    load_workers: usize,
}

fn parse_all<T>(
    names: &[String],
    what: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, String> {
    names
        .iter()
        .map(|name| parse(name).ok_or_else(|| format!("unknown {what} '{name}'")))
        .collect()
}

fn peer_spec(name: &str) -> Option<ServerSpec> {
    if name == grpc_peer::PEER_NAME {
        Some(ServerSpec::Grpc)
    } else {
        ThriftWire::from_peer_name(name).map(ServerSpec::Thrift)
    }
}

/// Sockets, not pipes: a peer that closes its connection must be a write error
/// (`EPIPE`) to the task writing to it, not the end of the process. `main` restores SIGPIPE's
/// default for pipelines, and hyper writes with `writev`, which has no `MSG_NOSIGNAL`: a tonic
/// connection writing after its server had stopped killed the load generator.
fn ignore_sigpipe() {
    // SAFETY: called before this command starts any thread; SIG_IGN has no handler to race.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Serves until standard input ends.
///
/// # Errors
/// A message for an unknown codec or value kind, or when the port cannot be bound.
pub fn run_server(args: RpcServerArgs) -> Result<(), String> {
    ignore_sigpipe();
    let (addr, running) = match (&args.codec, &args.peer) {
        (_, Some(peer)) if peer == grpc_peer::PEER_NAME => {
            let server = GrpcServer::start(args.workers)?;
            (server.addr, Running::Grpc(server))
        }
        (_, Some(peer)) => {
            let wire =
                ThriftWire::from_peer_name(peer).ok_or_else(|| format!("unknown peer '{peer}'"))?;
            (
                thrift_peer::start_server(wire, args.max_connections)?,
                Running::Thrift,
            )
        }
        (Some(codec), None) => {
            let format =
                FormatKind::from_name(codec).ok_or_else(|| format!("unknown codec '{codec}'"))?;
            let kind = ValueKind::from_name(&args.values)
                .ok_or_else(|| format!("unknown value kind '{}'", args.values))?;
            let mut config = ServerConfig::new(format, kind);
            config.workers = args.workers;
            config.max_frame = args.max_frame;
            config.max_connections = args.max_connections;
            let server =
                RunningServer::start(config, args.port).map_err(|e| format!("rpc server: {e}"))?;
            (server.addr, Running::Ours(server))
        }
        (None, None) => return Err("give --codec or --peer".into()),
    };
    println!("{LISTENING} {addr}");
    // The parent closes our standard input to stop us (Thrift's server stops with the process).
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    match running {
        Running::Ours(server) => server.stop(),
        Running::Grpc(server) => server.stop(),
        Running::Thrift => {}
    }
    Ok(())
}

/// The server a `bench rpc-server` process runs.
enum Running {
    Ours(RunningServer),
    Grpc(GrpcServer),
    /// Thrift's server stops with the process.
    Thrift,
}

/// Runs the grid against server processes of this executable; JSON on standard output.
///
/// # Errors
/// A message for an unknown name, or when a server or run fails.
pub fn run(args: RpcArgs) -> Result<(), String> {
    ignore_sigpipe();
    let formats = if args.codecs.is_empty() {
        STUDY_FORMATS.to_vec()
    } else {
        parse_all(&args.codecs, "codec", FormatKind::from_name)?
    };
    let peers = match args.peers.as_slice() {
        [] => vec![
            ServerSpec::Thrift(ThriftWire::Binary),
            ServerSpec::Thrift(ThriftWire::Compact),
            ServerSpec::Grpc,
        ],
        [none] if none == "none" => Vec::new(),
        names => parse_all(names, "peer", peer_spec)?,
    };
    let mut servers: Vec<ServerSpec> = formats.into_iter().map(ServerSpec::Ours).collect();
    servers.extend(peers);
    let kinds = if args.values.is_empty() {
        ValueKind::ALL.to_vec()
    } else {
        parse_all(&args.values, "value kind", ValueKind::from_name)?
    };
    let workloads = if args.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        parse_all(&args.workloads, "workload", Workload::from_name)?
    };
    let clients = if args.clients.is_empty() {
        vec![1, 4, 16, 64, 100]
    } else {
        args.clients
    };
    let media_clients = if args.media_clients.is_empty() {
        clients.clone()
    } else {
        args.media_clients
    };
    let config = GridConfig {
        servers,
        kinds,
        workloads,
        clients,
        media_clients,
        max_requests: args.requests.max(1),
        max_duration: Duration::from_millis(args.duration_ms.max(1)),
        warmup_per_client: args.warmup,
        seed: args.seed,
        load_workers: args.load_workers,
    };
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let server_workers = args.server_workers.to_string();
    let results = run_grid(
        &config,
        |spec, kind| {
            let mut command = Command::new(&exe);
            command.args([
                "bench",
                "rpc-server",
                "--values",
                kind.name(),
                "--workers",
                &server_workers,
            ]);
            match spec {
                ServerSpec::Ours(format) => command.args(["--codec", format.name()]),
                ServerSpec::Thrift(wire) => command.args(["--peer", wire.peer_name()]),
                ServerSpec::Grpc => command.args(["--peer", grpc_peer::PEER_NAME]),
            };
            command
        },
        |message| eprintln!("bench rpc: {message}"),
    )?;
    let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
    println!("{json}");
    Ok(())
}
